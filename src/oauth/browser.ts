/**
 * The browser cookie that ties authorization requests and sessions to one browser (HttpOnly,
 * SameSite=Lax so that top-level redirects back from clients carry it, Secure under https).
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { BROWSER_COOKIE, browserHash, newBrowserId } from '../domain/sessions.ts';

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;
const ONE_YEAR_SECONDS = 365 * 86400;

/** The browser's cookie value, if it sent a well-formed one. */
export function browserCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === BROWSER_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return COOKIE_VALUE.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** The browser hash of this request, setting a new cookie when the browser has none. */
export function browserOf(gh: Gatehouse, req: Request, res: Response): string {
  let value = browserCookie(req);
  if (!value) {
    value = newBrowserId();
    const secure = gh.config.externalUrl.startsWith('https:') ? '; Secure' : '';
    res.append('Set-Cookie', `${BROWSER_COOKIE}=${value}; Path=/; Max-Age=${ONE_YEAR_SECONDS}; HttpOnly; SameSite=Lax${secure}`);
  }
  return browserHash(value);
}
