/**
 * The migrated database every test starts from, built once per `jest` run (global-setup.ts): on
 * PostgreSQL (TEST_DATABASE_URL) a template database that each test database is created from; on the
 * embedded PGlite a migrated data directory that each test copies. A copy starts in about a second
 * where a new PGlite data directory takes 5–10 s (initdb in WebAssembly, then every migration).
 * Servers and test code still run the migrations; they find nothing to do.
 *
 * The run passes the snapshot to its workers in environment variables; without them (a script, or a
 * jest run without the global setup) each database starts empty and migrates, as before.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { removeStaleTempFolders, STALE_MS } from './stale.ts';

/** Names the PostgreSQL template database of this run. */
const TEMPLATE_ENV = 'TEST_TEMPLATE_DATABASE';
/** Names the folder holding the migrated PGlite data directory (`pgdata`) of this run. */
const SNAPSHOT_ENV = 'TEST_PGDATA_SNAPSHOT';
const TEMPLATE_PREFIX = 'gh_template_';
const SNAPSHOT_PREFIX = 'gatehouse-snapshot-';

/** Runs one statement on the server of `baseUrl` (its maintenance database). */
export async function onServer(baseUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** `baseUrl` with its database replaced by `name`. */
export function databaseUrl(baseUrl: string, name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * PostgreSQL 15 copies a template through the WAL by default; copying its files is cheaper for a
 * template this small (98 against 160 ms of the server's CPU per database, and the drop 46 against
 * 86 ms, measured on this machine). Servers before 15 know no strategy (and copy files anyway): the
 * first refusal drops the clause for the rest of the file.
 */
let copyStrategy = ' strategy file_copy';

/**
 * Creates a new PostgreSQL database on the server of `baseUrl`: a copy of this run's migrated
 * template when there is one, else empty.
 */
export async function createDatabase(baseUrl: string, name: string): Promise<void> {
  const template = process.env[TEMPLATE_ENV];
  if (!template) return onServer(baseUrl, `create database ${name}`);
  try {
    await onServer(baseUrl, `create database ${name} template ${template}${copyStrategy}`);
  } catch (error) {
    if (copyStrategy === '' || (error as { code?: unknown }).code !== '42601') throw error; // syntax_error: before PostgreSQL 15
    copyStrategy = '';
    await onServer(baseUrl, `create database ${name} template ${template}`);
  }
}

/**
 * Fills `dataDir` (a GATEHOUSE_DATA_DIR, empty) with a copy of this run's migrated PGlite data
 * directory, when there is one. The snapshot is closed, so copying its files is safe.
 */
export function restoreSnapshot(dataDir: string): void {
  const snapshot = process.env[SNAPSHOT_ENV];
  if (!snapshot) return;
  fs.cpSync(path.join(snapshot, 'pgdata'), path.join(dataDir, 'pgdata'), { recursive: true });
}

/** Migrates a new template database on the server of `baseUrl`; no one may connect to it afterwards. */
async function buildTemplate(baseUrl: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await onServer(baseUrl, `create database ${name}`);
  const { db } = await openDatabase({ databaseUrl: databaseUrl(baseUrl, name), dataDir: '' });
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
  // A template must have no sessions while databases are created from it.
  await onServer(baseUrl, `alter database ${name} allow_connections false`);
  return name;
}

/**
 * Migrates a new PGlite data directory in a temp folder and closes it. Its copies start with 16 MB of
 * shared buffers instead of initdb's 128 MB: PGlite zeroes them at every start, which took 1–3 s of a
 * test server's start on a busy machine; test databases are tiny.
 */
async function buildSnapshot(): Promise<string> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), SNAPSHOT_PREFIX));
  const { db } = await openDatabase({ databaseUrl: undefined, dataDir: folder });
  // Imported here, in the global setup only: a static import would load kysely's 255 modules into every
  // test file's context, which otherwise gets the project's modules, kysely included, from the worker.
  const { sql } = await import('kysely');
  try {
    await migrate(db);
    await sql`alter system set shared_buffers = '16MB'`.execute(db);
    // Gatehouse uses the `postgres` database only. The two templates were 14 of the snapshot's 40 MB
    // and most of its 1,100 files, copied for every test server.
    for (const template of ['template0', 'template1']) {
      await sql`update pg_database set datistemplate = false where datname = ${template}`.execute(db);
      await sql.raw(`drop database ${template}`).execute(db);
    }
    await sql`checkpoint`.execute(db);
  } finally {
    await db.destroy();
  }
  return folder;
}

/** Removes the templates and snapshots that interrupted runs left behind, once they are a day old. */
async function removeStale(baseUrl: string | undefined): Promise<void> {
  const now = Date.now();
  removeStaleTempFolders(SNAPSHOT_PREFIX, now);
  if (!baseUrl) return;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like '${TEMPLATE_PREFIX}%'`);
    for (const { datname } of rows) {
      const created = parseInt(datname.slice(TEMPLATE_PREFIX.length).split('_')[0]!, 36);
      if (now - created > STALE_MS) await admin.query(`drop database if exists ${datname}`);
    }
  } finally {
    await admin.end();
  }
}

/** Builds this run's snapshot and names it in the environment the workers inherit. */
export async function createRunSnapshot(): Promise<void> {
  const baseUrl = process.env['TEST_DATABASE_URL'];
  await removeStale(baseUrl);
  if (baseUrl) process.env[TEMPLATE_ENV] = await buildTemplate(baseUrl);
  // Suites against PostgreSQL start no embedded database through test/support.
  else process.env[SNAPSHOT_ENV] = await buildSnapshot();
}

/** Removes this run's snapshot. */
export async function removeRunSnapshot(): Promise<void> {
  const template = process.env[TEMPLATE_ENV];
  const baseUrl = process.env['TEST_DATABASE_URL'];
  if (template && baseUrl) await onServer(baseUrl, `drop database if exists ${template}`);
  const snapshot = process.env[SNAPSHOT_ENV];
  if (snapshot) fs.rmSync(snapshot, { recursive: true, force: true });
  delete process.env[TEMPLATE_ENV];
  delete process.env[SNAPSHOT_ENV];
}
