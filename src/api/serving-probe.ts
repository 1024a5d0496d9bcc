/**
 * Whether the server can serve: the database answers a ping, the rule of `/ready`. Shared by every
 * health check and watch of the process, so the database is pinged at most once per interval
 * however many clients ask: a Check reuses a fresh result, and the watch loop polls only while
 * someone watches.
 *
 * Changes reach the watchers through one fan-out of our own (a set of callbacks), not one event
 * listener per watcher: any number of watches costs no listener on a shared emitter, so nothing
 * warns of a leak and nothing needs a raised listener limit.
 */

export interface ServingProbe {
  /** The current state, from a result at most one interval old. */
  serving(): Promise<boolean>;
  /** The current state, then every change, until `signal` aborts or the server shuts down. */
  watch(signal: AbortSignal): AsyncIterable<boolean>;
  /**
   * The server is shutting down: from now on it is not serving, and every watch says so and ends,
   * so that load balancers stop sending and a graceful stop does not wait for endless streams.
   */
  shutDown(): void;
  /** Aborts when the server shuts down. */
  readonly stopped: AbortSignal;
}

export function createServingProbe(check: () => Promise<boolean>, intervalMs = 2000): ServingProbe {
  let last: { serving: boolean; at: number } | undefined;
  let pending: Promise<boolean> | undefined;
  let watchers = 0;
  let timer: NodeJS.Timeout | undefined;
  /** One callback per watch, told every change. */
  const subscribers = new Set<(serving: boolean) => void>();

  async function probe(): Promise<boolean> {
    const serving = await check();
    const changed = last !== undefined && last.serving !== serving;
    last = { serving, at: Date.now() };
    if (changed) for (const tell of subscribers) tell(serving);
    return serving;
  }

  let stopping = false;
  const stopped = new AbortController();

  function serving(): Promise<boolean> {
    if (stopping) return Promise.resolve(false);
    if (last !== undefined && Date.now() - last.at < intervalMs) return Promise.resolve(last.serving);
    pending ??= probe().finally(() => (pending = undefined));
    return pending;
  }

  function startWatching(): void {
    if (watchers++ > 0) return;
    timer = setInterval(() => void serving(), intervalMs);
    timer.unref();
  }

  function stopWatching(): void {
    if (--watchers > 0) return;
    clearInterval(timer);
    timer = undefined;
  }

  async function* watch(signal: AbortSignal): AsyncIterable<boolean> {
    const ended = AbortSignal.any([signal, stopped.signal]);
    // The latest change not yet passed on, and the wake-up of a watch waiting for one.
    let latest: boolean | undefined;
    let wake: (() => void) | undefined;
    const tell = (next: boolean): void => {
      latest = next;
      wake?.();
    };
    const end = (): void => wake?.();
    // Subscribe before the first answer so that no change between the two is lost.
    subscribers.add(tell);
    ended.addEventListener('abort', end, { once: true });
    startWatching();
    try {
      let current = await serving(); // false once the server stops
      if (signal.aborted) return;
      yield current;
      while (!ended.aborted) {
        if (latest === undefined || latest === current) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        current = latest;
        yield current;
      }
      // The watcher went away, or the server stops: a normal end. To a watcher still there the
      // last word is: not serving.
      if (stopping && !signal.aborted && current) yield false;
    } finally {
      subscribers.delete(tell);
      ended.removeEventListener('abort', end);
      stopWatching();
    }
  }

  function shutDown(): void {
    stopping = true;
    stopped.abort();
  }

  return { serving, watch, shutDown, stopped: stopped.signal };
}
