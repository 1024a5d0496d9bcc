/**
 * Opens the database: a pooled PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite
 * (PostgreSQL compiled to WebAssembly, data in GATEHOUSE_DATA_DIR). Both speak the same SQL.
 */
import fs from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import pg from 'pg';
import { migrations } from './migrations/index.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

export type DB = Kysely<Database>;

export interface DatabaseConfig {
  databaseUrl: string | undefined;
  dataDir: string;
}

// int8 (bigserial sequences) as strings, as the API carries them; numeric ids never lose precision.
const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (value: string) => value);

export interface OpenedDatabase {
  db: DB;
  /**
   * The same database through connections that commit without waiting for the WAL flush
   * (synchronous_commit=off). Only for rows whose loss in a crash merely invalidates something
   * (opaque access tokens: their holders ask for a new one); never for revocations or identity data.
   */
  relaxed: DB;
  embedded: boolean;
}

export async function openDatabase(config: DatabaseConfig): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    const pool = (max: number, options?: string) => {
      const created = new pg.Pool({
        connectionString: config.databaseUrl,
        max,
        // A request that needs the database answers 503 within a few seconds when it is down (SPEC §9).
        connectionTimeoutMillis: 3000,
        query_timeout: 10000,
        ...(options ? { options } : {}),
      });
      // A client losing its server must not crash the process: idle ones are replaced by the pool
      // ('error' on the pool), and one checked out by kysely fails its query and is dropped on release
      // ('error' on the client, which kysely does not listen to).
      created.on('error', () => {});
      created.on('connect', (client) => client.on('error', () => {}));
      return new Kysely<Database>({ dialect: new PostgresDialect({ pool: created }) });
    };
    return { db: pool(10), relaxed: pool(4, '-c synchronous_commit=off'), embedded: false };
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create(`${config.dataDir}/pgdata`, {
    parsers: { [INT8_OID]: (value: string) => value },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, relaxed: db, embedded: true };
}

export async function migrate(db: DB): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

export async function ping(db: DB): Promise<void> {
  await sql`select 1`.execute(db);
}

/** How long a ping may take before the database counts as away (`/ready`, gRPC health). */
export const READY_TIMEOUT_MS = 2000;

/** Whether the database answers a ping within READY_TIMEOUT_MS: the one rule of readiness. */
export function reachable(db: DB): Promise<boolean> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('ping timeout')), READY_TIMEOUT_MS).unref());
  return Promise.race([ping(db), timeout]).then(() => true, () => false);
}
