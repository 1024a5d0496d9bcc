/**
 * Failed sign-ins and failed client authentications per client address (docs/security.md 10.11): at most
 * `perMinute` failures in a fixed one-minute window; past that, the address is refused (HTTP 429
 * with Retry-After) *before* any password hash is computed, so a flood of guesses costs the server
 * almost nothing and cannot lock accounts faster than the limit allows.
 *
 * Per process, like the key-set limit: several nodes each allow the limit (the address's total is
 * then nodes × limit), which keeps the check free of database round trips on the hot paths.
 * Only failures count; a correct password or secret is never throttled by its own success.
 *
 * Two ways to count. Sign-ins (passwords and one-time passwords, low-entropy and guessed by people)
 * `take` an attempt before checking it and give it back when it `succeeded`, so a burst of parallel
 * guesses cannot all pass the check before the first of them has failed. Client authentication
 * checks `retryAfter` and `recordFailure`s afterwards: busy clients authenticate many times in
 * parallel from one address, client secrets are generated (not guessed), and a burst of wrong ones
 * is bounded by the hashing queue (crypto.ts), which answers 503 when full.
 */
export class FailureThrottle {
  readonly #limit: number;
  readonly #phaseMs: number;
  #window = 0;
  #counts = new Map<string, number>();

  /**
   * `perMinute` 0 turns the throttle off. The windows start on the minute, or `phaseMs` after it: a
   * test that must not see a window end in its middle starts one when it begins.
   */
  constructor(perMinute: number, { phaseMs = 0 }: { phaseMs?: number } = {}) {
    this.#limit = perMinute;
    this.#phaseMs = phaseMs;
  }

  /** Seconds from `now` to the end of its window. */
  #secondsLeft(window: number, now: number): number {
    return Math.max(1, Math.ceil(((window + 1) * 60_000 + this.#phaseMs - now) / 1000));
  }

  #roll(now: number): number {
    const window = Math.floor((now - this.#phaseMs) / 60_000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    return window;
  }

  /** Seconds until the address may try again, or 0 when it may try now (nothing is counted). */
  retryAfter(address: string, now = Date.now()): number {
    if (this.#limit === 0) return 0;
    const window = this.#roll(now);
    if ((this.#counts.get(address) ?? 0) < this.#limit) return 0;
    return this.#secondsLeft(window, now);
  }

  /** Counts one failure of the address (after the work: for callers whose bursts are bounded otherwise). */
  recordFailure(address: string, now = Date.now()): void {
    if (this.#limit === 0) return;
    this.#roll(now);
    this.#counts.set(address, (this.#counts.get(address) ?? 0) + 1);
  }

  /**
   * Takes one attempt for the address: the seconds until it may try again when it is at its limit
   * (nothing is taken then), else 0 with the attempt counted. The attempt is counted *before* the
   * work, so that parallel requests cannot all pass the check before any of them has failed; a
   * successful attempt gives its count back with `succeeded`, so only failures stay counted.
   */
  take(address: string, now = Date.now()): number {
    if (this.#limit === 0) return 0;
    const window = this.#roll(now);
    const count = this.#counts.get(address) ?? 0;
    if (count >= this.#limit) return this.#secondsLeft(window, now);
    this.#counts.set(address, count + 1);
    return 0;
  }

  /** The attempt taken for the address succeeded: it does not count as a failure. */
  succeeded(address: string, now = Date.now()): void {
    if (this.#limit === 0) return;
    this.#roll(now);
    const count = this.#counts.get(address) ?? 0;
    if (count <= 1) this.#counts.delete(address);
    else this.#counts.set(address, count - 1);
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
