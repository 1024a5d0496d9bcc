/**
 * CSRF protection of every login form (docs/security.md 10.7): the token is an HMAC of the browser
 * cookie under a key derived from the master key, carried in a hidden field. The cookie is HttpOnly
 * and issued by the server, so another site can neither read the token nor choose the cookie it is
 * bound to; a planted cookie or a field copied from another browser does not match. No server state,
 * so several processes behave as one (docs/operations.md#several-processes-on-one-database).
 */
import { createHmac } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { safeEqual, type MasterKey } from '../domain/kernel/crypto.ts';
import { browserCookie, browserValueOf } from '../http/browser.ts';
import { showErrorPage } from '../http/error-page.ts';
import type { Messages } from './messages.ts';

export const CSRF_FIELD = 'csrfToken';

function tokenOf(masterKey: MasterKey, browserValue: string): string {
  return createHmac('sha256', masterKey.derive('login csrf')).update(browserValue).digest('base64url');
}

/**
 * The token for a form on this page, bound to the browser's cookie (issued now when the browser has
 * none). The same for every page of the browser, so forms open in other tabs stay valid until the
 * next completed sign-in gives the browser a new cookie.
 */
export function csrfTokenFor(gh: Gatehouse, req: Request, res: Response): string {
  return tokenOf(gh.masterKey, browserValueOf(gh, req, res));
}

/** Whether a submitted form carries the token of its browser's (issued) cookie. */
export function csrfValid(gh: Gatehouse, req: Request, form: ReadonlyMap<string, string>): boolean {
  const cookie = browserCookie(gh, req);
  const field = form.get(CSRF_FIELD);
  return cookie !== undefined && field !== undefined && safeEqual(tokenOf(gh.masterKey, cookie), field);
}

/** A form whose CSRF token is missing or does not match its cookie: 403, nothing done. */
export function refuseForgedForm(res: Response, m: Messages): void {
  showErrorPage(res, m, { status: 403, error: 'invalid_request', description: 'the form token is missing or does not match', sentence: m.csrfFailed });
}
