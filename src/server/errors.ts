/**
 * The one renderer of the OAuth error world (STYLE §4): OAuth errors as RFC 6749 JSON, anything
 * unexpected classified by http/errors.ts `toOAuthError` (server_error, or temporarily_unavailable
 * while the database is down or the hashing queue is full, 429 for a throttled address), logged
 * with its cause; only static messages reach the client.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { RetryLater, toOAuthError } from '../http/errors.ts';
import { InvalidClient } from '../oauth/errors.ts';

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
