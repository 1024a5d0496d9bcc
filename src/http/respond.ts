/**
 * How browser pages (the login UI's and the error page) are answered: security headers on every
 * page, HTML as UTF-8, never cached. The UI's one cookie is the browser cookie (http/browser.ts).
 */
import type { Response } from 'express';
import type { Html } from './html.ts';

export interface PageOptions {
  /**
   * The page runs scripts of this origin and they fetch from it (the passkey pages' one script,
   * login/passkey-page.ts); other pages run none.
   */
  scripts?: boolean;
}

/**
 * `form-action` also governs the redirects that follow a form submission (Chromium enforces it;
 * w3c/webappsec-csp#8): a sign-in POST answers 303 to the callback, which redirects to the client.
 * So a page whose form finishes a sign-in lists the client's redirect target besides 'self'.
 */
export function contentSecurityPolicy(formTargets: readonly string[] = [], options: PageOptions = {}): string {
  const formAction = ["'self'", ...formTargets].join(' ');
  const scripts = options.scripts === true ? "; script-src 'self'; connect-src 'self'" : '';
  return `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'${scripts}`;
}

/** The CSP source that admits redirects to `redirectUri`: its origin, or its scheme for app URIs. */
export function formTargetOf(redirectUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // host-source grammar (CSP3 §2.3.1): no IPv6 literals, no characters that end a directive
    return /^https?:\/\/[A-Za-z0-9.-]+(?::\d+)?$/.test(url.origin) ? url.origin : undefined;
  }
  return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : undefined;
}

export function securityHeaders(res: Response, formTargets: readonly string[] = [], options: PageOptions = {}): void {
  res
    .set('Content-Security-Policy', contentSecurityPolicy(formTargets, options))
    // docs/security.md 10.14: for browsers that predate CSP's frame-ancestors
    .set('X-Frame-Options', 'DENY')
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .set('Cache-Control', 'no-store')
    .set('Pragma', 'no-cache');
}

export function sendPage(res: Response, status: number, body: Html, formTargets: readonly string[] = []): void {
  securityHeaders(res, formTargets);
  res.status(status).type('text/html; charset=utf-8').send(body.value);
}

/** A 303 See Other (a POST answered by a GET elsewhere), with the same headers as a page. */
export function seeOther(res: Response, location: string): void {
  securityHeaders(res);
  res.redirect(303, location);
}
