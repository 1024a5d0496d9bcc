/**
 * A fresh, migrated database for a test file: a new PostgreSQL database when TEST_DATABASE_URL is
 * set (created on that server, dropped on close), else the embedded PGlite in a temp folder; both
 * copied from the run's migrated snapshot (snapshot.ts), then migrated (nothing left to do).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase, type DB } from '../../src/store/database.ts';
import { createDatabase, databaseUrl as urlOf, onServer, restoreSnapshot } from './snapshot.ts';

export interface FreshDatabase {
  db: DB;
  /** The new database's connection string (PostgreSQL), to open more pools on it; undefined on PGlite. */
  databaseUrl: string | undefined;
  embedded: boolean;
  close(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const baseUrl = process.env['TEST_DATABASE_URL'];
  if (baseUrl) {
    const name = `gh_test_${randomBytes(6).toString('hex')}`;
    await createDatabase(baseUrl, name);
    const databaseUrl = urlOf(baseUrl, name);
    const { db } = await openDatabase({ databaseUrl, dataDir: '' });
    await migrate(db);
    return {
      db,
      databaseUrl,
      embedded: false,
      async close() {
        await db.destroy();
        await onServer(baseUrl, `drop database if exists ${name} with (force)`);
      },
    };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-db-'));
  restoreSnapshot(dataDir);
  const { db } = await openDatabase({ databaseUrl: undefined, dataDir });
  await migrate(db);
  return {
    db,
    databaseUrl: undefined,
    embedded: true,
    async close() {
      await db.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
