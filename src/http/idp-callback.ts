/**
 * `GET|POST /idps/callback`: where every external identity provider sends the browser back
 * (docs/federation.md#the-intent-calls, docs/endpoints.md). The parameters come in the query or, for
 * providers that answer with `response_mode=form_post`, as a form. The intents wing finishes the
 * sign-in (domain/federation/intents.ts `completeIntent`); this answers its word: a 302 to the
 * intent's success or failure URL, or, when the answer belongs to no sign-in in progress (no or an
 * unknown `state`), the error page with status 400, since there is nowhere safe to send the browser.
 *
 * It serves the login UI and the API's intents alike, so it sits beside them (the web kit) and is
 * dispatched by server/dispatch.ts, not through either.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { completeIntent, IDP_CALLBACK_PATH, type IntentContext } from '../domain/federation/intents.ts';
import { logAnswer, toOAuthError } from './errors.ts';
import { readForm } from './form.ts';
import { html } from './html.ts';
import { negotiateLocale } from './locale.ts';
import { page } from './page.ts';
import { PAGE_TEXTS } from './page-texts.ts';
import { contentSecurityPolicy } from './respond.ts';

export { IDP_CALLBACK_PATH } from '../domain/federation/intents.ts';

export interface IdpCallbackContext extends IntentContext {
  maxBodyBytes: number;
  log: Logger;
}

const HEADERS = {
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/** True for the callback's path, with or without a query. */
export function isIdpCallback(url: string | undefined): boolean {
  return url !== undefined && (url === IDP_CALLBACK_PATH || url.startsWith(`${IDP_CALLBACK_PATH}?`));
}

function errorPage(req: http.IncomingMessage, res: http.ServerResponse, status: number, error: string, description: string): void {
  const m = PAGE_TEXTS[negotiateLocale([], req.headers['accept-language'])];
  const body = html`<dl class="facts">
<dt>${m.errorCode}</dt>
<dd><code>${error}</code></dd>
<dt>${m.errorDetails}</dt>
<dd>${description}</dd>
</dl>
<p>${m.errorAdvice}</p>`;
  const document = page({ m, title: m.errorTitle, alert: Object.hasOwn(m.errors, error) ? m.errors[error]! : m.errors['default']!, body });
  res.writeHead(status, { ...HEADERS, 'content-security-policy': contentSecurityPolicy(), 'content-type': 'text/html; charset=utf-8' });
  res.end(document.value);
}

/** The first value of each parameter: a provider sends each once, and a repeat changes nothing about which intent it is. */
function parametersOf(search: URLSearchParams | Map<string, string>) {
  const get = (name: string) => {
    const value = search.get(name);
    return value === null || value === undefined ? undefined : value;
  };
  return { state: get('state'), code: get('code'), error: get('error'), errorDescription: get('error_description'), iss: get('iss') };
}

export function idpCallbackEndpoint(ctx: IdpCallbackContext): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'POST') {
        res.setHeader('allow', 'GET, POST');
        errorPage(req, res, 405, 'invalid_request', `${IDP_CALLBACK_PATH} takes GET or POST`);
        return;
      }
      const query = new URL(req.url ?? '/', 'http://callback').searchParams;
      const parameters = req.method === 'POST' ? parametersOf(await readForm(req, ctx.maxBodyBytes)) : parametersOf(query);
      const outcome = await completeIntent(ctx, parameters);
      if ('redirect' in outcome) {
        res.writeHead(302, { ...HEADERS, location: outcome.redirect });
        res.end();
        return;
      }
      errorPage(req, res, outcome.status, 'invalid_request', outcome.problem);
    } catch (error) {
      // A malformed form is the sender's problem (400); a database outage 503; anything else a fault, logged.
      const answer = toOAuthError(error);
      logAnswer(ctx.log, answer, error, { path: IDP_CALLBACK_PATH }, 'identity provider callback');
      if (!res.headersSent) errorPage(req, res, answer.status, answer.error, answer.description);
    }
  };
}
