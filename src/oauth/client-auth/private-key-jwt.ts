/**
 * private_key_jwt (OIDC Core §9, RFC 7523 §2.2 and §3): the client signs an assertion with a key
 * registered for it. iss and sub are the client id, aud names us, exp is near, and a jti is used once.
 */
import type { DB } from '../../store/database.ts';
import type { PublicKeyEntry } from '../../domain/directory.ts';
import { verifyAssertion } from '../assertions.ts';
import { InvalidClient } from '../errors.ts';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Assertions are short-lived; one that claims to live longer than this is refused. */
const MAX_ASSERTION_SECONDS = 3600;

export interface AssertionCheck {
  clientId: string;
  keys: readonly PublicKeyEntry[];
  /** Accepted audiences: the issuer and the URL of the endpoint called. */
  audiences: string[];
  now: Date;
}

export async function verifyClientAssertion(db: DB, assertion: string, check: AssertionCheck): Promise<void> {
  const payload = await verifyAssertion(assertion, {
    name: 'client_assertion',
    keys: check.keys,
    party: check.clientId,
    audiences: check.audiences,
    requiredClaims: ['exp', 'jti'],
    now: check.now,
    reject: (detail) => new InvalidClient(detail),
  });
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
