/**
 * The logged-out page (docs/endpoints.md#end-session-endpoint): shown after end session when there is
 * nowhere to redirect. Not bound to an authorization request; the language comes from `ui_locales`
 * (OpenID Connect RP-Initiated Logout §2) or Accept-Language.
 */
import type { Request, Response } from 'express';
import { parseParams } from '../../http/form.ts';
import { html } from '../../http/html.ts';
import { negotiateLocale } from '../../http/locale.ts';
import { page } from '../../http/page.ts';
import { sendPage } from '../../http/respond.ts';
import { messagesFor, messagesForParams, type Messages } from '../messages.ts';

export function renderLoggedOutPage(res: Response, options: { locales?: string[]; acceptLanguage?: string | undefined } = {}): void {
  sendLoggedOutPage(res, messagesFor(negotiateLocale(options.locales, options.acceptLanguage)));
}

function sendLoggedOutPage(res: Response, m: Messages): void {
  sendPage(res, 200, page({ m, title: m.loggedOutTitle, body: html`<p>${m.loggedOutText}</p>` }));
}

export function loggedOutStep(req: Request, res: Response): void {
  const q = req.originalUrl.indexOf('?');
  const params = parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
  sendLoggedOutPage(res, messagesForParams(params, req.headers['accept-language']));
}
