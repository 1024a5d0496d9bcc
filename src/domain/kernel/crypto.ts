/**
 * Secrets at rest: argon2id for passwords and client secrets, SHA-256 for high-entropy tokens and
 * codes, AES-256-GCM under the master key for what must be read back (signing keys, OTP secrets).
 */
import { createCipheriv, createDecipheriv, createHash, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';

/** argon2id with OWASP's second recommended setting (m=19 MiB, t=2, p=1). */
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most two argon2 runs at a time, and never more than the cores this process may run on: each
 * holds 19 MiB, and running more in parallel on a server's few cores only adds memory (a burst of
 * logins otherwise grew the process by ~100 MiB) and gives a flood of wrong passwords more to chew on.
 * On one core (a container given one CPU, a process under taskset) two runs only take turns, each
 * evicting the other's 19 MiB from the caches: `npm run bench` pinned the server to one core and got
 * 52–57 password code flows/s with two at a time, 60–61 with one. Further runs wait their turn, but
 * only up to MAX_WAITING of them (docs/security.md 10.11): past that the queue is full and the
 * caller gets HashingBusy at once (503 with Retry-After; OAuth `temporarily_unavailable`), so a
 * burst of wrong secrets cannot stall every sign-in behind an unbounded queue. 64 waiters is about a
 * second of work on one core.
 */
const MAX_CONCURRENT_ARGON2 = Math.min(2, availableParallelism());
export const MAX_WAITING_ARGON2 = 64;
let running = 0;
const waiting: Array<() => void> = [];

/** The password-hashing queue is full: answer 503 with Retry-After and let the client come back. */
export class HashingBusy extends Error {
  readonly retryAfterSeconds = 1;
  constructor() {
    super('password hashing is saturated; try again shortly');
    this.name = 'HashingBusy';
  }
}

/** How many argon2 runs are running and waiting now (for observation: tests, metrics). */
export function hashingLoad(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

async function limited<T>(work: () => Promise<T>): Promise<T> {
  // A finishing run hands its slot straight to the next waiter, so the limit holds exactly.
  if (running >= MAX_CONCURRENT_ARGON2) {
    if (waiting.length >= MAX_WAITING_ARGON2) throw new HashingBusy();
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export function hashSecret(secret: string): Promise<string> {
  return limited(() => argon2Hash(secret, ARGON2));
}

export async function verifySecret(hash: string, secret: string): Promise<boolean> {
  return limited(async () => {
    try {
      return await argon2Verify(hash, secret);
    } catch {
      return false; // a malformed stored hash never matches
    }
  });
}

/** A hash used where no real one exists, so that unknown users cost the same time as known ones. */
let decoyHash: Promise<string> | undefined;
export function decoyVerify(secret: string): Promise<boolean> {
  decoyHash ??= hashSecret(randomBytes(16).toString('hex'));
  return decoyHash.then((hash) => verifySecret(hash, secret)).then(() => false);
}

/** SHA-256, hex: for random tokens and codes whose entropy makes a slow hash pointless. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two strings (length differences do not shortcut on content). */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

export class MasterKey {
  // KeyObjects, not Buffers: node:crypto checks a Buffer key's type on every createHmac and
  // createCipheriv (19 µs against 3 µs per HMAC on Node 24), and the login pages MAC several times a request.
  readonly #key: KeyObject;
  /** Derived keys by purpose, computed once. */
  readonly #derived = new Map<string, KeyObject>();

  constructor(base64: string) {
    const key = Buffer.from(base64, 'base64');
    if (key.length !== 32) throw new Error('the master key must be 32 bytes, base64-encoded');
    this.#key = createSecretKey(key);
  }

  /**
   * A 32-byte key for one purpose (HKDF-SHA256, RFC 5869), so that a MAC key never doubles as the
   * encryption key and purposes cannot stand in for each other (docs/security.md 10.7: browser
   * cookies, CSRF).
   */
  derive(purpose: string): KeyObject {
    let key = this.#derived.get(purpose);
    if (!key) this.#derived.set(purpose, (key = createSecretKey(Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `gatehouse ${purpose}`, 32)))));
    return key;
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
