/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, OIDC Core §3.1.3, RFC 7636 §4.6; seed §4.5). The
 * code is consumed exactly once; a second use revokes what the first issued. The code is bound to the
 * client, the redirect URI and the PKCE challenge of its request, checked before the code is spent
 * (SPEC 10.15), and to a session still active.
 */
import { createHash } from 'node:crypto';
import type { Gatehouse } from '../../context.ts';
import { consumeCode, type AuthRequest } from '../../domain/auth-requests.ts';
import { safeEqual } from '../../domain/crypto.ts';
import { AUTHORIZATION_CODE } from '../../domain/grant-types.ts';
import type { Application } from '../../domain/directory.ts';
import { sessionById, type UserSession } from '../../domain/sessions.ts';
import { InvalidGrant } from '../errors.ts';
import { optional, required, type Params } from '../../http/form.ts';
import { audienceFor, checkScopes } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { activeUser, applicationOf, mintUserTokens, OFFLINE_ACCESS, revokeFamily, storeRefreshToken, type RefreshFamily } from './user-tokens.ts';

export const authorizationCode: Grant = {
  grantType: AUTHORIZATION_CODE,
  metricName: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientAuth: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
  machines: false,
  handle,
};

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

interface CodeRequest {
  code: string;
  redirectUri: string;
  verifier: string | undefined;
}

function parse(params: Params): CodeRequest {
  return { code: required(params, 'code'), redirectUri: required(params, 'redirect_uri'), verifier: optional(params, 'code_verifier') };
}

/**
 * Finds the code, checks it belongs to this request (`checkBinding`) and only then consumes it; a
 * reused one revokes what its first exchange issued (RFC 6749 §4.1.2), but only when its own
 * client presents it again.
 */
async function redeem(gh: Gatehouse, app: Application, input: CodeRequest): Promise<{ request: AuthRequest; grantId: string }> {
  const exchange = await consumeCode(gh.db, input.code, (request) => checkBinding(gh, app, request, input));
  if (exchange.kind === 'reused') {
    await revokeFamily(gh, exchange.grantId);
    throw new InvalidGrant('code was already used; the tokens it issued are revoked');
  }
  if (exchange.kind === 'invalid') throw new InvalidGrant('code is unknown or expired');
  return exchange;
}

/**
 * SPEC 10.15: the code's client, redirect URI (RFC 6749 §4.1.3) and PKCE verifier are checked
 * before the code is spent, so a client that is not the code's, or lacks its verifier, cannot burn
 * it for the rightful one (node-oidc-provider checks in this order too).
 */
function checkBinding(gh: Gatehouse, app: Application, request: AuthRequest, input: CodeRequest): void {
  if (request.instanceId !== gh.instanceId) throw new InvalidGrant('code is unknown or expired');
  if (request.clientId !== app.clientId) throw new InvalidGrant('code was issued to another client');
  if (request.redirectUri !== input.redirectUri) throw new InvalidGrant('redirect_uri does not match the authorization request');
  checkPkce(app, request, input.verifier);
}

/** RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) equals the challenge (S256 is the only method). */
function checkPkce(app: Application, request: AuthRequest, verifier: string | undefined): void {
  const challenge = request.codeChallenge;
  if (challenge === undefined) {
    if (verifier !== undefined) throw new InvalidGrant('code_verifier was sent, but the request had no code_challenge');
    if (app.authMethod === 'none') throw new InvalidGrant('a public client must use PKCE'); // SPEC §6
    return;
  }
  if (verifier === undefined) throw new InvalidGrant('code_verifier is required');
  if (!VERIFIER.test(verifier)) throw new InvalidGrant('code_verifier is malformed');
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  if (!safeEqual(computed, challenge)) throw new InvalidGrant('code_verifier does not match the code_challenge');
}

/** The session the code was issued in must still be the user's. */
async function validSession(gh: Gatehouse, request: AuthRequest): Promise<UserSession> {
  if (!request.sessionId || !request.userId) throw new InvalidGrant('code has no authenticated session');
  const session = await sessionById(gh.db, request.sessionId);
  if (!session || session.userId !== request.userId) throw new InvalidGrant('the session of the code has ended');
  return session;
}

async function handle({ gh, params, client }: GrantContext): Promise<TokenResponse> {
  // parse
  const input = parse(params);
  const app = applicationOf(client, 'authorization_code');
  // validate
  const { request, grantId } = await redeem(gh, app, input);
  const session = await validSession(gh, request);
  const user = await activeUser(gh, session.userId);
  // offline_access yields a refresh token only for clients allowed the refresh_token grant (SPEC §6)
  const offline = request.scopes.includes(OFFLINE_ACCESS) && app.grantTypes.includes('refresh_token');
  const granted = await checkScopes(gh, request.scopes.filter((s) => s !== OFFLINE_ACCESS || offline), app.orgId);
  // issue
  const now = new Date();
  const family: RefreshFamily = {
    grantId,
    clientId: app.clientId,
    subject: user.id,
    sessionId: session.id,
    scopes: granted.scopes,
    audience: audienceFor(gh, app.clientId, app.projectId, granted),
    authTime: session.authTime,
    amr: session.amr,
    absoluteExpiresAt: new Date(now.getTime() + gh.config.lifetimes.refreshAbsolute * 1000),
  };
  const refreshToken = offline ? await storeRefreshToken(gh, gh.db, family, now) : undefined;
  return mintUserTokens(gh, {
    app,
    user,
    granted,
    grantId,
    sessionId: session.id,
    authTime: session.authTime,
    amr: session.amr,
    nonce: request.nonce,
    refreshToken,
  });
}
