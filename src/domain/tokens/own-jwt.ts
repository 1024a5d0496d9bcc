/**
 * Signing and verification of the JWTs Gatehouse itself issues (access tokens, ID tokens; verified on
 * every API call and introspection). jose signs and verifies through WebCrypto, whose asynchronous
 * job costs more than the RSA operation itself; our own tokens have one known shape and keys we hold
 * as KeyObjects, so node:crypto signs and verifies them synchronously here (RFC 7515 §5.1 compact
 * serialization). Client assertions from outside have their signature checked with node:crypto too,
 * but their headers and claims under stricter rules (oauth/assertions.ts); key files go through jose.
 */
import type { KeyObject } from 'node:crypto';
import type { SigningAlg } from '../../config/index.ts';
import { JWS_ALGORITHMS, signJws, verifyJws } from './jws.ts';

export interface VerificationKey {
  alg: SigningAlg;
  key: KeyObject;
}

export interface VerifiedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A compact JWS of our own: `header` is the protected header (alg, kid, typ), `payload` the claims. */
export function signOwnJwt(header: Record<string, unknown>, payload: Record<string, unknown>, alg: SigningAlg, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = signJws(JWS_ALGORITHMS[alg], key, Buffer.from(input, 'ascii'));
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * Verifies signature, `typ`, `iss`, `exp` and `nbf` (RFC 7519 §7.2, RFC 9068 §4). Undefined for
 * anything that is not a valid token of ours.
 */
export function verifyOwnJwt(
  token: string,
  expected: { typ: string; issuer: string; now: number; allowExpired?: boolean },
  keyFor: (kid: string) => VerificationKey | undefined,
): VerifiedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = decodeJson(encodedHeader);
  if (!header || header['typ'] !== expected.typ || typeof header['kid'] !== 'string' || header['crit'] !== undefined) return undefined;
  const key = keyFor(header['kid']);
  if (!key || header['alg'] !== key.alg) return undefined;
  const valid = verifyJws(JWS_ALGORITHMS[key.alg], key.key, Buffer.from(`${encodedHeader}.${encodedPayload}`, 'ascii'), Buffer.from(encodedSignature, 'base64url'));
  if (!valid) return undefined;
  const payload = decodeJson(encodedPayload);
  if (!payload || payload['iss'] !== expected.issuer) return undefined;
  const seconds = Math.floor(expected.now / 1000);
  const { exp, nbf } = payload;
  if (typeof exp !== 'number' || (exp <= seconds && expected.allowExpired !== true)) return undefined;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > seconds)) return undefined;
  return { header, payload };
}
