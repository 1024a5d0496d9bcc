/**
 * ID tokens (OIDC Core §2, §3.1.3.6, §3.2.2.10). When an access token is issued with the ID token, the
 * profile, email, phone and address claims stay out of it (seed §4.4) unless the application asks for
 * them with id_token_userinfo_assertion.
 */
import type { Gatehouse } from '../context.ts';
import type { User } from '../domain/directory.ts';
import { verifyOwnJwt } from '../domain/own-jwt.ts';
import { cappedLifetime, halfHash } from '../domain/tokens.ts';
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
  };
  const { jwt } = await gh.tokens.sign(payload, 'JWT');
  return jwt;
}

/** The claims of an ID token we signed (signature, typ, iss, exp unless `allowExpired`); undefined otherwise. */
export function verifyOwnIdToken(gh: Gatehouse, token: string, options: { allowExpired: boolean; now?: number }): Record<string, unknown> | undefined {
  const now = options.now ?? Date.now();
  if (token.length > 8192) return undefined;
  const verified = verifyOwnJwt(token, { typ: 'JWT', issuer: gh.config.externalUrl, now, allowExpired: options.allowExpired }, (kid) =>
    gh.keys.verificationKey(kid, new Date(now)),
  );
  return verified?.payload;
}

export interface IdTokenHint {
  sub: string;
  /** The client the ID token was issued to. */
  azp: string;
  sid: string | undefined;
}

/**
 * An id_token_hint (OIDC Core §3.1.2.1, RP-Initiated Logout §2): an ID token we issued, signature and
 * issuer checked; an expired one is accepted, since a hint only names the subject. Undefined when
 * it is not one of ours.
 */
export function verifyIdTokenHint(gh: Gatehouse, token: string, now = Date.now()): IdTokenHint | undefined {
  const payload = verifyOwnIdToken(gh, token, { allowExpired: true, now });
  if (!payload) return undefined;
  const { sub, azp, aud, sid } = payload;
  const client = typeof azp === 'string' ? azp : Array.isArray(aud) && typeof aud[0] === 'string' ? aud[0] : typeof aud === 'string' ? aud : undefined;
  if (typeof sub !== 'string' || client === undefined) return undefined;
  return { sub, azp: client, sid: typeof sid === 'string' ? sid : undefined };
}
