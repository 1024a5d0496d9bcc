/**
 * The Gatehouse error page: shown when an authorization error cannot go back to the client (seed
 * §4.4: a missing, unregistered or otherwise unusable redirect_uri) and for the login UI's own
 * failures. It names the OAuth error code and says in a human sentence what happened; the
 * description is shown as a detail, escaped like everything else.
 */
import type { Response } from 'express';
import { html } from './html.ts';
import { page } from './layout.ts';
import { negotiateLocale } from './locale.ts';
import { errorSentence, messagesFor, type Messages } from './messages.ts';
import { sendPage } from './respond.ts';

export interface ErrorPageOptions {
  status: number;
  /** The OAuth error code (`invalid_request`, `invalid_client`, ...). */
  error: string;
  /** The public description: static text, never raw input. */
  description: string;
  /** The request's ui_locales, when known. */
  locales?: string[];
  acceptLanguage?: string | undefined;
}

const MAX_DESCRIPTION = 300;

export function renderErrorPage(res: Response, options: ErrorPageOptions): void {
  showErrorPage(res, messagesFor(negotiateLocale(options.locales, options.acceptLanguage)), options);
}

/** The error page in a language already chosen; `sentence` replaces the one for the error code. */
export function showErrorPage(
  res: Response,
  m: Messages,
  options: { status: number; error: string; description: string; sentence?: string | undefined },
): void {
  const description = options.description.length > MAX_DESCRIPTION ? `${options.description.slice(0, MAX_DESCRIPTION)}…` : options.description;
  const body = html`<dl class="facts">
<dt>${m.errorCode}</dt>
<dd><code>${options.error}</code></dd>
<dt>${m.errorDetails}</dt>
<dd>${description}</dd>
</dl>
<p>${m.errorAdvice}</p>`;
  sendPage(res, options.status, page({ m, title: m.errorTitle, alert: options.sentence ?? errorSentence(m, options.error), body }));
}

/** A form whose CSRF token is missing or does not match its cookie: 403, nothing done. */
export function refuseForgedForm(res: Response, m: Messages): void {
  showErrorPage(res, m, { status: 403, error: 'invalid_request', description: 'the form token is missing or does not match', sentence: m.csrfFailed });
}
