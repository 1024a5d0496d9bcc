/**
 * ID tokens this issuer signed, read back: the subject token of a token exchange
 * (oauth/grants/exchange-tokens.ts) and the id_token_hint of /authorize and of the logout
 * (http/logout.ts). A rule with no HTTP in it, here so that the logout, shared by
 * /oidc/v1/end_session and the login UI's confirmation page, can use it; issuing ID tokens stays
 * with the endpoints (oauth/id-token.ts).
 */
import { verifyOwnJwt } from './own-jwt.ts';
import type { Config } from '../../config/index.ts';
import type { KeyStore } from './keys.ts';

/** What verifying one of our ID tokens uses: the issuer and the published keys. */
export interface IdTokenVerifier {
  config: Pick<Config, 'externalUrl'>;
  keys: Pick<KeyStore, 'verificationKey'>;
}

/** The claims of an ID token we signed (signature, typ, iss, exp unless `allowExpired`); undefined otherwise. */
export function verifyOwnIdToken(ctx: IdTokenVerifier, token: string, options: { allowExpired: boolean; now?: number }): Record<string, unknown> | undefined {
  const now = options.now ?? Date.now();
  if (token.length > 8192) return undefined;
  const verified = verifyOwnJwt(token, { typ: 'JWT', issuer: ctx.config.externalUrl, now, allowExpired: options.allowExpired }, (kid) =>
    ctx.keys.verificationKey(kid, new Date(now)),
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
export function verifyIdTokenHint(ctx: IdTokenVerifier, token: string, now = Date.now()): IdTokenHint | undefined {
  const payload = verifyOwnIdToken(ctx, token, { allowExpired: true, now });
  if (!payload) return undefined;
  const { sub, azp, aud, sid } = payload;
  const client = typeof azp === 'string' ? azp : Array.isArray(aud) && typeof aud[0] === 'string' ? aud[0] : typeof aud === 'string' ? aud : undefined;
  if (typeof sub !== 'string' || client === undefined) return undefined;
  return { sub, azp: client, sid: typeof sid === 'string' ? sid : undefined };
}
