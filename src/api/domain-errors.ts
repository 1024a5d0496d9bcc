/**
 * The one table from the domain's refusals to API errors (domain/kernel/refusals.ts), consulted by
 * the error interceptor for everything a handler lets through: handlers call the wings and need not
 * translate what they refuse.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '../../gen/zitadel/message_pb.js';
import { Refusal, type RefusalKind } from '../domain/kernel/refusals.ts';

const CODES: Record<RefusalKind, Code> = {
  invalid: Code.InvalidArgument,
  exists: Code.AlreadyExists,
  not_found: Code.NotFound,
  conflict: Code.FailedPrecondition,
  exhausted: Code.ResourceExhausted,
};

/** The API error of a domain refusal; undefined for anything else. */
export function refusalError(error: unknown): ConnectError | undefined {
  if (!(error instanceof Refusal)) return undefined;
  const metadata = error.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(error.retryAfterSeconds) };
  return new ConnectError(error.message, CODES[error.kind], metadata, [{ desc: ErrorDetailSchema, value: { id: error.id, message: error.message } }], error);
}
