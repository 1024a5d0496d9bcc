/** `details` of the v2 and v2beta resource services, from the event a change appended (docs/events.md). */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { DetailsSchema, ListDetailsSchema } from '../../../gen/zitadel/object/v2/object_pb.js';
import type { ChangeDetails } from '../../domain/kernel/events.ts';

export function changeDetails(change: ChangeDetails, createdAt?: Date): MessageInitShape<typeof DetailsSchema> {
  return {
    sequence: BigInt(change.sequence),
    changeDate: timestampFromDate(change.changeDate),
    resourceOwner: change.resourceOwner,
    ...(createdAt === undefined ? {} : { creationDate: timestampFromDate(createdAt) }),
  };
}

/** Details of an object read, from its row: the change sequence is not kept per row, so it is 0. */
export function rowDetails(row: { created_at: Date; changed_at: Date }, resourceOwner: string): MessageInitShape<typeof DetailsSchema> {
  return { changeDate: timestampFromDate(row.changed_at), creationDate: timestampFromDate(row.created_at), resourceOwner };
}

export function listDetails(totalResult: number, processedSequence: string): MessageInitShape<typeof ListDetailsSchema> {
  return { totalResult: BigInt(totalResult), processedSequence: BigInt(processedSequence), timestamp: timestampFromDate(new Date()) };
}
