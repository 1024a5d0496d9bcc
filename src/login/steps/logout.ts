/**
 * Logout confirmation (OpenID Connect RP-Initiated Logout §2: without an id_token_hint the OP SHOULD
 * ask the user). /oidc/v1/end_session sends such requests here; the form carries the validated
 * parameters and a CSRF token, so a third-party page cannot sign the user out by itself.
 *
 * "Cancel" signs no one out: a link back to the validated post_logout_redirect_uri (with state), or
 * to a page saying the user is still signed in. A browser with no session is told it is signed out,
 * and offered the post_logout_redirect_uri, with no form to confirm.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { showErrorPage } from '../../http/error-page.ts';
import { OAuthError } from '../../http/errors.ts';
import { parseParams, parseParamsKeepingFirst, readForm } from '../../http/form.ts';
import { activeSessions } from '../../domain/sign-in/sessions.ts';
import { browserHashOf } from '../../http/browser.ts';
import { html } from '../../http/html.ts';
import { endSessions, LOGOUT_PARAMS, loggedOutPage, validateLogout } from '../../http/logout.ts';
import { page } from '../../http/page.ts';
import { LOGOUT_CONFIRM_PATH } from '../../http/paths.ts';
import { formTargetOf, seeOther, sendPage } from '../../http/respond.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from '../csrf.ts';
import { button, link } from '../layout.ts';
import { messagesForParams, type Messages } from '../messages.ts';

function messagesOf(req: Request, params: ReadonlyMap<string, string>): Messages {
  return messagesForParams(params, req.headers['accept-language']);
}

function refuse(res: Response, m: Messages, error: unknown): void {
  if (!(error instanceof OAuthError) || error.status >= 500) throw error;
  showErrorPage(res, m, { status: error.status, error: error.error, description: error.description });
}

/** Where "Cancel" leads when the logout has no redirect: a page saying nothing changed, in the request's ui_locales. */
function cancelledPage(gh: Gatehouse, params: ReadonlyMap<string, string>): string {
  const target = new URL(`${gh.config.externalUrl}${LOGOUT_CANCELLED_PATH}`);
  const locales = params.get('ui_locales');
  if (locales !== undefined) target.searchParams.set('ui_locales', locales);
  return target.href;
}

export const LOGOUT_CANCELLED_PATH = `${LOGOUT_CONFIRM_PATH}/cancelled`;

/** The end of a cancelled logout that had nowhere to go back to. */
export function logoutCancelledPage(req: Request, res: Response): void {
  const q = req.originalUrl.indexOf('?');
  const m = messagesForParams(parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1)), req.headers['accept-language']);
  sendPage(res, 200, page({ m, title: m.logoutCancelledTitle, body: html`<p>${m.logoutCancelledText}</p>` }));
}

export function logoutStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const q = req.originalUrl.indexOf('?');
      const { params, repeated } = parseParamsKeepingFirst(q === -1 ? '' : req.originalUrl.slice(q + 1));
      const m = messagesOf(req, params);
      let redirect: string | undefined;
      try {
        ({ redirect } = await validateLogout(gh, params, repeated));
      } catch (error) {
        refuse(res, m, error);
        return;
      }
      const browser = browserHashOf(gh, req);
      if (browser === undefined || (await activeSessions(gh.db, gh.instanceId, browser)).length === 0) {
        const next = redirect === undefined ? '' : html`<nav class="links">${link(redirect, m.logoutContinue)}</nav>`;
        sendPage(res, 200, page({ m, title: m.loggedOutTitle, body: html`<p>${m.logoutNoSession}</p>
${next}` }));
        return;
      }
      const hidden = LOGOUT_PARAMS.filter((name) => params.has(name)).map(
        (name) => html`<input type="hidden" name="${name}" value="${params.get(name) ?? ''}">`,
      );
      const cancel = redirect ?? cancelledPage(gh, params);
      const body = html`<p>${m.logoutText}</p>
<div class="actions">
<form method="post" action="${LOGOUT_CONFIRM_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${csrfTokenFor(gh, req, res)}">
${hidden}
${button(m.logoutButton)}
</form>
${link(cancel, m.logoutCancel)}
</div>`;
      // Chromium applies form-action to the redirect after the submit: allow the client's origin.
      const target = redirect === undefined ? undefined : formTargetOf(redirect);
      sendPage(res, 200, page({ m, title: m.logoutTitle, body }), target === undefined ? [] : [target]);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const form = await readForm(req, gh.config.maxBodyBytes);
      const m = messagesOf(req, form);
      if (!csrfValid(gh, req, form)) {
        refuseForgedForm(res, m);
        return;
      }
      const params = new Map(LOGOUT_PARAMS.flatMap((name) => (form.has(name) ? [[name, form.get(name)!] as const] : [])));
      let redirect: string | undefined;
      try {
        ({ redirect } = await validateLogout(gh, params, []));
      } catch (error) {
        refuse(res, m, error);
        return;
      }
      await endSessions(gh, req);
      seeOther(res, redirect ?? loggedOutPage(gh, params));
    },
  };
}
