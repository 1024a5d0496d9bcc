/**
 * What the user grants share (authorization_code, refresh_token): the checks that a user may still
 * receive tokens, refresh tokens as stored rows, and minting the response (seed §4.5, SPEC §6).
 *
 * A refresh token is 256 random bits, stored as its SHA-256 in `tokens` (kind 'refresh'). Every token
 * of one sign-in shares a family id (`grant_id`, the code's grant id): revoking the family revokes its
 * refresh tokens and every access token minted from them. A refresh token lives for the idle lifetime
 * from its own issue, never past the absolute lifetime counted from the family's start.
 */
import type { Gatehouse } from '../../context.ts';
import { sha256 } from '../../domain/kernel/crypto.ts';
import type { Application, User } from '../../domain/instance/directory.ts';
import { newId, randomToken } from '../../domain/kernel/ids.ts';
import { sessionById } from '../../domain/sign-in/sessions.ts';
import type { DB } from '../../store/database.ts';
import { insertTokens } from '../../store/tokens.ts';
import type { TokenRow } from '../../store/schema.ts';
import type { AuthenticatedClient } from '../client-auth/index.ts';
import { InvalidGrant, UnauthorizedClient } from '../errors.ts';
import { audienceFor, type GrantedScopes } from '../scopes.ts';
import type { TokenResponse } from './grant.ts';
import { roleClaims } from '../role-claims.ts';
import { accessTokenResponse } from './token-response.ts';
import type { AccessTokenType } from '../../oidc/vocabulary.ts';

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
 * The browser session a grant was made in, which must not have ended (end_session, SPEC §6) and
 * must be `userId`'s. Without `userId` (exchanged tokens, whose session may be the actor's) only
 * that it has not ended.
 */
export async function activeSession(gh: Gatehouse, sessionId: string | null | undefined, userId: string | undefined): Promise<void> {
  if (!sessionId) return;
  const session = await sessionById(gh.db, sessionId);
  if (!session || (userId !== undefined && session.userId !== userId)) throw new InvalidGrant('the session of the grant has ended');
}

/** Revokes a family (a reused code or refresh token). The revocation outlives every token it covers. */
export async function revokeFamily(gh: Gatehouse, grantId: string, lastExpiry?: Date | null): Promise<void> {
  const { accessToken, refreshAbsolute } = gh.config.lifetimes;
  const latest = lastExpiry ? lastExpiry.getTime() : Date.now() + refreshAbsolute * 1000;
  await gh.tokens.revokeGrant(grantId, new Date(latest + accessToken * 1000));
}

/** What a refresh token carries from the sign-in that started its family. */
export interface RefreshFamily {
  grantId: string;
  clientId: string;
  subject: string;
  sessionId: string | undefined;
  /** The scopes of the original grant: a refresh may narrow them for one access token, never widen. */
  scopes: string[];
  audience: string[];
  authTime: Date;
  amr: string[];
  /** The end of the family: absolute lifetime from its start. */
  absoluteExpiresAt: Date;
  /** RFC 8693 §4.1: who acts for the subject, in families started by a token exchange. */
  actor?: Record<string, unknown> | undefined;
  /**
   * Refresh tokens issued by a token exchange: the access token type they mint. Their audience and
   * actor stay those of the exchange; a sign-in family's audience follows its scopes.
   */
  exchangedAs?: AccessTokenType | undefined;
  /** Refresh tokens of an impersonation: the actor's right is checked again at every refresh. */
  impersonation?: boolean | undefined;
}

/** The family of a stored refresh token row. */
export function familyOf(row: TokenRow): RefreshFamily {
  return {
    grantId: row.grant_id ?? row.id,
    clientId: row.client_id,
    subject: row.subject,
    sessionId: row.session_id ?? undefined,
    scopes: row.scopes,
    audience: row.audience,
    authTime: row.auth_time ?? row.created_at,
    amr: row.amr ?? [],
    absoluteExpiresAt: row.absolute_expires_at ?? row.expires_at,
    actor: row.actor ?? undefined,
    exchangedAs: row.exchanged_as ?? undefined,
    impersonation: row.impersonation,
  };
}

/** Stores a new refresh token of the family (`db` may be a transaction) and returns it. */
export async function storeRefreshToken(gh: Gatehouse, db: DB, family: RefreshFamily, now = new Date()): Promise<string> {
  const token = randomToken(32);
  const idle = now.getTime() + gh.config.lifetimes.refreshIdle * 1000;
  await insertTokens(db, [
    {
      id: newId(),
      instance_id: gh.instanceId,
      kind: 'refresh',
      token_hash: sha256(token),
      client_id: family.clientId,
      subject: family.subject,
      scopes: family.scopes,
      audience: family.audience,
      grant_id: family.grantId,
      session_id: family.sessionId ?? null,
      auth_time: family.authTime,
      amr: family.amr,
      created_at: now,
      expires_at: new Date(Math.min(idle, family.absoluteExpiresAt.getTime())),
      absolute_expires_at: family.absoluteExpiresAt,
      actor: family.actor ? JSON.stringify(family.actor) : null,
      exchanged_as: family.exchangedAs ?? null,
      impersonation: family.impersonation === true,
    },
  ]);
  return token;
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
 * the ID token when openid was granted, and the response of seed §4.5.
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
    userinfoAssertion: app.idTokenUserinfoAssertion, // seed §4.4
    actor: request.actor,
    audience: request.idTokenAudience,
    notAfter: request.notAfter,
    roleClaims: idRoles,
  });
  if (request.refreshToken !== undefined) response.refresh_token = request.refreshToken;
  return response;
}
