/**
 * Whether the server can serve: the database answers a ping, the rule of `/ready`. Shared by every
 * health check and watch of the process, so the database is pinged at most once per interval
 * however many clients ask: a Check reuses a fresh result, and the watch loop polls only while
 * someone watches.
 */
import { EventEmitter, on } from 'node:events';

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
  const changes = new EventEmitter();

  async function probe(): Promise<boolean> {
    const serving = await check();
    const changed = last !== undefined && last.serving !== serving;
    last = { serving, at: Date.now() };
    if (changed) changes.emit('change', serving);
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
    startWatching();
    const ended = AbortSignal.any([signal, stopped.signal]);
    try {
      // Subscribe before the first answer so that no change between the two is lost.
      const updates = on(changes, 'change', { signal: ended });
      let current = await serving();
      yield current;
      for await (const event of updates) {
        const next = (event as unknown[])[0] === true;
        if (next === current) continue;
        current = next;
        yield current;
      }
    } catch (error) {
      if (!ended.aborted) throw error; // the watcher went away, or the server stops: a normal end
      if (stopping && !signal.aborted) yield false; // the last word to the watcher: not serving
    } finally {
      stopWatching();
    }
  }

  function shutDown(): void {
    stopping = true;
    stopped.abort();
  }

  return { serving, watch, shutDown, stopped: stopped.signal };
}
