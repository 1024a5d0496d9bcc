/**
 * The Gatehouse error page: shown when an authorization error cannot go back to the client (a
 * missing, unregistered or otherwise unusable redirect_uri: docs/endpoints.md#authorization-endpoint)
 * and for the login UI's own failures. It names the OAuth error code and says in a human sentence
 * what happened; the description is shown as a detail, escaped like everything else.
 */
import type { Response } from 'express';
import { html } from './html.ts';
import { negotiateLocale } from './locale.ts';
import { page } from './page.ts';
import { PAGE_TEXTS, type PageTexts } from './page-texts.ts';
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
  showErrorPage(res, PAGE_TEXTS[negotiateLocale(options.locales, options.acceptLanguage)], options);
}

/** The human sentence for an OAuth error code. */
function errorSentence(m: PageTexts, error: string): string {
  return Object.hasOwn(m.errors, error) ? m.errors[error]! : m.errors['default']!;
}

/** The error page in a language already chosen; `sentence` replaces the one for the error code. */
export function showErrorPage(
  res: Response,
  m: PageTexts,
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
