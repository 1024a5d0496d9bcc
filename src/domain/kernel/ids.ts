/**
 * Identifiers in ZITADEL's shape: decimal strings of about 18 digits, ordered by creation time
 * (milliseconds since 2020 shifted left by 22 bits, plus 22 random bits).
 */
import { randomFillSync, randomInt } from 'node:crypto';

const EPOCH = 1577836800000n; // 2020-01-01T00:00:00Z

/** The last id this process handed out. */
let last = 0n;

/**
 * A new id, greater than every id this process handed out before. Random bits alone collided: at
 * 8,000 tokens a second, two of the same millisecond drew the same 22 bits about once every two and
 * a half minutes, and the token's insert failed on the primary key (a batch insert measurement hit
 * it). An id that would not be greater is the last one plus one, so the ids of one process never
 * repeat, also when the clock steps back. Two processes still draw their low bits at random.
 */
export function newId(): string {
  const drawn = ((BigInt(Date.now()) - EPOCH) << 22n) | BigInt(randomInt(0, 1 << 22));
  last = drawn > last ? drawn : last + 1n;
  return last.toString();
}

/**
 * The millisecond an id of this shape was made, when `id` is one (a decimal string); undefined for
 * anything else. A token's jti is such an id: its issue time to the millisecond, where `iat` has
 * only the second.
 */
export function idTime(id: string): number | undefined {
  if (!/^\d{1,24}$/.test(id)) return undefined;
  return Number((BigInt(id) >> 22n) + EPOCH);
}

/**
 * Random bytes are drawn from the operating system's generator 4 KiB at a time, and each byte is
 * handed out once: one call for 128 opaque tokens instead of one call and one allocation per token
 * (9 µs of each client_credentials request in the profile). Node's own randomUUID and randomInt keep
 * such a cache too.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let used = POOL_BYTES;

/** A random URL-safe string carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes)).toString('base64url');
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const token = pool.toString('base64url', used, used + bytes);
  pool.fill(0, used, used + bytes); // handed out: nothing of it stays in the pool
  used += bytes;
  return token;
}
