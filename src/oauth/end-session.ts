/**
 * GET and POST /oidc/v1/end_session (OIDC RP-Initiated Logout 1.0 §2–§3,
 * docs/endpoints.md#end-session-endpoint). Ends every session of the browser and revokes the tokens
 * issued in them, then sends the browser to the client's registered post_logout_redirect_uri (with
 * state), or to the logged-out page. Nothing is ended when the request is refused; refusals are
 * shown on the error page, never redirected.
 *
 * The request could come from any page, so the user confirms first (RP-Initiated Logout §2: the OP
 * SHOULD ask) on /ui/login/logout, whose CSRF-protected form ends the sessions through the same
 * functions (http/logout.ts), unless the id_token_hint names an active session of this very browser
 * (docs/security.md 10.10): its `sub`, and its `sid` when it has one. Any valid ID token is not
 * enough (an attacker's own, or one of another browser's sign-in): that would let any page sign the
 * user out.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import type { IdTokenHint } from '../domain/tokens/own-id-token.ts';
import { activeSessions } from '../domain/sign-in/sessions.ts';
import { browserHashOf } from '../http/browser.ts';
import { renderErrorPage } from '../http/error-page.ts';
import { optional, readQueryOrForm, type Params } from '../http/form.ts';
import { endSessions, LOGOUT_PARAMS, loggedOutPage, validateLogout, type Logout } from '../http/logout.ts';
import { LOGOUT_CONFIRM_PATH } from '../http/paths.ts';
import { OAuthError } from './errors.ts';

export const END_SESSION_PATH = '/oidc/v1/end_session';

/** docs/security.md 10.10: whether the hint names an active session of this browser (its sub, and its sid if any). */
async function hintNamesThisBrowser(gh: Gatehouse, req: Request, hint: IdTokenHint): Promise<boolean> {
  const browser = browserHashOf(gh, req);
  if (!browser) return false;
  const sessions = await activeSessions(gh.db, gh.instanceId, browser);
  return sessions.some((session) => session.userId === hint.sub && (hint.sid === undefined || session.id === hint.sid));
}

export function endSessionEndpoint(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    let params: Params = new Map();
    let logout: Logout;
    try {
      const read = await readQueryOrForm(req, gh.config.maxBodyBytes);
      params = read.params;
      logout = await validateLogout(gh, read.params, read.repeated);
    } catch (error) {
      if (!(error instanceof OAuthError) || error.status >= 500) throw error;
      const locales = optional(params, 'ui_locales');
      renderErrorPage(res, {
        status: error.status,
        error: error.error,
        description: error.description,
        ...(locales !== undefined ? { locales: locales.split(' ').filter(Boolean) } : {}),
        acceptLanguage: req.headers['accept-language'],
      });
      return;
    }
    if (!logout.hint || !(await hintNamesThisBrowser(gh, req, logout.hint))) {
      const confirm = new URL(`${gh.config.externalUrl}${LOGOUT_CONFIRM_PATH}`);
      for (const name of LOGOUT_PARAMS) {
        const value = optional(params, name);
        if (value !== undefined) confirm.searchParams.set(name, value);
      }
      // The confirmation page validates the redirect again without the hint: the hint's client
      // (already checked against any client_id given) stands in for it.
      if (logout.hint && !confirm.searchParams.has('client_id')) confirm.searchParams.set('client_id', logout.hint.azp);
      res.redirect(303, confirm.href);
      return;
    }
    await endSessions(gh, req);
    res.redirect(303, logout.redirect ?? loggedOutPage(gh, params));
  };
}
