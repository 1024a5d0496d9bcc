/**
 * Logout confirmation (OpenID Connect RP-Initiated Logout §2: without an id_token_hint the OP SHOULD
 * ask the user). /oidc/v1/end_session sends such requests here; the form carries the validated
 * parameters and a CSRF token, so a third-party page cannot sign the user out by itself.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { showErrorPage } from '../../http/error-page.ts';
import { OAuthError } from '../../http/errors.ts';
import { parseParamsKeepingFirst, readForm } from '../../http/form.ts';
import { html } from '../../http/html.ts';
import { endSessions, LOGOUT_PARAMS, loggedOutPage, validateLogout } from '../../http/logout.ts';
import { page } from '../../http/page.ts';
import { LOGOUT_CONFIRM_PATH } from '../../http/paths.ts';
import { formTargetOf, seeOther, sendPage } from '../../http/respond.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from '../csrf.ts';
import { button } from '../layout.ts';
import { messagesForParams, type Messages } from '../messages.ts';

function messagesOf(req: Request, params: ReadonlyMap<string, string>): Messages {
  return messagesForParams(params, req.headers['accept-language']);
}

function refuse(res: Response, m: Messages, error: unknown): void {
  if (!(error instanceof OAuthError) || error.status >= 500) throw error;
  showErrorPage(res, m, { status: error.status, error: error.error, description: error.description });
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
      const hidden = LOGOUT_PARAMS.filter((name) => params.has(name)).map(
        (name) => html`<input type="hidden" name="${name}" value="${params.get(name) ?? ''}">`,
      );
      const body = html`<p>${m.logoutText}</p>
<form method="post" action="${LOGOUT_CONFIRM_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${csrfTokenFor(gh, req, res)}">
${hidden}
${button(m.logoutButton)}
</form>`;
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
