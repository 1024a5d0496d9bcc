/**
 * The tokens a token exchange accepts (RFC 8693 §3, docs/token-exchange.md#token-types) and how
 * each is verified. Every refusal is invalid_request (RFC 8693 §2.2.2: an invalid or unacceptable
 * subject or actor token); the description names the parameter, never why another client's token
 * was refused.
 *
 * | type           | subject_token                      | actor_token | requested_token_type |
 * |----------------|------------------------------------|-------------|----------------------|
 * | access_token   | JWT or opaque                      | yes         | opaque access token  |
 * | refresh_token  | no                                 | no          | no                   |
 * | id_token       | yes                                | yes         | ID token             |
 * | jwt            | signed by the client, with actor   | no          | JWT access token     |
 * | <service> user_id | a user id, with actor           | no          | no                   |
 */
import type { Gatehouse } from '../../context.ts';
import type { Application, User } from '../../domain/instance/directory.ts';
import { activeTokenUser } from '../../domain/tokens/token-user.ts';
import { meantFor } from '../token-audience.ts';
import { verifyAssertion } from '../assertions.ts';
import { InvalidRequest } from '../errors.ts';
import { verifyOwnIdToken } from '../../domain/tokens/own-id-token.ts';

import { ACCESS_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_TOKEN_TYPE, REFRESH_TOKEN_TYPE, userIdTokenType } from '../../oidc/vocabulary.ts';
import type { AuthMethod } from '../../oidc/vocabulary.ts';

/** A verified subject or actor token: whom it names and what it carries. */
export interface PresentedToken {
  type: string;
  user: User;
  /** Undefined for tokens that carry no scopes (ID token, self-signed JWT, user id). */
  scopes: string[] | undefined;
  audience: string[];
  /** The token's own `act` claim (never taken from a self-signed JWT). */
  actor: Record<string, unknown> | undefined;
  sessionId: string | undefined;
  /** The family (code or refresh grant) the token belongs to; ID tokens and named subjects have none. */
  grantId: string | undefined;
  authTime: Date | undefined;
  amr: string[] | undefined;
  /** When the token expires; undefined for a named subject (it is no token). */
  expiresAt: Date | undefined;
}

/**
 * The subject_token column of docs/token-exchange.md#token-types: a token of the subject ('token':
 * access or ID token), or a subject the actor names ('named': user id, client-signed JWT), resolved
 * only after the actor token verified, so that nobody without an actor learns which ids exist.
 */
export type SubjectKind = 'token' | 'named';

export function subjectKind(gh: Gatehouse, type: string): SubjectKind {
  if (type === ACCESS_TOKEN_TYPE || type === ID_TOKEN_TYPE) return 'token';
  if (type === JWT_TOKEN_TYPE || type === userIdTokenType(gh.config.serviceName)) return 'named';
  if (type === REFRESH_TOKEN_TYPE) throw new InvalidRequest('a refresh token cannot be exchanged');
  throw new InvalidRequest(`subject_token_type ${type} is not supported`);
}

/** The actor_token column of docs/token-exchange.md#token-types: access tokens and ID tokens only. */
export function checkActorType(gh: Gatehouse, type: string): void {
  if (type === ACCESS_TOKEN_TYPE || type === ID_TOKEN_TYPE) return;
  const known = type === REFRESH_TOKEN_TYPE || type === JWT_TOKEN_TYPE || type === userIdTokenType(gh.config.serviceName);
  throw new InvalidRequest(known ? `actor_token_type ${type} is not allowed` : `actor_token_type ${type} is not supported`);
}


function invalid(name: string): InvalidRequest {
  return new InvalidRequest(`${name} is invalid, expired, revoked or not meant for this client`);
}

function stringList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** An access token (JWT or opaque) of ours, valid, unrevoked, for this client, its users active. */
async function verifyAccess(gh: Gatehouse, token: string, app: Application, name: string): Promise<PresentedToken> {
  const claims = await gh.tokens.verifyAccessToken(token);
  // the introspection rule: meant for this client
  if (!claims || !(await meantFor(gh, claims, app))) throw invalid(name);
  const user = await activeTokenUser(gh.directory, gh.instanceId, claims);
  if (!user) throw invalid(name);
  return {
    type: ACCESS_TOKEN_TYPE,
    user,
    scopes: claims.scopes,
    audience: claims.audience,
    actor: claims.actor,
    sessionId: claims.sessionId,
    grantId: claims.grantId,
    authTime: claims.authTime,
    amr: claims.amr,
    expiresAt: new Date(claims.exp * 1000),
  };
}

