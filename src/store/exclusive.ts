/**
 * Work that one process of a cluster does at a time (pruning what has expired), on a connection of
 * its own: it holds a PostgreSQL session advisory lock while it works, so a second process skips the
 * round instead of doing the same work again, and it takes no connection from the pool that serves
 * requests. A process that dies releases the lock with its session. The embedded database has one
 * process: the work runs on its database as it is.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DB } from './database.ts';
import type { Database } from './schema.ts';

export interface ExclusiveRunner {
  /** Runs `work` unless another process runs work of this name now; undefined when skipped. */
  run<T>(name: string, work: (db: DB) => Promise<T>): Promise<T | undefined>;
  close(): Promise<void>;
}

export function exclusiveRunner(databaseUrl: string | undefined, db: DB, statementTimeoutMs: number): ExclusiveRunner {
  if (!databaseUrl) return { run: (_name, work) => work(db), close: async () => {} };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 3000, statement_timeout: statementTimeoutMs });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const own: DB = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    async run(name, work) {
      // One connection in this pool: the lock and the work share its session.
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtext(${name})) as locked`.execute(own);
      if (!rows[0]?.locked) return undefined;
      try {
        return await work(own);
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${name}))`.execute(own).catch(() => {});
      }
    },
    close: () => own.destroy(),
  };
}
