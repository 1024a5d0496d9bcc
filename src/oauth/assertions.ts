/**
 * JWT assertions signed with a registered key (RFC 7523 §3), as both client authentication
 * (private_key_jwt) and the JWT profile grant use them: who claims to have signed, which registered
 * keys may have, and the signature and claims checked with jose.
 */
import { createPublicKey } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { PublicKeyEntry } from '../domain/directory.ts';
import { InvalidRequest, type OAuthError } from './errors.ts';

/** Signature algorithms accepted on assertions (also published in discovery). */
export const ASSERTION_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** The unverified iss of an assertion (the parameter `name`): who claims to be calling. */
export function unverifiedIssuer(assertion: string, name: string): string {
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidRequest(`${name} is not a JWT`);
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { iss?: unknown };
    if (typeof payload.iss !== 'string' || payload.iss === '') throw new Error('no iss');
    return payload.iss;
  } catch {
    throw new InvalidRequest(`${name} is not a JWT`);
  }
}

/** Keys that may have signed: the one named by kid, or every valid one without a kid. */
export function candidateKeys(keys: readonly PublicKeyEntry[], kid: string | undefined, now: Date): PublicKeyEntry[] {
  const valid = keys.filter((k) => !k.expiresAt || k.expiresAt > now);
  return kid === undefined ? valid : valid.filter((k) => k.id === kid);
}

export interface AssertionRules {
  /** The request parameter, for messages ("client_assertion", "assertion"). */
  name: string;
  keys: readonly PublicKeyEntry[];
  /** iss must name this party, and so must sub unless `anySubject` (the caller checks sub itself). */
  party: string;
  anySubject?: boolean;
  audiences: string[];
  requiredClaims: string[];
  /** The assertion must have been issued (iat) at most this long ago. */
  maxAgeSeconds?: number;
  now: Date;
  /** The error for an assertion that does not verify (invalid_client or invalid_grant). */
  reject: (detail: string) => OAuthError;
}

/** The verified payload; throws `rules.reject(...)` when no candidate key verifies it. */
export async function verifyAssertion(assertion: string, rules: AssertionRules): Promise<JWTPayload> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
  } catch {
    throw new InvalidRequest(`${rules.name} is not a JWT`);
  }
  const keys = candidateKeys(rules.keys, kid, rules.now);
  if (keys.length === 0) throw rules.reject('no registered key matches the assertion');
  for (const entry of keys) {
    try {
      const { payload } = await jwtVerify(assertion, createPublicKey(entry.pem), {
        algorithms: ASSERTION_ALGORITHMS,
        issuer: rules.party,
        ...(rules.anySubject ? {} : { subject: rules.party }),
        ...(rules.maxAgeSeconds !== undefined ? { maxTokenAge: rules.maxAgeSeconds } : {}),
        audience: rules.audiences,
        currentDate: rules.now,
        requiredClaims: rules.requiredClaims,
        clockTolerance: 5,
      });
      return payload;
    } catch (error) {
      if (error instanceof joseErrors.JWSSignatureVerificationFailed && keys.length > 1) continue;
      throw rules.reject(`${rules.name} rejected: ${error instanceof Error ? error.message : 'invalid'}`);
    }
  }
  throw rules.reject(`${rules.name} signature does not verify`);
}
