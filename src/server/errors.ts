/**
 * The one renderer of the OAuth error world (STYLE §4): OAuth errors as RFC 6749 JSON, anything
 * unexpected as server_error (or temporarily_unavailable while the database is down), logged with
 * its cause; only static messages reach the client.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { OAuthError, ServerError, TemporarilyUnavailable } from '../oauth/errors.ts';
import { InvalidClient } from '../oauth/errors.ts';

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006']);

/** Whether an error means the database cannot be reached (so: 503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  // Duck-typed, not instanceof: errors from Node's internals may come from another realm.
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Query read timeout/i.test(message);
}

export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  if (isDatabaseUnavailable(error)) return new TemporarilyUnavailable(error instanceof Error ? error.message : 'database unavailable');
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
    if (oauth.status === 503) res.set('Retry-After', '5');
    res.json(oauth.body());
  };
}
