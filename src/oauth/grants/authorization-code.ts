/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, OIDC Core §3.1.3, RFC 7636 §4.6;
 * docs/decisions.md#authorization-codes). The code is consumed exactly once; a second use revokes
 * what the first issued. The code is bound to the client, the redirect URI and the PKCE challenge of
 * its request, checked before the code is spent (docs/security.md 10.15), and to a session still
 * active.
 */
import { createHash } from 'node:crypto';
import type { Gatehouse } from '../../context.ts';
import { consumeCode, type AuthRequest } from '../../domain/sign-in/auth-requests.ts';
import { safeEqual } from '../../domain/kernel/crypto.ts';
import { AUTHORIZATION_CODE } from '../../oidc/grant-types.ts';
import type { Application } from '../../domain/instance/directory.ts';
import { sessionById, type UserSession } from '../../domain/sign-in/sessions.ts';
import { InvalidGrant } from '../errors.ts';
import { optional, required, type Params } from '../../http/form.ts';
import { audienceFor, checkScopes } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { activeUser, applicationOf, mintUserTokens, OFFLINE_ACCESS, refreshIssuer, revokeFamily } from './user-tokens.ts';
import { storeRefreshToken, type RefreshFamily } from '../../domain/tokens/refresh-tokens.ts';

export const authorizationCode: Grant = {
  grantType: AUTHORIZATION_CODE,
  metricName: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientAuth: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
  machines: false,
  handle,
};

/**
 * 43 to 128 characters as RFC 7636 §4.1 asks, but any printable ASCII rather than only unreserved
 * ones: git-credential-oauth 0.4.2 makes its verifier with standard base64 (`+`, `/`, `=`). What
 * protects the code is the S256 comparison, and the length keeps a verifier hard to guess; the
 * character set adds nothing to either.
 */
const VERIFIER = /^[\x21-\x7e]{43,128}$/;

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
    throw new InvalidGrant('code was already used; the tokens it issued are revoked', 'codeUsed');
  }
  if (exchange.kind === 'unknown') throw new InvalidGrant('code is unknown', 'codeUnknown');
  if (exchange.kind === 'expired') throw new InvalidGrant('code has expired', 'codeExpired');
  return exchange;
}

/**
 * docs/security.md 10.15: the code's client, redirect URI (RFC 6749 §4.1.3) and PKCE verifier are checked
 * before the code is spent, so a client that is not the code's, or lacks its verifier, cannot burn
 * it for the rightful one (node-oidc-provider checks in this order too).
 */
function checkBinding(gh: Gatehouse, app: Application, request: AuthRequest, input: CodeRequest): void {
  // Another instance's and another client's code read like no code: the client learns nothing it did not know.
  if (request.instanceId !== gh.instanceId) throw new InvalidGrant('code of another instance', 'codeUnknown');
  if (request.clientId !== app.clientId) throw new InvalidGrant('code was issued to another client', 'codeUnknown');
  // Exactly the redirect_uri of the authorization request, a loopback port included (RFC 6749 §4.1.3).
  if (request.redirectUri !== input.redirectUri) throw new InvalidGrant('redirect_uri does not match the authorization request', 'redirectUri');
  checkPkce(app, request, input.verifier);
}

/** RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) equals the challenge (S256 is the only method). */
function checkPkce(app: Application, request: AuthRequest, verifier: string | undefined): void {
  const challenge = request.codeChallenge;
  if (challenge === undefined) {
    if (verifier !== undefined) throw new InvalidGrant('code_verifier was sent, but the request had no code_challenge', 'verifierUnexpected');
    if (app.authMethod === 'none') throw new InvalidGrant('a public client must use PKCE', 'pkceRequired');
    return;
  }
  if (verifier === undefined) throw new InvalidGrant('code_verifier is required', 'verifierMissing');
  if (!VERIFIER.test(verifier)) throw new InvalidGrant('code_verifier is malformed', 'verifierMalformed');
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  if (!safeEqual(computed, challenge)) throw new InvalidGrant('code_verifier does not match the code_challenge', 'verifierWrong');
}

/** The session the code was issued in must still be the user's. */
async function validSession(gh: Gatehouse, request: AuthRequest): Promise<UserSession> {
  if (!request.sessionId || !request.userId) throw new InvalidGrant('code has no authenticated session', 'signInEnded');
  const session = await sessionById(gh.db, request.sessionId);
  if (!session || session.userId !== request.userId) throw new InvalidGrant('the session of the code has ended', 'signInEnded');
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
  // offline_access yields a refresh token only for clients allowed the refresh_token grant
  // (docs/decisions.md#refresh-tokens)
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
  const refreshToken = offline ? await storeRefreshToken(gh.db, refreshIssuer(gh), family, now) : undefined;
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
