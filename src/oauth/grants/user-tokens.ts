/**
 * What the user grants share (authorization_code, refresh_token): the checks that a user may still
 * receive tokens, where refresh tokens are issued (domain/tokens/refresh-tokens.ts), and minting the
 * response (docs/endpoints.md#token-endpoint).
 */
import type { Gatehouse } from '../../context.ts';
import type { Application, User } from '../../domain/instance/directory.ts';
import { sessionById } from '../../domain/sign-in/sessions.ts';
import type { AuthenticatedClient } from '../client-auth/index.ts';
import { InvalidGrant, UnauthorizedClient } from '../errors.ts';
import { audienceFor, type GrantedScopes } from '../scopes.ts';
import type { TokenResponse } from './grant.ts';
import { roleClaims } from '../role-claims.ts';
import { accessTokenResponse } from './token-response.ts';
import type { AccessTokenType } from '../../oidc/vocabulary.ts';
import type { RefreshIssuer } from '../../domain/tokens/refresh-tokens.ts';

export const OFFLINE_ACCESS = 'offline_access';

/** The application that called: user grants are for applications, never machine users. */
export function applicationOf(client: AuthenticatedClient | undefined, grantType: string): Application {
  if (client?.kind !== 'app') throw new UnauthorizedClient(`${grantType} is only for applications`);
  return client.app;
}

/** The user behind a grant, who must still exist in this instance and be active. */
export async function activeUser(gh: Gatehouse, userId: string): Promise<User> {
  const user = await gh.directory.user(userId);
  if (!user || user.instanceId !== gh.instanceId) throw new InvalidGrant('the user of the grant no longer exists');
  if (user.state !== 'active') throw new InvalidGrant('the user of the grant is not active');
  return user;
}

/**
 * The browser session a grant was made in, which must not have ended (end_session,
 * docs/decisions.md#end-session) and must be `userId`'s. Without `userId` (exchanged tokens, whose
 * session may be the actor's) only that it has not ended.
 */
export async function activeSession(gh: Gatehouse, sessionId: string | null | undefined, userId: string | undefined): Promise<void> {
  if (!sessionId) return;
  const session = await sessionById(gh.db, sessionId);
  if (!session || (userId !== undefined && session.userId !== userId)) throw new InvalidGrant('the session of the grant has ended');
}

/** Where this server issues refresh tokens (domain/tokens/refresh-tokens.ts). */
export function refreshIssuer(gh: Pick<Gatehouse, 'instanceId' | 'config'>): RefreshIssuer {
  return { instanceId: gh.instanceId, refreshIdleSeconds: gh.config.lifetimes.refreshIdle };
}

/** Revokes a family (a reused code or refresh token). The revocation outlives every token it covers. */
export async function revokeFamily(gh: Gatehouse, grantId: string, lastExpiry?: Date | null): Promise<void> {
  const { accessToken, refreshAbsolute } = gh.config.lifetimes;
  const latest = lastExpiry ? lastExpiry.getTime() : Date.now() + refreshAbsolute * 1000;
  await gh.tokens.revokeGrant(grantId, new Date(latest + accessToken * 1000));
}

export interface UserTokenRequest {
  app: Application;
  user: User;
  /** The scopes of this access token, checked (checkScopes). */
  granted: GrantedScopes;
  grantId: string;
  sessionId: string | undefined;
  authTime: Date;
  amr: string[];
  nonce?: string | undefined;
  /** A refresh token already stored for the response. */
  refreshToken?: string | undefined;
  /** Token exchange: the access token type and audience chosen by the exchange, and the actor. */
  accessTokenType?: AccessTokenType | undefined;
  audience?: string[] | undefined;
  actor?: Record<string, unknown> | undefined;
  /** Audiences of the ID token besides the client (token exchange: the requested audience). */
  idTokenAudience?: string[] | undefined;
  /** The tokens expire no later than this (token exchange). */
  notAfter?: Date | undefined;
}

/**
 * The access token (the application's type, audience by scope, bound to the family and session),
 * the ID token when openid was granted, and the token endpoint's response.
 */
export async function mintUserTokens(gh: Gatehouse, request: UserTokenRequest): Promise<TokenResponse> {
  const { app, user, granted } = request;
  const type = request.accessTokenType ?? app.accessTokenType;
  const audience = request.audience ?? audienceFor(gh, app.clientId, app.projectId, granted);
  const roles = { user, scopes: granted.scopes, clientProjectId: app.projectId, audience, clientOrgId: app.orgId };
  const [accessRoles, idRoles] = await Promise.all([
    type === 'jwt' ? roleClaims(gh, 'access_token', { ...roles, appAsserts: app.accessTokenRoleAssertion }) : undefined,
    roleClaims(gh, 'id_token', { ...roles, appAsserts: app.idTokenRoleAssertion }),
  ]);
  const issued = await gh.tokens.issueAccessToken({
    instanceId: gh.instanceId,
    type,
    subject: user.id,
    clientId: app.clientId,
    scopes: granted.scopes,
    audience,
    jwtClaims: accessRoles,
    grantId: request.grantId,
    ...(request.sessionId ? { sessionId: request.sessionId } : {}),
    ...(request.actor ? { actor: request.actor } : {}),
    authTime: request.authTime,
    amr: request.amr,
    notAfter: request.notAfter,
  });
  const response = await accessTokenResponse(gh, issued, granted.scopes, {
    user,
    clientId: app.clientId,
    authTime: request.authTime,
    nonce: request.nonce,
    amr: request.amr,
    sessionId: request.sessionId,
    userinfoAssertion: app.idTokenUserinfoAssertion, // docs/endpoints.md#authorization-endpoint
    actor: request.actor,
    audience: request.idTokenAudience,
    notAfter: request.notAfter,
    roleClaims: idRoles,
  });
  if (request.refreshToken !== undefined) response.refresh_token = request.refreshToken;
  return response;
}
