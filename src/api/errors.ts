/**
 * API errors. Handlers throw `apiError(code, id, message)`: a ConnectError carrying one
 * `zitadel.v1.ErrorDetail` with a stable id, which every protocol transports (Connect JSON,
 * gRPC status details, REST `details`). Anything else thrown is turned into a static Internal
 * (or Unavailable, when the database cannot be reached, as store/outage.ts tells, or the
 * password-hashing queue is full; ResourceExhausted when the caller's address has too many failed
 * secrets, domain/secret-tries.ts) by `errorInterceptor`, the one place where unexpected API errors
 * are logged; the original stays only as `cause`.
 */
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { ErrorDetailSchema, type ErrorDetail } from '../../gen/zitadel/message_pb.js';
import { HashingBusy } from '../domain/kernel/crypto.ts';
import { Refusal } from '../domain/kernel/refusals.ts';
import { refusalError } from './domain-errors.ts';
import { Throttled } from '../domain/sign-in/failure-throttle.ts';
import { isDatabaseUnavailable, isDataException } from '../store/outage.ts';
import type { ApiLogger } from './logger.ts';

export function apiError(code: Code, id: string, message: string, metadata?: Record<string, string>): ConnectError {
  return new ConnectError(message, code, metadata, [{ desc: ErrorDetailSchema, value: { id, message } }]);
}

/** The ErrorDetail of an error made by `apiError` (or received from a peer), if any. */
export function errorDetailOf(error: ConnectError): ErrorDetail | undefined {
  return error.findDetails(ErrorDetailSchema)[0];
}

/** A client-safe error for anything thrown that is not a ConnectError. */
export function publicError(cause: unknown): ConnectError {
  const refused = refusalError(cause);
  if (refused !== undefined) return refused;
  if (cause instanceof Throttled) {
    // Too many failed secrets from the caller's address (domain/secret-tries.ts); REST answers 429.
    const message = 'too many failed attempts from this address; try again later';
    return new ConnectError(message, Code.ResourceExhausted, { 'retry-after': String(cause.retryAfterSeconds) }, [
      { desc: ErrorDetailSchema, value: { id: 'API-Throttled', message } },
    ], cause);
  }
  if (cause instanceof HashingBusy) {
    // docs/security.md 10.11: a full hashing queue is 503 with Retry-After (REST forwards the header).
    const message = 'the server is busy; try again shortly';
    return new ConnectError(message, Code.Unavailable, { 'retry-after': String(cause.retryAfterSeconds) }, [
      { desc: ErrorDetailSchema, value: { id: 'API-Busy', message } },
    ], cause);
  }
  if (isDatabaseUnavailable(cause)) {
    return new ConnectError('service temporarily unavailable', Code.Unavailable, undefined, [
      { desc: ErrorDetailSchema, value: { id: 'API-Unavailable', message: 'service temporarily unavailable' } },
    ], cause);
  }
  if (isDataException(cause)) {
    return new ConnectError('a value in the request cannot be processed', Code.InvalidArgument, undefined, [
      { desc: ErrorDetailSchema, value: { id: 'API-InvalidValue', message: 'a value in the request cannot be processed' } },
    ], cause);
  }
  return new ConnectError('internal error', Code.Internal, undefined, [
    { desc: ErrorDetailSchema, value: { id: 'API-Internal', message: 'internal error' } },
  ], cause);
}

const SERVER_CODES = new Set([Code.Internal, Code.Unknown, Code.DataLoss, Code.Unavailable]);

/**
 * The outermost interceptor: ConnectErrors pass (server-side ones are logged as errors, the rest at
 * debug level); anything else becomes `publicError(cause)` and is logged with its stack.
 */
export function errorInterceptor(log: ApiLogger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (thrown) {
      const procedure = `${req.service.typeName}/${req.method.name}`;
      if (thrown instanceof ConnectError) {
        if (SERVER_CODES.has(thrown.code)) log.error({ err: thrown, cause: thrown.cause, procedure }, 'api call failed');
        else log.debug({ code: Code[thrown.code], message: thrown.rawMessage, procedure }, 'api call rejected');
        throw thrown;
      }
      const error = publicError(thrown);
      if (thrown instanceof Refusal) {
        log.debug({ code: Code[error.code], message: error.rawMessage, procedure }, 'api call refused');
        throw error;
      }
      // A full hashing queue is load, not a fault: one warning line, no stack; a throttled address is a client's doing.
      if (thrown instanceof HashingBusy) log.warn({ procedure }, 'api call refused: password hashing is saturated');
      else if (thrown instanceof Throttled) log.info({ procedure }, 'api call refused: too many failed attempts from the address');
      else log.error({ err: thrown, procedure, code: Code[error.code] }, 'api call failed unexpectedly');
      throw error;
    }
  };
}
