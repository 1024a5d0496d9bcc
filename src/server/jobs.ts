/**
 * Background jobs of a running server: the change watcher (a change anywhere on this database, ours
 * or another process's, empties the caches), the revocation listener (revocations made by other
 * processes on a shared PostgreSQL reach this one's token caches at once; store/change-listener.ts)
 * and the housekeeping (key rotation, pruning of what has expired). The mail worker (mail/worker.ts) is the third; start.ts starts it once the server
 * listens and stops it after the last request, since requests queue mail.
 */
import type { Logger } from 'pino';
import type { Gatehouse } from '../context.ts';
import { changeMark } from '../domain/events.ts';
import { listenForRevocations, type ChangeListener } from '../store/change-listener.ts';
import type { DB } from '../store/database.ts';
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
  // Rotation and clean-up run on their own clock; they are cheap no-ops most of the time.
  const housekeeping = setInterval(() => {
    housekeep(gh).catch((error: unknown) => gh.log.warn({ err: error }, 'housekeeping failed'));
  }, HOUSEKEEPING_INTERVAL_MS);
  housekeeping.unref();
  return {
    async stop() {
      clearInterval(poll);
      clearInterval(housekeeping);
      await revocations?.close();
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

/** One housekeeping round: rotate the signing key when due, delete what has expired. */
async function housekeep({ db, keys }: Pick<Gatehouse, 'db' | 'keys'>): Promise<void> {
  await keys.refresh();
  await keys.prune();
  const now = new Date();
  await deleteExpiredAssertions(db, now);
  await deleteExpiredRevocations(db, now);
  await deleteTokensExpiredBefore(db, new Date(now.getTime() - KEEP_EXPIRED_TOKENS_MS));
}
