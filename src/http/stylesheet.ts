/**
 * The stylesheet of every browser page (the login UI's and the error page), read once: served by the
 * login UI at /ui/login/assets/gatehouse.css and linked with a content hash in the query, so browsers
 * may cache it for a year and still see every change.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Request, Response } from 'express';
import { LOGIN_UI_PATH } from './paths.ts';

export const STYLESHEET_PATH = `${LOGIN_UI_PATH}/assets/gatehouse.css`;

const css = readFileSync(new URL('./assets/gatehouse.css', import.meta.url));
const version = createHash('sha256').update(css).digest('hex').slice(0, 12);

/** What pages link: the path plus the content hash. */
export const STYLESHEET_HREF = `${STYLESHEET_PATH}?v=${version}`;

export function serveStylesheet(_req: Request, res: Response): void {
  res
    .status(200)
    .set('Content-Type', 'text/css; charset=utf-8')
    .set('Cache-Control', 'public, max-age=31536000, immutable')
    .set('X-Content-Type-Options', 'nosniff')
    .end(css);
}
