/**
 * GET /oauth/v2/keys (seed §4.10, SPEC §6): the public key set, cacheable for five minutes, with a
 * per-address limit of requests per minute (429 past it) for clients that do not cache.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { limitKeyOf } from '../http/client-address.ts';

/** A fixed one-minute window per client address. */
export class RateLimiter {
  readonly #limit: number;
  #window = 0;
  #counts = new Map<string, number>();

  constructor(perMinute: number) {
    this.#limit = perMinute;
  }

  /** Seconds until the window resets when the address is over its limit; 0 when allowed. */
  take(address: string, now = Date.now()): number {
    if (this.#limit === 0) return 0;
    const window = Math.floor(now / 60000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    const count = (this.#counts.get(address) ?? 0) + 1;
    this.#counts.set(address, count);
    return count > this.#limit ? Math.ceil(((window + 1) * 60000 - now) / 1000) : 0;
  }
}

export function keysEndpoint(gh: Gatehouse) {
  const limiter = new RateLimiter(gh.config.keysRateLimit);
  return (req: Request, res: Response): void => {
    const wait = limiter.take(limitKeyOf(req, gh.config.trustedProxies));
    if (wait > 0) {
      res.status(429).set('Retry-After', String(wait)).set('Cache-Control', 'no-store').type('application/json');
      res.end('{"error":"rate_limited","error_description":"too many key set requests; cache the key set"}');
      return;
    }
    res.status(200).set('Cache-Control', 'max-age=300, must-revalidate').type('application/json').end(gh.keys.jwksJson());
  };
}
