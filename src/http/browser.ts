/**
 * The browser cookie that ties authorization requests and sessions to one browser (HttpOnly,
 * SameSite=Lax so that top-level redirects back from clients carry it, Secure under https).
 *
 * docs/security.md 10.7: only values this server issued count (domain/sessions.ts); any other value
 * is ignored as if the browser sent none, and replaced where a cookie is needed. Under https the
 * cookie is `__Host-gh_browser` (Path=/, Secure, no Domain), which a sibling subdomain or a
 * plain-http page cannot set, so nobody but this origin can plant one.
 */
import type { Request, Response } from 'express';
import { servesHttps } from '../config/index.ts';
import type { Gatehouse } from '../context.ts';
import { BROWSER_COOKIE, browserHash, isIssuedBrowserId, newBrowserId } from '../domain/sign-in/sessions.ts';

const ONE_YEAR_SECONDS = 365 * 86400;

function secure(gh: Gatehouse): boolean {
  return servesHttps(gh.config);
}

/** The cookie's name: `__Host-` prefixed under https (RFC 6265bis §4.1.3.2). */
export function browserCookieName(gh: Gatehouse): string {
  return secure(gh) ? `__Host-${BROWSER_COOKIE}` : BROWSER_COOKIE;
}

/** The first cookie of that name in the request, undecoded (our values are URL-safe). */
function cookieNamed(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The browser's cookie value, if it sent one this server issued. */
export function browserCookie(gh: Gatehouse, req: Request): string | undefined {
  const value = cookieNamed(req, browserCookieName(gh));
  return value !== undefined && isIssuedBrowserId(gh.masterKey, value) ? value : undefined;
}

/** The browser hash of the request's issued cookie, if any. */
export function browserHashOf(gh: Gatehouse, req: Request): string | undefined {
  const value = browserCookie(gh, req);
  return value === undefined ? undefined : browserHash(value);
}

function setBrowserCookie(gh: Gatehouse, res: Response, value: string): void {
  const attributes = `Path=/; Max-Age=${ONE_YEAR_SECONDS}; HttpOnly; SameSite=Lax${secure(gh) ? '; Secure' : ''}`;
  res.append('Set-Cookie', `${browserCookieName(gh)}=${value}; ${attributes}`);
  res.locals['browserCookie'] = value;
}

/**
 * The browser's cookie value, issuing one when it has none (or one we did not issue). Within one
 * response the value issued first is reused, so a page never sets two different cookies.
 */
export function browserValueOf(gh: Gatehouse, req: Request, res: Response): string {
  const issued: unknown = res.locals['browserCookie'];
  if (typeof issued === 'string') return issued;
  const value = browserCookie(gh, req);
  if (value !== undefined) return value;
  const fresh = newBrowserId(gh.masterKey);
  setBrowserCookie(gh, res, fresh);
  return fresh;
}

/** The browser hash of this request, setting a new cookie when the browser has none. */
export function browserOf(gh: Gatehouse, req: Request, res: Response): string {
  return browserHash(browserValueOf(gh, req, res));
}

/**
 * A sign-in completed (docs/security.md 10.7): the browser gets a fresh cookie and everything of its
 * old one (sessions, pending authorization requests) moves there. The caller moves them to `hash`
 * (domain/sessions.ts moveBrowser) and, once that has committed, sets the fresh cookie with `issue`
 * (login/finish.ts).
 */
export function renewedBrowser(gh: Gatehouse): { hash: string; issue: (res: Response) => void } {
  const value = newBrowserId(gh.masterKey);
  return { hash: browserHash(value), issue: (res) => setBrowserCookie(gh, res, value) };
}