/**
 * An ID token of ours, unexpired, issued to this client (aud or azp), its browser session not
 * ended and its users active. ID tokens carry no scopes.
 */
async function verifyIdToken(gh: Gatehouse, token: string, app: Application, name: string): Promise<PresentedToken> {
  const payload = verifyOwnIdToken(gh, token, { allowExpired: false });
  if (!payload) throw invalid(name);
  const { sub, aud, azp, sid, act, auth_time: authTime, amr, exp } = payload;
  const audience = stringList(aud) ?? [];
  const client = typeof azp === 'string' ? azp : audience[0];
  if (typeof sub !== 'string' || !(azp === app.clientId || (client !== undefined && (await meantFor(gh, { clientId: client, audience }, app))))) throw invalid(name);
  const sessionId = typeof sid === 'string' ? sid : undefined;
  if (sessionId !== undefined && (await gh.tokens.revoked([sessionId]))) throw invalid(name);
  const actor = typeof act === 'object' && act !== null && !Array.isArray(act) ? (act as Record<string, unknown>) : undefined;
  const user = await activeTokenUser(gh.directory, gh.instanceId, { sub, actor, iat: typeof payload['iat'] === 'number' ? payload['iat'] : undefined });
  if (!user) throw invalid(name);
  return {
    type: ID_TOKEN_TYPE,
    user,
    scopes: undefined,
    audience,
    actor,
    sessionId,
    grantId: undefined,
    authTime: typeof authTime === 'number' ? new Date(authTime * 1000) : undefined,
    amr: stringList(amr),
    expiresAt: typeof exp === 'number' ? new Date(exp * 1000) : undefined,
  };
}

/**
 * A subject_token or actor_token of type access_token or id_token. ID tokens travel through
 * browsers (id_token_hint in logout URLs) and cannot be revoked with their grant, so only a client
 * that authenticates may present one: a public client could not tell its own from a leaked one.
 */
export function verifyToken(gh: Gatehouse, token: string, type: string, client: { app: Application; method: AuthMethod }, name: string): Promise<PresentedToken> {
  if (type !== ID_TOKEN_TYPE) return verifyAccess(gh, token, client.app, name);
  if (client.method === 'none') throw new InvalidRequest(`${name} of type id_token is accepted only from a client that authenticates`);
  return verifyIdToken(gh, token, client.app, name);
}

/** Self-signed JWTs are short-lived statements: at most an hour old (as ZITADEL). */
const SELF_SIGNED_MAX_AGE_SECONDS = 3600;

/**
 * The user id a named subject stands for: the sub of a JWT the client signed with one of its
 * registered keys (iss = client id, aud = us, exp and iat required), or the user id itself.
 */
export async function namedSubjectId(gh: Gatehouse, token: string, type: string, app: Application, endpointUrl: string): Promise<string> {
  if (type !== JWT_TOKEN_TYPE) return token;
  if (app.keys.length === 0) throw new InvalidRequest('subject_token of type jwt needs a key registered for the client');
  const payload = await verifyAssertion(token, {
    name: 'subject_token',
    keys: app.keys,
    party: app.clientId,
    anySubject: true,
    audiences: [gh.config.externalUrl, endpointUrl],
    requiredClaims: ['exp', 'iat', 'sub'],
    maxAgeSeconds: SELF_SIGNED_MAX_AGE_SECONDS,
    now: new Date(),
    reject: (detail) => new InvalidRequest(detail),
  });
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidRequest('subject_token has no sub');
  return payload.sub;
}

/** A named subject as a presented token: the user's own claims, no scopes, no audience. */
export function namedSubject(type: string, user: User): PresentedToken {
  return { type, user, scopes: undefined, audience: [], actor: undefined, sessionId: undefined, grantId: undefined, authTime: undefined, amr: undefined, expiresAt: undefined };
}
