/**
 * Background jobs of a running server: the change watcher (a change anywhere on this database, ours
 * or another process's, empties the caches), the revocation listener (revocations made by other
 * processes on a shared PostgreSQL reach this one's token caches at once; store/change-listener.ts)
 * and the housekeeping (key rotation, pruning of what has expired). The mail worker (mail/worker.ts) is the third; start.ts starts it once the server
 * listens and stops it after the last request, since requests queue mail.
 */
import type { Logger } from 'pino';
import type { Gatehouse } from '../context.ts';
import { changeMark } from '../domain/kernel/events.ts';
import { listenForRevocations, type ChangeListener } from '../store/change-listener.ts';
import type { DB } from '../store/database.ts';
import { exclusiveRunner, type ExclusiveRunner } from '../store/exclusive.ts';
import { deleteExpiredIdpIntents } from '../store/idp-intents.ts';
import { deleteExpiredRevocations, deleteTokensExpiredBefore } from '../store/tokens.ts';
import { deleteExpiredAssertions } from '../store/used-assertions.ts';
import type { Composition } from './compose.ts';

/** How often the housekeeping runs. */
const HOUSEKEEPING_INTERVAL_MS = 60_000;
/** How long token rows stay after they expire. */
const KEEP_EXPIRED_TOKENS_MS = 86400_000;

export interface Jobs {
  /** Stops the timers and the listener (the first step of a stop); a round in progress finishes on its own. */
  stop(): Promise<void>;
}

/** Starts the change watcher (after reading the current change mark) and the housekeeping. */
export async function startJobs({ gh, refresh }: Composition): Promise<Jobs> {
  const poll = await watchChanges(gh.db, gh.config.changePollMs, refresh, gh.log);
  const revocations = listenToOtherProcesses(gh);
  const exclusive = exclusiveRunner(gh.config.databaseUrl, gh.db, gh.config.statementTimeoutMs);
  const stopping = new AbortController();
  let round: Promise<void> | undefined;
  // Rotation and clean-up run on their own clock; they are cheap no-ops most of the time. One round
  // at a time: a tick during a long prune is skipped.
  const housekeeping = setInterval(() => {
    round ??= housekeep(gh, exclusive, stopping.signal)
      .catch((error: unknown) => gh.log.warn({ err: error }, 'housekeeping failed'))
      .finally(() => (round = undefined));
  }, HOUSEKEEPING_INTERVAL_MS);
  housekeeping.unref();
  return {
    async stop() {
      clearInterval(poll);
      clearInterval(housekeeping);
      stopping.abort(); // a prune in progress stops after its current batch
      await revocations?.close();
      await round;
      await exclusive.close();
    },
  };
}

/** The change watcher: a change anywhere on this database (the change mark moves) clears the caches. One poll at a time. */
async function watchChanges(db: DB, pollMs: number, refresh: () => Promise<void>, log: Logger): Promise<NodeJS.Timeout> {
  let seen = await changeMark(db);
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    (async () => {
      const latest = await changeMark(db);
      if (latest !== seen) {
        seen = latest;
        await refresh();
      }
    })()
      .catch((error: unknown) => log.warn({ err: error }, 'change poll failed'))
      .finally(() => (polling = false));
  }, pollMs);
  poll.unref();
  return poll;
}

/**
 * On PostgreSQL other processes may revoke tokens: the token caches are trusted only while their
 * announcements are heard. The embedded database has one process, whose own revocations update its
 * caches directly, so they are trusted from the start (server/compose.ts).
 */
function listenToOtherProcesses({ config, tokens, directory, log }: Gatehouse): ChangeListener | undefined {
  if (!config.databaseUrl) return undefined;
  return listenForRevocations(
    config.databaseUrl,
    {
      announced: (items) => tokens.revocations.add(items),
      userChanged: () => directory.clear(),
      listening: () => tokens.trustRevocations(),
      lost: () => tokens.revocations.suspend(),
    },
    log,
  );
}

/** One housekeeping round: rotate the signing key when due, prune what has expired (one process of a cluster at a time). */
async function housekeep({ db, keys, config }: Pick<Gatehouse, 'db' | 'keys' | 'config'>, exclusive: ExclusiveRunner, signal: AbortSignal): Promise<void> {
  await keys.refresh();
  await keys.prune();
  const batch = config.databaseUrl ? PRUNE_BATCH_ROWS : EMBEDDED_PRUNE_BATCH_ROWS;
  await exclusive.run(PRUNE_LOCK, (own) => pruneExpired(own, new Date(), { batch, pauseMs: PRUNE_PAUSE_MS, signal }));
}

/** Names the advisory lock of the prune: one process of a cluster prunes at a time. */
export const PRUNE_LOCK = 'gatehouse.prune';
/** Rows per statement: a short statement, whatever has piled up (a day of downtime, a million tokens). */
const PRUNE_BATCH_ROWS = 1000;
/** The embedded database has one connection, which requests wait for while a batch runs. */
const EMBEDDED_PRUNE_BATCH_ROWS = 200;
/** A pause between batches, so that a long prune leaves the database to requests most of the time. */
const PRUNE_PAUSE_MS = 20;

export interface PruneOptions {
  batch: number;
  pauseMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * Deletes what has expired, in batches of `batch` rows with a pause between them, until nothing is
 * left or `signal` aborts: marks of used assertions, revocations (what they revoked has expired
 * too), token rows a day past their expiry, and sign-ins at identity providers (with the provider's
 * tokens they may hold) past theirs. Returns how many rows went.
 */
export async function pruneExpired(db: DB, now: Date, options: PruneOptions): Promise<number> {
  const expiredTokens = new Date(now.getTime() - KEEP_EXPIRED_TOKENS_MS);
  const steps = [
    (limit: number) => deleteExpiredAssertions(db, now, limit),
    (limit: number) => deleteExpiredRevocations(db, now, limit),
    (limit: number) => deleteTokensExpiredBefore(db, expiredTokens, limit),
    (limit: number) => deleteExpiredIdpIntents(db, now, limit),
  ];
  let deleted = 0;
  for (const step of steps) {
    for (;;) {
      if (options.signal?.aborted) return deleted;
      const count = await step(options.batch);
      deleted += count;
      if (count < options.batch) break;
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  }
  return deleted;
}
