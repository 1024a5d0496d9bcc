/**
 * The logout of OIDC RP-Initiated Logout 1.0 (§2, §3; docs/endpoints.md#end-session-endpoint),
 * performed by two endpoints: /oidc/v1/end_session (oauth/end-session.ts) when the id_token_hint
 * names a session of this very browser (docs/security.md 10.10), and the login UI's confirmation page
 * (login/steps/logout.ts) otherwise. Both validate the request and end the browser's sessions through
 * these functions.
 *
 * Here rather than in domain/: it reads the browser cookie and refuses with OAuth errors. Rather
 * than handed to the login UI by server/app.ts: two endpoints call the same few functions, and a
 * module both import reads simpler than a callback threaded through the composition.
 */
import type { Request } from 'express';
import type { Gatehouse } from '../context.ts';
import { verifyIdTokenHint, type IdTokenHint } from '../domain/tokens/own-id-token.ts';
import { redirectUriMatches } from '../domain/projects/redirect-uris.ts';
import { activeSessions, endBrowserSessions } from '../domain/sign-in/sessions.ts';
import { browserHashOf } from './browser.ts';
import { InvalidRequest } from './errors.ts';
import { optional, type Params } from './form.ts';
import { LOGGED_OUT_PATH } from './paths.ts';

/** Revokes every token issued in these sessions: by id for JWTs and stored tokens alike, and the rows. */
export async function revokeSessions(gh: Gatehouse, sessionIds: readonly string[], now = new Date()): Promise<void> {
  if (sessionIds.length === 0) return;
  const { accessToken, refreshAbsolute } = gh.config.lifetimes;
  const until = new Date(now.getTime() + Math.max(accessToken, refreshAbsolute) * 1000);
  await gh.tokens.revokeSessions(sessionIds, until, now);
}

/** The parameters the confirmation page carries over to its form. */
export const LOGOUT_PARAMS = ['client_id', 'post_logout_redirect_uri', 'state', 'ui_locales'] as const;

export interface Logout {
  /** Where to send the browser afterwards: a registered URI with state, or undefined. */
  redirect: string | undefined;
  /** The valid id_token_hint, if one was given. */
  hint: IdTokenHint | undefined;
}

/** Validates the request before anything is ended (RP-Initiated Logout §2, §3; docs/endpoints.md#end-session-endpoint). */
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
  // Registered URIs match as redirect URIs do: exactly, or a native app's loopback IP URI on any port.
  if (!app || !redirectUriMatches(app.postLogoutRedirectUris, redirectUri, app.appType)) {
    throw new InvalidRequest('post_logout_redirect_uri is not registered for the client');
  }
  const target = new URL(redirectUri);
  if (state !== undefined) target.searchParams.append('state', state);
  return { redirect: target.href, hint };
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

/** Where the browser goes when the logout has no redirect: the logged-out page, in its ui_locales. */
export function loggedOutPage(gh: Gatehouse, params: Params): string {
  const target = new URL(`${gh.config.externalUrl}${LOGGED_OUT_PATH}`);
  const locales = optional(params, 'ui_locales');
  if (locales !== undefined) target.searchParams.set('ui_locales', locales);
  return target.href;
}
