/**
 * The default icon of every browser page (the login UI's and the error page), served by the login
 * UI at /ui/login/assets/favicon.svg and linked with a content hash in the query, so browsers may
 * cache it for a year and still see a change. Pages take the href from `page()` (http/page.ts),
 * the one place where an organization's own icon can stand in for it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Request, Response } from 'express';
import { LOGIN_UI_PATH } from './paths.ts';

export const FAVICON_PATH = `${LOGIN_UI_PATH}/assets/favicon.svg`;

const icon = readFileSync(new URL('./assets/favicon.svg', import.meta.url));
const version = createHash('sha256').update(icon).digest('hex').slice(0, 12);

/** What pages link: the path plus the content hash. */
export const DEFAULT_FAVICON_HREF = `${FAVICON_PATH}?v=${version}`;

export function serveFavicon(_req: Request, res: Response): void {
  res
    .status(200)
    .set('Content-Type', 'image/svg+xml')
    .set('Cache-Control', 'public, max-age=31536000, immutable')
    .set('X-Content-Type-Options', 'nosniff')
    .end(icon);
}
