/**
 * Client secrets are stored as argon2id hashes. Verifying one costs tens of milliseconds, which the
 * hot endpoints (token, introspection) cannot pay per request, so a successful verification is
 * remembered as an HMAC of the secret under a per-process random key, tied to the stored hash: a
 * changed secret (new hash) or a wrong secret always takes the slow path again. The fingerprint is
 * SHA-256 over a per-process random salt and the secret (one-shot crypto.hash is several times cheaper
 * than an HMAC object per request); the salt keeps a memory dump from yielding look-up-able hashes.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { verifySecret } from '../../domain/kernel/crypto.ts';

const salt = randomBytes(32).toString('base64');
const verified = new Map<string, Buffer>();
const MAX_ENTRIES = 10_000;

function fingerprint(secret: string): Buffer {
  return hash('sha256', `${salt}\n${secret}`, 'buffer');
}

/**
 * Verifications under way, by stored hash and fingerprint: a burst of requests with the same
 * credentials (a client's first requests after a start) runs argon2 once, not once per request;
 * each run holds 19 MiB, so this also bounds memory.
 */
const inFlight = new Map<string, Promise<boolean>>();

export async function secretMatches(storedHash: string, secret: string): Promise<boolean> {
  const mark = fingerprint(secret);
  const known = verified.get(storedHash);
  if (known && timingSafeEqual(known, mark)) return true;
  const key = `${storedHash}\n${mark.toString('base64')}`;
  let pending = inFlight.get(key);
  if (!pending) {
    pending = verifySecret(storedHash, secret).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  if (!(await pending)) return false;
  if (verified.size >= MAX_ENTRIES) verified.clear();
  verified.set(storedHash, mark);
  return true;
}
