/**
 * Identifiers in ZITADEL's shape: decimal strings of about 18 digits, ordered by creation time
 * (milliseconds since 2020 shifted left by 22 bits, plus 22 random bits).
 */
import { randomBytes, randomInt } from 'node:crypto';

const EPOCH = 1577836800000n; // 2020-01-01T00:00:00Z

export function newId(): string {
  const millis = BigInt(Date.now()) - EPOCH;
  return ((millis << 22n) | BigInt(randomInt(0, 1 << 22))).toString();
}

/** A random URL-safe string carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
