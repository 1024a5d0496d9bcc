/**
 * Answering an authenticated authorization request: a code (code flow) or tokens (implicit), sent to
 * the client in the request's response mode, with `iss` (RFC 9207) and the unmodified `state`.
 * Reached from /authorize when a session answers at once, and from the login UI via the callback.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { closeAuthRequest, issueCode, pendingAuthRequest, rememberLoginName, type AuthRequest } from '../domain/sign-in/auth-requests.ts';
import { sessionById, touchSession, type UserSession } from '../domain/sign-in/sessions.ts';
import { sessionLacksMfa } from '../domain/instance/policies.ts';
import { FIRST_FACTOR_PATH } from '../http/paths.ts';
import { browserHashOf } from '../http/browser.ts';
import { renderErrorPage } from '../http/error-page.ts';
import { issueIdToken } from './id-token.ts';
import { deliver } from './response-mode.ts';
import { countIssued } from './grants/token-response.ts';
import { mintUserTokens } from './grants/user-tokens.ts';
import { projectAccessRefusal } from './project-access.ts';
import { roleClaims } from './role-claims.ts';
import { audienceFor, checkScopes } from './scopes.ts';

export async function finishAuthorization(gh: Gatehouse, _req: Request, res: Response, request: AuthRequest, session: UserSession): Promise<void> {
  const base = { state: request.state, iss: gh.config.externalUrl };
  if (request.clientId === '') {
    // The login UI's own sign-ins (the passkeys page, docs/passkeys.md#the-passkeys-page) have no
    // client: the browser's session is what they were for, and they go back to the Gatehouse page
    // that started them.
    // /authorize never makes such a request (client_id is required), and its URI is the server's own.
    await closeAuthRequest(gh.db, request.id);
    const ownPage = request.redirectUri.startsWith(`${gh.config.externalUrl}/ui/login/`);
    res.redirect(303, ownPage ? request.redirectUri : `${gh.config.externalUrl}/ui/login/logged-out`);
    return;
  }
  const app = await gh.directory.application(gh.instanceId, request.clientId);
  const user = await gh.directory.user(session.userId);
  if (!app || !user || user.state !== 'active') {
    await closeAuthRequest(gh.db, request.id);
    deliver(res, request.redirectUri, request.responseMode, { ...base, error: 'access_denied', error_description: 'the sign-in cannot be completed' });
    return;
  }
  if (request.hintUserId !== undefined && user.id !== request.hintUserId) {
    // OIDC Core §3.1.2.1: the signed-in user must be the subject the id_token_hint names.
    await closeAuthRequest(gh.db, request.id);
    deliver(res, request.redirectUri, request.responseMode, { ...base, error: 'login_required', error_description: 'the signed-in user is not the one named by id_token_hint' });
    return;
  }
  // The login policy of the application's organization forces a second factor
  // (docs/branding-and-login-policy.md#what-the-login-pages-honour): a session without one (single
  // sign-on after a password alone, an account chosen on the accounts step, a session from before the
  // policy) never answers. The user signs in again and is asked for the factor, or sets one up; with
  // prompt=none that needs the user (OIDC Core §3.1.2.6 interaction_required).
  const { login } = await gh.directory.orgSettings(gh.instanceId, app.orgId);
  if (sessionLacksMfa(login, session.amr)) {
    if (request.prompt.includes('none')) {
      await closeAuthRequest(gh.db, request.id);
      deliver(res, request.redirectUri, request.responseMode, { ...base, error: 'interaction_required', error_description: 'the sign-in needs a second factor' });
      return;
    }
    await rememberLoginName(gh.db, request.id, user.loginName, user.id);
    res.redirect(303, `${gh.config.externalUrl}${FIRST_FACTOR_PATH}?authRequestID=${encodeURIComponent(request.id)}`);
    return;
  }
  const refusal = await projectAccessRefusal(gh, app, user);
  if (refusal !== undefined) {
    await closeAuthRequest(gh.db, request.id);
    deliver(res, request.redirectUri, request.responseMode, { ...base, error: 'access_denied', error_description: refusal });
    return;
  }
  await touchSession(gh.db, session.id);

  if (request.responseType === 'code') {
    // The code carries the session (bound in the same statement); the token endpoint reads the rest from the request row.
    const { code } = await issueCode(gh.db, request.id, gh.config.lifetimes.authCode, new Date(), { userId: user.id, sessionId: session.id });
    deliver(res, request.redirectUri, request.responseMode, { code, ...base });
    return;
  }

  // Implicit (OIDC Core §3.2.2.5): an ID token, and an access token for "id_token token".
  await closeAuthRequest(gh.db, request.id);
  const granted = await checkScopes(gh, request.scopes.filter((s) => s !== 'offline_access'), app.orgId);
  if (request.responseType === 'id_token token') {
    const minted = await mintUserTokens(gh, {
      app,
      user,
      granted,
      grantId: request.id,
      sessionId: session.id,
      authTime: session.authTime,
      amr: session.amr,
      nonce: request.nonce,
    });
    countIssued(gh, 'implicit', minted);
    deliver(res, request.redirectUri, request.responseMode, {
      ...base,
      access_token: minted.access_token,
      token_type: minted.token_type,
      expires_in: String(minted.expires_in),
      scope: minted.scope,
      id_token: minted.id_token,
    });
    return;
  }
  const idRoles = await roleClaims(gh, 'id_token', {
    user,
    scopes: granted.scopes,
    clientProjectId: app.projectId,
    audience: audienceFor(gh, app.clientId, app.projectId, granted),
    clientOrgId: app.orgId,
    appAsserts: app.idTokenRoleAssertion,
  });
  const idToken = await issueIdToken(gh, {
    user,
    clientId: app.clientId,
    scopes: granted.scopes,
    roleClaims: idRoles,
    authTime: session.authTime,
    nonce: request.nonce,
    amr: session.amr,
    sessionId: session.id,
    userinfoAssertion: app.idTokenUserinfoAssertion,
  });
  deliver(res, request.redirectUri, request.responseMode, { ...base, id_token: idToken });
}

/** GET /oauth/v2/authorize/callback?authRequestID=…: the login UI is done with a request. */
export function authorizeCallback(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    const id = typeof req.query['authRequestID'] === 'string' ? req.query['authRequestID'] : '';
    const browser = browserHashOf(gh, req);
    const request = browser ? await pendingAuthRequest(gh.db, id, browser) : undefined;
    const session = request?.sessionId ? await sessionById(gh.db, request.sessionId) : undefined;
    if (!request || !session || session.userId !== request.userId) {
      renderErrorPage(res, {
        status: 400,
        error: 'invalid_request',
        description: 'the sign-in request is unknown, expired or was already used',
        acceptLanguage: req.headers['accept-language'],
      });
      return;
    }
    await finishAuthorization(gh, req, res, request, session);
  };
}
