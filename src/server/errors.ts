/**
 * The one renderer of the OAuth error world (STYLE §4): OAuth errors as RFC 6749 JSON, anything
 * unexpected as server_error (or temporarily_unavailable while the database is down, as
 * store/outage.ts tells, or the hashing queue is full, 429 for a throttled address), logged with its cause; only static messages reach
 * the client.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { HashingBusy } from '../domain/crypto.ts';
import { Throttled } from '../domain/failure-throttle.ts';
import { InvalidClient, OAuthError, RetryLater, ServerError, TemporarilyUnavailable, TooManyFailures } from '../oauth/errors.ts';
import { isDatabaseUnavailable, isDataException } from '../store/outage.ts';

export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  // SPEC 10.11: a full hashing queue and a throttled address are answers, never a 500
  if (error instanceof HashingBusy) return new TemporarilyUnavailable(error.message, error.retryAfterSeconds);
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

export function oauthErrorRenderer(log: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const oauth = toOAuthError(error);
    if (oauth.status >= 500) log.error({ err: error, path: req.path }, 'request failed');
    else log.debug({ error: oauth.error, detail: oauth.detail ?? oauth.description, path: req.path }, 'request refused');
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(oauth.status).set('Cache-Control', 'no-store').set('Pragma', 'no-cache');
    if (oauth instanceof InvalidClient && oauth.basic) res.set('WWW-Authenticate', 'Basic realm="gatehouse", charset="UTF-8"');
    if (oauth instanceof RetryLater) res.set('Retry-After', String(oauth.retryAfterSeconds));
    res.json(oauth.body());
  };
}
