/**
 * Delivering an authorization response to the client (OAuth 2.0 Multiple Response Type Encoding
 * Practices §2, Form Post Response Mode §2): in the query, in the fragment, or as an auto-submitted
 * form (with a button for browsers without JavaScript).
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { forbidCaching } from '../http/node-types.ts';
import { formTargetOf } from '../http/respond.ts';
import type { ResponseMode } from '../oidc/vocabulary.ts';

export type ResponseParams = Record<string, string | undefined>;

function encode(params: ResponseParams): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, value);
  return search.toString();
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const AUTO_SUBMIT = 'document.forms[0].submit();';
const AUTO_SUBMIT_HASH = createHash('sha256').update(AUTO_SUBMIT).digest('base64');

export function deliver(res: Response, redirectUri: string, mode: ResponseMode, params: ResponseParams): void {
  forbidCaching(res);
  if (mode === 'form_post') {
    // A native app's private-use scheme has no origin ("null"): the source is its scheme.
    const target = formTargetOf(redirectUri) ?? new URL(redirectUri).origin;
    const fields = Object.entries(params)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`)
      .join('');
    res
      .status(200)
      .set('Content-Security-Policy', `default-src 'none'; script-src 'sha256-${AUTO_SUBMIT_HASH}'; form-action ${target}; frame-ancestors 'none'; base-uri 'none'`)
      .set('Referrer-Policy', 'no-referrer')
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Continue</title></head><body>` +
          `<form method="post" action="${escapeHtml(redirectUri)}">${fields}<noscript><button type="submit">Continue</button></noscript></form>` +
          `<script>${AUTO_SUBMIT}</script></body></html>`,
      );
    return;
  }
  const url = new URL(redirectUri);
  if (mode === 'fragment') {
    url.hash = encode(params);
  } else {
    for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value);
  }
  res.redirect(303, url.toString());
}
