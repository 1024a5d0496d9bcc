/**
 * The base of the one OAuth error hierarchy (RFC 6749 §5.2, RFC 6750 §3.1), the errors that code
 * below the endpoints raises (form parsing, the shared logout), and the classifier that turns
 * anything else into one of them. `description` is what the client sees; `detail` stays in logs and
 * tests. The OAuth endpoints' own errors (invalid_client, invalid_grant, ...) extend the base in
 * oauth/errors.ts; both renderers, the OAuth endpoints' JSON (server/errors.ts) and the login UI's
 * error page (login/routes.ts), classify with `toOAuthError`, so one failure gets one answer.
 */
import type { Logger } from 'pino';
import { HashingBusy } from '../domain/kernel/crypto.ts';
import { Throttled } from '../domain/sign-in/failure-throttle.ts';
import { isDatabaseUnavailable, isDataException } from '../store/outage.ts';

export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  readonly description: string;
  readonly detail: string | undefined;

  constructor(error: string, status: number, description: string, detail?: string) {
    super(detail ?? description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = status;
    this.description = description;
    this.detail = detail;
  }

  body(): Record<string, string> {
    return { error: this.error, error_description: publicText(this.description) };
  }

  /** What an operator should see of this refusal at `info` (a client that failed to authenticate); undefined: debug only. */
  notable(): Record<string, unknown> | undefined {
    return undefined;
  }
}

/**
 * RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. Descriptions may quote
 * what the client sent (a token type, an audience) or a library's words: quotes become apostrophes,
 * backslashes slashes, anything else outside the set '?', and it is cut short.
 */
function publicText(text: string): string {
  const safe = text.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
  return safe.length > 300 ? `${safe.slice(0, 297)}...` : safe;
}

export class InvalidRequest extends OAuthError {
  constructor(description: string, status = 400) {
    super('invalid_request', status, description);
  }
}

export class ServerError extends OAuthError {
  constructor(detail: string) {
    super('server_error', 500, 'unexpected server error', detail);
  }
}

/** An error the client should retry after a while: the answer carries Retry-After (RFC 9110 §10.2.3). */
export class RetryLater extends OAuthError {
  readonly retryAfterSeconds: number;
  constructor(error: string, status: number, description: string, detail: string, retryAfterSeconds: number) {
    super(error, status, description, detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The database is unreachable, or the secret-hashing queue is full (docs/security.md 10.11): 503. */
export class TemporarilyUnavailable extends RetryLater {
  constructor(detail: string, retryAfterSeconds = 5) {
    super('temporarily_unavailable', 503, 'service temporarily unavailable', detail, retryAfterSeconds);
  }
}

/** The password-hashing queue is full: load, not a fault. */
export class Saturated extends TemporarilyUnavailable {}

/**
 * docs/security.md 10.11: too many failed client authentications from this address. 429 with
 * temporarily_unavailable, the registered code for "try again later": invalid_client would tell a
 * client whose credentials are right that they are wrong, and slow_down belongs to device-code
 * polling (RFC 8628 §3.5).
 */
export class TooManyFailures extends RetryLater {
  constructor(retryAfterSeconds: number) {
    super('temporarily_unavailable', 429, 'too many failed client authentications from this address; try again later', 'address throttled', retryAfterSeconds);
  }
}

/**
 * Any error as an OAuth error: OAuth errors as they are, anything unexpected as server_error (or
 * temporarily_unavailable while the database is down, as store/outage.ts tells, or the hashing
 * queue is full, 429 for a throttled address), the original kept as the detail for the log.
 */
export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  // docs/security.md 10.11: a full hashing queue and a throttled address are answers, never a 500
  if (error instanceof HashingBusy) return new Saturated(error.message, error.retryAfterSeconds);
  if (error instanceof Throttled) return new TooManyFailures(error.retryAfterSeconds);
  if (isDatabaseUnavailable(error)) return new TemporarilyUnavailable(error instanceof Error ? error.message : 'database unavailable');
  if (isDataException(error)) return new OAuthError('invalid_request', 400, 'a request parameter has a value that cannot be processed');
  // express.raw / body parsing errors carry a 4xx status of their own
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new OAuthError('invalid_request', status, 'request is malformed');
  }
  return new ServerError(error instanceof Error ? error.message : String(error));
}

/**
 * Logs an answer as what it is, for both renderers: a full hashing queue is load (one warning, no
 * stack), a 5xx a fault (with its cause), a refused client authentication something an operator
 * looks for (info, with the client id and the cause), anything else the client's doing (debug).
 */
export function logAnswer(log: Logger, oauth: OAuthError, error: unknown, where: Record<string, unknown>, what: string): void {
  if (oauth instanceof Saturated) log.warn(where, `${what} refused: password hashing is saturated`);
  else if (oauth.status >= 500) log.error({ err: error, ...where }, `${what} failed`);
  else if (oauth.notable() !== undefined) log.info({ error: oauth.error, ...oauth.notable(), cause: oauth.detail ?? oauth.description, ...where }, `${what} refused`);
  else log.debug({ error: oauth.error, detail: oauth.detail ?? oauth.description, ...where }, `${what} refused`);
}
