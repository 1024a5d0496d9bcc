/**
 * Opens the database: a pooled PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite
 * (PostgreSQL compiled to WebAssembly, data in GATEHOUSE_DATA_DIR, locked for this process while open:
 * data-dir-lock.ts). Both speak the same SQL.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { CompiledQuery, Kysely, PostgresDialect, sql, type Compilable, type RawBuilder } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.ts';
import { migrations } from './migrations/index.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

export type DB = Kysely<Database>;

export interface DatabaseConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  /** PostgreSQL's statement_timeout for every connection of the pool; default DEFAULT_STATEMENT_TIMEOUT_MS. */
  statementTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
/**
 * How much longer than the statement timeout pg waits for any answer before it gives up on its own:
 * for a server that no longer answers at all (a cancelled statement answers with an error in time).
 */
const UNANSWERED_GRACE_MS = 5000;

// int8 (bigserial sequences) as strings, as the API carries them; numeric ids never lose precision.
const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (value: string) => value);

export interface OpenedDatabase {
  db: DB;
  embedded: boolean;
}

export interface OpenOptions {
  /**
   * The process opens the database for one command and exits (the CLI's migrate, bootstrap, keys...).
   * On the embedded database V8 then compiles PGlite's WebAssembly with its baseline compiler only:
   * optimizing hot functions on background threads does not pay back within one command, and the
   * process waits for those compiles when it exits (measured: opening and closing it took 1 s
   * of CPU instead of 3.5 s, and the process exited 2.5 s sooner).
   * A server keeps the optimizing compiler: its steady state was 10–20% faster with it.
   */
  oneShot?: boolean;
}

export async function openDatabase(config: DatabaseConfig, { oneShot = false }: OpenOptions = {}): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    const pool = (max: number) => {
      const created = new pg.Pool({
        connectionString: config.databaseUrl,
        max,
        // A request that needs the database answers 503 within a few seconds when it is down
        // (docs/operations.md#health).
        connectionTimeoutMillis: 3000,
        // PostgreSQL itself cancels a statement past the timeout, so it stops running and its
        // connection serves the next request; a client-side timeout alone left it running on.
        statement_timeout: config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
        query_timeout: (config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS) + UNANSWERED_GRACE_MS,
      });
      // A client losing its server must not crash the process: idle ones are replaced by the pool
      // ('error' on the pool), and one checked out by kysely fails its query and is dropped on release
      // ('error' on the client, which kysely does not listen to).
      created.on('error', () => {});
      created.on('connect', (client) => {
        client.on('error', () => {});
        runMarkedStatementsPrepared(client);
      });
      return new Kysely<Database>({ dialect: new PostgresDialect({ pool: created }) });
    };
    return { db: pool(10), embedded: false };
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  // The folder belongs to one process: a second one stops here, before PGlite reads a page.
  const lock = await lockDataDir(config.dataDir);
  if (oneShot) {
    // Before PGlite compiles its module: flags apply to code compiled after they are set.
    v8.setFlagsFromString('--no-wasm-tier-up');
    v8.setFlagsFromString('--no-wasm-dynamic-tiering');
  }
  let pglite: PGlite;
  try {
    const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
    pglite = await PGlite.create(`${config.dataDir}/pgdata`, {
      parsers: { [INT8_OID]: (value: string) => value },
      // the trigram indexes of the user lists (migration 2026_11_26_0018)
      extensions: { pg_trgm },
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite, lock.release) });
  return { db, embedded: true };
}

const PREPARED_MARK = '/* prepared:';

/**
 * Marks a statement to run as a named prepared statement on PostgreSQL: put it first in the SQL text.
 * PostgreSQL then parses and plans the statement once per connection instead of at every execution
 * (for the batched token insert, a quarter of the database's CPU per row). Only for hot statements
 * whose text never changes: each connection keeps every named statement it has prepared. The marker
 * is a comment, so the embedded database runs the same text as it is.
 */
export function preparedAs(name: string): RawBuilder<unknown> {
  return sql.raw(preparedText(name, ''));
}

/** The same mark on a statement's whole text, for a statement compiled once (kysely's CompiledQuery.raw). */
export function preparedText(name: string, text: string): string {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`not a statement name: ${name}`);
  return `${PREPARED_MARK}${name} */ ${text}`;
}

/** Stands in for a statement's parameter while kysely compiles it once (preparedSelect). */
class StandIn {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

/**
 * A hot read whose text is the same at every call, only its parameters vary (a row by its id): kysely
 * builds and compiles it once, from stand-ins for the parameters, and every call runs that text as the
 * prepared statement `name` with its own values. Each parameter must reach the statement as one value
 * (a list would change the text with its length); compiling refuses a parameter the text lacks.
 */
export function preparedSelect<P extends unknown[], O>(name: string, build: (db: DB, ...params: P) => Compilable<O>): (db: DB, ...params: P) => Promise<O[]> {
  let compiled: { text: string; parameters: readonly unknown[] } | undefined;
  return async (db, ...params) => {
    if (compiled === undefined) {
      const standIns = params.map((_, i) => new StandIn(i)) as unknown as P;
      const query = build(db, ...standIns).compile();
      for (let i = 0; i < params.length; i++) {
        if (!query.parameters.some((p) => p instanceof StandIn && p.index === i)) throw new Error(`statement ${name}: parameter ${i} is not a single value of its text`);
      }
      compiled = { text: preparedText(name, query.sql), parameters: query.parameters };
    }
    const values = compiled.parameters.map((p) => (p instanceof StandIn ? params[p.index] : p));
    const { rows } = await db.executeQuery<O>(CompiledQuery.raw(compiled.text, values));
    return rows;
  };
}

/** Makes `client` run the statements marked by preparedAs() or preparedText() under their names. */
function runMarkedStatementsPrepared(client: pg.PoolClient): void {
  // pg's query() has a dozen overloads; kysely calls it with (text, values), the pool with a callback too.
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = (text: string): string | undefined => (text.startsWith(PREPARED_MARK) ? text.slice(PREPARED_MARK.length, text.indexOf(' */')) : undefined);
  Object.assign(client, {
    query: (first: unknown, ...rest: unknown[]) => {
      const name = typeof first === 'string' ? named(first) : undefined;
      if (name === undefined) return query(first, ...rest);
      const [values, ...callback] = rest;
      return query({ name, text: first, values }, ...callback);
    },
  });
}

/** Runs `fn` in a transaction, or in the one `db` already is. */
export function inTransaction<T>(db: DB, fn: (trx: DB) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

export async function migrate(db: DB): Promise<MigrationResultSet> {
  if (await upToDate(db)) return { results: [] };
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

/**
 * Whether the database has run exactly this build's migrations: two small queries. Kysely's Migrator
 * reads the whole catalog (every table and column) twice before it finds nothing to do, which took
 * 0.25–0.35 s of every start on a migrated PostgreSQL database. Anything else (a first start, a new
 * migration, a database migrated by a newer build) goes through the Migrator and its lock as before.
 */
async function upToDate(db: DB): Promise<boolean> {
  const { rows: table } = await sql<{ found: boolean }>`select to_regclass('gatehouse_migrations') is not null as found`.execute(db);
  if (!table[0]?.found) return false;
  const { rows } = await sql<{ name: string }>`select name from gatehouse_migrations`.execute(db);
  const known = Object.keys(migrations);
  return rows.length === known.length && rows.every(({ name }) => name in migrations);
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
