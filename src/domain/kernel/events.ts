/**
 * The event log. Every change appends one event (event-types.ts) in the same transaction as the change; the event's
 * global sequence and time are what the API reports as `details` (docs/events.md), and a new
 * sequence tells every server process that its caches are stale (the change watcher in
 * server/jobs.ts).
 */
import type { DB } from '../../store/database.ts';
import { countChangesAbove, insertEvent, maxChangeSequence } from '../../store/events.ts';
import { EVENT_AGGREGATES, type EventPayloads, type EventType } from './event-types.ts';

export interface ChangeDetails {
  sequence: string;
  changeDate: Date;
  resourceOwner: string;
}

/** An event to append: one of the event types (event-types.ts) with its payload; the aggregate follows from the type. */
export type EventInput<T extends EventType = EventType> = {
  instanceId: string;
  aggregateId: string;
  resourceOwner: string;
  type: T;
  creator?: string | undefined;
  /** A record only (a token exchange): it changes no cached state, so caches are kept. */
  audit?: boolean;
} & (Record<string, never> extends EventPayloads[T] ? { payload?: EventPayloads[T] } : { payload: EventPayloads[T] });

export async function appendEvent<T extends EventType>(db: DB, event: EventInput<T>): Promise<ChangeDetails> {
  const row = await insertEvent(db, {
    instance_id: event.instanceId,
    aggregate_type: EVENT_AGGREGATES[event.type],
    aggregate_id: event.aggregateId,
    resource_owner: event.resourceOwner,
    event_type: event.type,
    creator: event.creator ?? null,
    payload: JSON.stringify(event.payload ?? {}),
    ...(event.audit ? { audit: true } : {}),
  });
  return { sequence: row.sequence, changeDate: row.created_at, resourceOwner: event.resourceOwner };
}

/** The last event that changed state (audit records excluded; events_changes_idx answers it). */
export async function latestSequence(db: DB): Promise<string> {
  return (await maxChangeSequence(db)) ?? '0';
}

/** How far back a change that commits after later ones is still noticed (sequence numbers). */
const LATE_COMMIT_WINDOW = 1000n;

/**
 * What the change watcher compares: the last sequence, and how many changes the last sequence
 * numbers hold. Sequence numbers are taken when a transaction inserts, not when it commits, so a
 * change may become visible below a sequence already seen; the count still moves then.
 */
export async function changeMark(db: DB): Promise<string> {
  const last = await latestSequence(db);
  const recent = await countChangesAbove(db, (BigInt(last) - LATE_COMMIT_WINDOW).toString());
  return `${last}/${recent}`;
}
