/**
 * Tries of guessable secrets under the per-address failure limit (failure-throttle.ts), wherever
 * the secret is checked: a current password at the API, a password reset code, an email code, a
 * passkey link code. A try is taken from the client address before any work (Throttled past the
 * limit, so no hash is computed for a throttled address) and given back when the secret proved
 * right, or when nothing was checked; only failures stay counted.
 *
 * The address is the one of the request being served, carried with it (AsyncLocalStorage) rather
 * than passed down: the API handler sets it for every call of every protocol, the login pages that
 * check such codes set it for theirs, and a check deep inside a call (UpdateHumanUser's current
 * password, RegisterPasskey's code) is counted without threading the request through the layers in
 * between. Outside a request that set one (the CLI, a test calling the domain directly) there is no
 * address and nothing is counted.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FailureThrottle } from './failure-throttle.ts';
import { Throttled } from './failure-throttle.ts';

/** Whose failures a request's secret checks count, and against which throttle. */
export interface FailureBudget {
  throttle: FailureThrottle;
  /** The client address's limit key (http/client-address.ts `limitKeyOf`). */
  address: string;
}

const served = new AsyncLocalStorage<FailureBudget>();

/** Runs `work` as (part of) a request whose secret checks count against `budget`. */
export function withFailureBudget<T>(budget: FailureBudget, work: () => T): T {
  return served.run(budget, work);
}

/**
 * Runs `check` as one try of a secret. Throws Throttled, without running it, when the request's
 * address is at its limit; the try stays counted when `failed(result)` says so, and is given back
 * otherwise (a right secret) or when `check` throws (a full hashing queue, an outage: nothing was
 * decided).
 */
export async function secretTry<T>(check: () => Promise<T>, failed: (result: T) => boolean): Promise<T> {
  const budget = served.getStore();
  if (budget === undefined) return check();
  const { throttle, address } = budget;
  const wait = throttle.take(address);
  if (wait > 0) throw new Throttled(wait);
  let result: T;
  try {
    result = await check();
  } catch (error) {
    throttle.succeeded(address);
    throw error;
  }
  if (!failed(result)) throttle.succeeded(address);
  return result;
}
