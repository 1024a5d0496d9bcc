/**
 * private_key_jwt (OIDC Core §9, RFC 7523 §2.2 and §3): the client signs an assertion with a key
 * registered for it. iss and sub are the client id, aud names us, exp and iat are near, and the
 * assertion (by its jti, which OIDC Core §9 requires) is accepted once (docs/security.md 10.9).
 */
import type { DB } from '../../store/database.ts';
import type { PublicKeyEntry } from '../../domain/instance/directory.ts';
import { verifyOneTimeAssertion } from '../assertions.ts';
import { InvalidClient } from '../errors.ts';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export interface AssertionCheck {
  clientId: string;
  keys: readonly PublicKeyEntry[];
  /** Accepted audiences: the issuer, the token endpoint and the URL of the endpoint called. */
  audiences: string[];
  now: Date;
}

export async function verifyClientAssertion(db: DB, assertion: string, check: AssertionCheck): Promise<void> {
  await verifyOneTimeAssertion(db, assertion, {
    name: 'client_assertion',
    keys: check.keys,
    party: check.clientId,
    audiences: check.audiences,
    requiredClaims: ['exp', 'iat', 'jti'],
    now: check.now,
    reject: (detail) => new InvalidClient(detail),
  });
}
