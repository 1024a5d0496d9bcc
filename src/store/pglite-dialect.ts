/**
 * A small kysely 0.29 dialect for the embedded PGlite database (kysely-pglite only supports 0.28).
 * PGlite is one in-process PostgreSQL session, so the driver hands out that single connection to one
 * user at a time: a transaction never interleaves with another caller's statements.
 */
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

class PGliteConnection implements DatabaseConnection {
  readonly #db: PGlite;
  constructor(db: PGlite) {
    this.#db = db;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#db.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined && /^\s*(insert|update|delete|merge)/i.test(compiled.sql)
        ? { numAffectedRows: BigInt(affected) }
        : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database');
  }
}

class PGliteDriver implements Driver {
  readonly #db: PGlite;
  readonly #connection: PGliteConnection;
  readonly #afterClose: (() => void) | undefined;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(db: PGlite, afterClose: (() => void) | undefined) {
    this.#db = db;
    this.#connection = new PGliteConnection(db);
    this.#afterClose = afterClose;
  }

  async init(): Promise<void> {
    await this.#db.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {
    if (!this.#db.closed) await this.#db.close();
    this.#afterClose?.();
  }
}

export class PGliteDialect implements Dialect {
  readonly #db: PGlite;
  readonly #afterClose: (() => void) | undefined;
  /** `afterClose` runs once the database is closed (it releases the folder's lock). */
  constructor(db: PGlite, afterClose?: () => void) {
    this.#db = db;
    this.#afterClose = afterClose;
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#db, this.#afterClose);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  // kysely's introspector signature takes Kysely<any>; we never introspect our own schema through it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}
