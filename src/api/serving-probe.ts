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
  /** The current state, then every change, until `signal` aborts. */
  watch(signal: AbortSignal): AsyncIterable<boolean>;
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

  function serving(): Promise<boolean> {
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
    try {
      // Subscribe before the first answer so that no change between the two is lost.
      const updates = on(changes, 'change', { signal });
      let current = await serving();
      yield current;
      for await (const event of updates) {
        const next = (event as unknown[])[0] === true;
        if (next === current) continue;
        current = next;
        yield current;
      }
    } catch (error) {
      if (!signal.aborted) throw error; // the watcher went away: a normal end
    } finally {
      stopWatching();
    }
  }

  return { serving, watch };
}
