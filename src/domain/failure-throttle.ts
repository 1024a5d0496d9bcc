/**
 * Failed sign-ins and failed client authentications per client address (SPEC 10.11): at most
 * `perMinute` failures in a fixed one-minute window; past that, the address is refused (HTTP 429
 * with Retry-After) *before* any password hash is computed, so a flood of guesses costs the server
 * almost nothing and cannot lock accounts faster than the limit allows.
 *
 * Per process, like the key-set limit: several nodes each allow the limit (the address's total is
 * then nodes × limit), which keeps the check free of database round trips on the hot paths.
 * Only failures count; a correct password or secret is never throttled by its own success.
 */
export class FailureThrottle {
  readonly #limit: number;
  #window = 0;
  #counts = new Map<string, number>();

  /** `perMinute` 0 turns the throttle off. */
  constructor(perMinute: number) {
    this.#limit = perMinute;
  }

  #roll(now: number): number {
    const window = Math.floor(now / 60_000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    return window;
  }

  /** Seconds until the address may try again, or 0 when it may try now. */
  retryAfter(address: string, now = Date.now()): number {
    if (this.#limit === 0) return 0;
    const window = this.#roll(now);
    if ((this.#counts.get(address) ?? 0) < this.#limit) return 0;
    return Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000));
  }

  /** Counts one failure of the address. */
  recordFailure(address: string, now = Date.now()): void {
    if (this.#limit === 0) return;
    this.#roll(now);
    this.#counts.set(address, (this.#counts.get(address) ?? 0) + 1);
  }
}

/** Raised where a throttled address tries again; each world renders it (429 + Retry-After). */
export class Throttled extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('too many failed attempts from this address');
    this.name = 'Throttled';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
