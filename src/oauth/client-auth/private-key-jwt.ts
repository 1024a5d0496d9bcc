/**
 * private_key_jwt (OIDC Core §9, RFC 7523 §2.2 and §3): the client signs an assertion with a key
 * registered for it. iss and sub are the client id, aud names us, exp is near, and a jti is used once.
 */
import { createPublicKey } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { DB } from '../../store/database.ts';
import type { PublicKeyEntry } from '../../domain/directory.ts';
import { InvalidClient, InvalidRequest } from '../errors.ts';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Assertions are short-lived; one that claims to live longer than this is refused. */
const MAX_ASSERTION_SECONDS = 3600;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** The unverified iss of an assertion: who claims to be calling. */
export function assertionIssuer(assertion: string): string {
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidRequest('client_assertion is not a JWT');
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { iss?: unknown; sub?: unknown };
    if (typeof payload.iss !== 'string' || payload.iss === '') throw new Error('no iss');
    return payload.iss;
  } catch {
    throw new InvalidRequest('client_assertion is not a JWT');
  }
}

/** Keys of the client that may have signed: the one named by kid, or every valid one without a kid. */
export function candidateKeys(keys: readonly PublicKeyEntry[], kid: string | undefined, now: Date): PublicKeyEntry[] {
  const valid = keys.filter((k) => !k.expiresAt || k.expiresAt > now);
  return kid === undefined ? valid : valid.filter((k) => k.id === kid);
}

export interface AssertionCheck {
  clientId: string;
  keys: readonly PublicKeyEntry[];
  /** Accepted audiences: the issuer and the URL of the endpoint called. */
  audiences: string[];
  now: Date;
}

export async function verifyClientAssertion(db: DB, assertion: string, check: AssertionCheck): Promise<void> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
  } catch {
    throw new InvalidRequest('client_assertion is not a JWT');
  }
  const keys = candidateKeys(check.keys, kid, check.now);
  if (keys.length === 0) throw new InvalidClient('no registered key matches the assertion');
  let payload: { jti?: unknown; exp?: number; sub?: string } | undefined;
  for (const entry of keys) {
    try {
      const result = await jwtVerify(assertion, createPublicKey(entry.pem), {
        algorithms: ALGORITHMS,
        issuer: check.clientId,
        subject: check.clientId,
        audience: check.audiences,
        currentDate: check.now,
        requiredClaims: ['exp', 'jti'],
        clockTolerance: 5,
      });
      payload = result.payload;
      break;
    } catch (error) {
      if (error instanceof joseErrors.JWSSignatureVerificationFailed && keys.length > 1) continue;
      throw new InvalidClient(`client assertion rejected: ${error instanceof Error ? error.message : 'invalid'}`);
    }
  }
  if (!payload) throw new InvalidClient('client assertion signature does not verify');
  const exp = payload.exp!;
  if (exp - check.now.getTime() / 1000 > MAX_ASSERTION_SECONDS) throw new InvalidClient('client assertion lives too long');
  if (typeof payload.jti !== 'string' || payload.jti === '') throw new InvalidClient('client assertion has no jti');
  // RFC 7523 §3 item 7: a jti is accepted once within the assertion's lifetime.
  const inserted = await db
    .insertInto('used_assertions')
    .values({ id: `${check.clientId}\n${payload.jti}`, expires_at: new Date(exp * 1000) })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (inserted.numInsertedOrUpdatedRows === 0n) throw new InvalidClient('client assertion was replayed');
}
