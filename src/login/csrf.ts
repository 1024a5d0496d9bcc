/**
 * CSRF protection of every login form by double submit: a random token in a cookie that only our
 * pages can read back into their forms (HttpOnly, SameSite=Strict, path /ui/login), and the same
 * token in a hidden field. A POST whose field differs from its cookie was not sent by our page.
 * No server state, so several processes behave as one (SPEC §9).
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { safeEqual } from '../domain/crypto.ts';
import { randomToken } from '../domain/ids.ts';
import { UI_PATH } from './assets.ts';
import { cookieValue, setCookie } from './respond.ts';

export const CSRF_COOKIE = 'gh_csrf';
export const CSRF_FIELD = 'csrfToken';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function csrfCookie(req: Request): string | undefined {
  const value = cookieValue(req, CSRF_COOKIE);
  return value !== undefined && TOKEN.test(value) ? value : undefined;
}

/**
 * The token for a form on this page: the browser's, or a new one set as its cookie. Reusing it keeps
 * forms open in other tabs valid.
 */
export function csrfTokenFor(gh: Gatehouse, req: Request, res: Response): string {
  const existing = csrfCookie(req);
  if (existing) return existing;
  const token = randomToken(32);
  setCookie(res, CSRF_COOKIE, token, { path: UI_PATH, sameSite: 'Strict', secure: gh.config.externalUrl.startsWith('https:') });
  return token;
}

/** Whether a submitted form carries the token of its browser's cookie. */
export function csrfValid(req: Request, form: ReadonlyMap<string, string>): boolean {
  const cookie = csrfCookie(req);
  const field = form.get(CSRF_FIELD);
  return cookie !== undefined && field !== undefined && safeEqual(cookie, field);
}
