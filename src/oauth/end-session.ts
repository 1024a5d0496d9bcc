/**
 * GET and POST /oidc/v1/end_session (OIDC RP-Initiated Logout 1.0 §2–§3, seed §4.9, SPEC §6). Ends
 * every session of the browser and revokes the tokens issued in them, then sends the browser to the
 * client's registered post_logout_redirect_uri (with state), or to the logged-out page. Nothing is
 * ended when the request is refused; refusals are shown on the error page, never redirected.
 *
 * The request could come from any page, so the user confirms first (RP-Initiated Logout §2: the OP
 * SHOULD ask) on /ui/login/logout, whose CSRF-protected form ends the sessions through the same
 * functions, unless the id_token_hint names an active session of this very browser (SPEC 10.10): its
 * `sub`, and its `sid` when it has one. Any valid ID token is not enough (an attacker's own, or one
 * of another browser's sign-in): that would let any page sign the user out.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { activeSessions, endBrowserSessions } from '../domain/sessions.ts';
import { renderErrorPage } from '../login/error-page.ts';
import { browserHashOf } from './browser.ts';
import { InvalidRequest, OAuthError } from './errors.ts';
import { optional, readQueryOrForm, type Params } from './form.ts';
import { verifyIdTokenHint, type IdTokenHint } from './id-token.ts';

export const END_SESSION_PATH = '/oidc/v1/end_session';
export const LOGGED_OUT_PATH = '/ui/login/logged-out';

/** Revokes every token issued in these sessions: by id for JWTs and stored tokens alike, and the rows. */
export async function revokeSessions(gh: Gatehouse, sessionIds: readonly string[], now = new Date()): Promise<void> {
  if (sessionIds.length === 0) return;
  const { accessToken, refreshAbsolute } = gh.config.lifetimes;
  const until = new Date(now.getTime() + Math.max(accessToken, refreshAbsolute) * 1000);
  await gh.tokens.revokeSessions(sessionIds, until, now);
}

export const LOGOUT_CONFIRM_PATH = '/ui/login/logout';
/** The parameters the confirmation page carries over to its form. */
export const LOGOUT_PARAMS = ['client_id', 'post_logout_redirect_uri', 'state', 'ui_locales'] as const;

export interface Logout {
  /** Where to send the browser afterwards: a registered URI with state, or undefined. */
  redirect: string | undefined;
  /** The valid id_token_hint, if one was given. */
  hint: IdTokenHint | undefined;
}

/** Validates the request before anything is ended (RP-Initiated Logout §2, §3; seed §4.9 rules 1–2). */
export async function validateLogout(gh: Gatehouse, params: Params, repeated: readonly string[]): Promise<Logout> {
  if (repeated[0] !== undefined) throw new InvalidRequest(`${repeated[0]} is repeated`);
  const hintToken = optional(params, 'id_token_hint');
  const clientId = optional(params, 'client_id');
  const redirectUri = optional(params, 'post_logout_redirect_uri');
  const state = optional(params, 'state');

  const hint = hintToken === undefined ? undefined : verifyIdTokenHint(gh, hintToken);
  if (hintToken !== undefined && !hint) throw new InvalidRequest('id_token_hint is not a valid ID token of this issuer');
  if (hint && clientId !== undefined && clientId !== hint.azp) throw new InvalidRequest('client_id does not match the id_token_hint');
  if (redirectUri === undefined) return { redirect: undefined, hint };

  const owner = hint?.azp ?? clientId;
  if (owner === undefined) throw new InvalidRequest('post_logout_redirect_uri needs client_id or id_token_hint');
  const app = await gh.directory.application(gh.instanceId, owner);
  if (!app || !app.postLogoutRedirectUris.includes(redirectUri)) {
    throw new InvalidRequest('post_logout_redirect_uri is not registered for the client');
  }
  const target = new URL(redirectUri);
  if (state !== undefined) target.searchParams.append('state', state);
  return { redirect: target.href, hint };
}

/** SPEC 10.10: whether the hint names an active session of this browser (its sub, and its sid if any). */
async function hintNamesThisBrowser(gh: Gatehouse, req: Request, hint: IdTokenHint): Promise<boolean> {
  const browser = browserHashOf(gh, req);
  if (!browser) return false;
  const sessions = await activeSessions(gh.db, gh.instanceId, browser);
  return sessions.some((session) => session.userId === hint.sub && (hint.sid === undefined || session.id === hint.sid));
}

/** Ends the browser's sessions; their tokens are revoked first, so a failure leaves nothing half done. */
export async function endSessions(gh: Gatehouse, req: Request): Promise<void> {
  const browser = browserHashOf(gh, req);
  if (!browser) return;
  const active = (await activeSessions(gh.db, gh.instanceId, browser)).map((s) => s.id);
  await revokeSessions(gh, active);
  const ended = await endBrowserSessions(gh.db, gh.instanceId, browser);
  // a session that appeared in between
  await revokeSessions(gh, ended.filter((id) => !active.includes(id)));
}

export function loggedOutPage(gh: Gatehouse, params: Params): string {
  const target = new URL(`${gh.config.externalUrl}${LOGGED_OUT_PATH}`);
  const locales = optional(params, 'ui_locales');
  if (locales !== undefined) target.searchParams.set('ui_locales', locales);
  return target.href;
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
