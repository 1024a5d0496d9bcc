/**
 * Client secrets are stored as argon2id hashes. Verifying one costs tens of milliseconds, which the
 * hot endpoints (token, introspection) cannot pay per request, so a successful verification is
 * remembered as an HMAC of the secret under a per-process random key, tied to the stored hash: a
 * changed secret (new hash) or a wrong secret always takes the slow path again.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { verifySecret } from '../../domain/crypto.ts';

const processKey = randomBytes(32);
const verified = new Map<string, Buffer>();
const MAX_ENTRIES = 10_000;

function fingerprint(secret: string): Buffer {
  return createHmac('sha256', processKey).update(secret).digest();
}

export async function secretMatches(storedHash: string, secret: string): Promise<boolean> {
  const mark = fingerprint(secret);
  const known = verified.get(storedHash);
  if (known && timingSafeEqual(known, mark)) return true;
  if (!(await verifySecret(storedHash, secret))) return false;
  if (verified.size >= MAX_ENTRIES) verified.clear();
  verified.set(storedHash, mark);
  return true;
}
