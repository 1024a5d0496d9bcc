/**
 * The one renderer of the OAuth error world (docs/errors.md): OAuth errors as RFC 6749 JSON, anything
 * unexpected classified by http/errors.ts `toOAuthError` (server_error, or temporarily_unavailable
 * while the database is down or the hashing queue is full, 429 for a throttled address), logged
 * with its cause; only static messages reach the client. Express's error handler and the endpoints
 * the dispatcher serves without Express (server/dispatch.ts) both answer through `renderOAuthError`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { logAnswer, RetryLater, toOAuthError } from '../http/errors.ts';
import { forbidCaching, sendJson } from '../http/node-types.ts';
import { InvalidClient } from '../oauth/errors.ts';

export function renderOAuthError(log: Logger, error: unknown, req: IncomingMessage, res: ServerResponse): void {
  const oauth = toOAuthError(error);
  const path = (req.url ?? '/').split('?', 1)[0];
  logAnswer(log, oauth, error, { path }, 'request');
  if (res.headersSent) {
    res.end();
    return;
  }
  forbidCaching(res);
  if (oauth instanceof InvalidClient && oauth.basic) res.setHeader('WWW-Authenticate', 'Basic realm="gatehouse", charset="UTF-8"');
  if (oauth instanceof RetryLater) res.setHeader('Retry-After', String(oauth.retryAfterSeconds));
  sendJson(res, oauth.status, oauth.body());
}

export function oauthErrorRenderer(log: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => renderOAuthError(log, error, req, res);
}
