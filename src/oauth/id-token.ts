/**
 * ID tokens (OIDC Core §2, §3.1.3.6, §3.2.2.10). When an access token is issued with the ID token, the
 * profile, email, phone and address claims stay out of it
 * (docs/endpoints.md#authorization-endpoint) unless the application asks for them with
 * id_token_userinfo_assertion.
 */
import type { Gatehouse } from '../context.ts';
import type { User } from '../domain/instance/directory.ts';
import { cappedLifetime, halfHash } from '../domain/tokens/tokens.ts';
import { userClaims } from './claims.ts';

export interface IdTokenRequest {
  user: User;
  clientId: string;
  scopes: readonly string[];
  authTime: Date;
  nonce?: string | undefined;
  amr?: readonly string[] | undefined;
  sessionId?: string | undefined;
  accessToken?: string | undefined;
  code?: string | undefined;
  userinfoAssertion?: boolean;
  actor?: Record<string, unknown> | undefined;
  /** Audiences besides the client (token exchange, RFC 8693 §2.1 audience); azp stays the client. */
  audience?: readonly string[] | undefined;
  /** The token expires no later than this (token exchange). */
  notAfter?: Date | undefined;
  /** Role claims the application asserts in ID tokens (docs/management-api.md#roles, oauth/role-claims.ts). */
  roleClaims?: Record<string, unknown> | undefined;
}

export async function issueIdToken(gh: Gatehouse, request: IdTokenRequest, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  const signer = await gh.keys.signer(new Date(now));
  const withUserinfo = request.accessToken === undefined || request.userinfoAssertion === true;
  const payload: Record<string, unknown> = {
    iss: gh.config.externalUrl,
    sub: request.user.id,
    aud: request.audience ? [...new Set([request.clientId, ...request.audience])] : [request.clientId],
    azp: request.clientId,
    exp: iat + cappedLifetime(iat, gh.config.lifetimes.idToken, request.notAfter),
    iat,
    auth_time: Math.floor(request.authTime.getTime() / 1000),
    ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
    ...(request.amr && request.amr.length > 0 ? { amr: request.amr } : {}),
    ...(request.sessionId ? { sid: request.sessionId } : {}),
    ...(request.accessToken ? { at_hash: halfHash(request.accessToken, signer.alg) } : {}),
    ...(request.code ? { c_hash: halfHash(request.code, signer.alg) } : {}),
    ...(request.actor ? { act: request.actor } : {}),
    ...(withUserinfo ? userClaims(request.user, request.scopes) : {}),
    ...request.roleClaims,
  };
  const { jwt } = await gh.tokens.sign(payload, 'JWT');
  return jwt;
}
