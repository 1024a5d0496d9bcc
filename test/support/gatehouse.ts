/**
 * Starts a real Gatehouse for a black-box suite: a fresh database (a new PostgreSQL database when
 * TEST_DATABASE_URL is set, else embedded PGlite in a temp dir), both copied from the run's migrated
 * snapshot (snapshot.ts), a bootstrap document applied, a free port on 127.0.0.1. Returns the base URL
 * and a stop function.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/server/request-context.ts';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import { applyBootstrapFile } from '../../src/bootstrap/apply.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { MasterKey } from '../../src/domain/kernel/crypto.ts';
import { storeSigningKey } from '../../src/domain/tokens/keys.ts';
import { startServer, type Running } from '../../src/server/start.ts';
import { listSigningKeys } from '../../src/store/signing-keys.ts';
import { rsaKeyPair } from './key-pool.ts';
import { freePort } from './ports.ts';
import { createDatabase, databaseUrl, onServer, restoreSnapshot } from './snapshot.ts';

export interface TestServer {
  url: string;
  config: Config;
  running: Running;
  stop(): Promise<void>;
}

/**
 * A connection string to a new PostgreSQL database (migrated, when the run has a template), or
 * undefined to use PGlite.
 */
export async function createTestDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const base = process.env['TEST_DATABASE_URL'];
  if (!base) return { url: undefined, drop: async () => {} };
  const name = `gh_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await createDatabase(base, name);
  return {
    url: databaseUrl(base, name),
    drop: () => onServer(base, `drop database if exists ${name} with (force)`),
  };
}

/** `log`: where the server logs (a test that reads the log); silent unless TEST_LOG_LEVEL says otherwise. */
export async function startTestServer(bootstrap: unknown, env: Record<string, string> = {}, options: { log?: Logger } = {}): Promise<TestServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  // A suite that brings its own DATABASE_URL (through a proxy, say) needs no database of ours.
  const database = 'DATABASE_URL' in env ? { url: undefined, drop: async () => {} } : await createTestDatabase();
  if (!database.url && !env['DATABASE_URL']) restoreSnapshot(dir); // the embedded database
  const port = await freePort();
  const file = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(file, stringify(bootstrap));
  const config = loadConfig({
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_EXTERNAL_URL: `http://127.0.0.1:${port}`,
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    GATEHOUSE_CHANGE_POLL_MS: '100',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const running = await startServer({
    config,
    log: options.log ?? createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent'),
    prepare: async (db, masterKey) => {
      await applyBootstrapFile(db, file, { serviceName: config.serviceName, masterKey, idpAllowPrivateNetworks: config.idpAllowPrivateNetworks });
      // The first signing key, from the run's pool instead of made at start (keys.test.ts covers that).
      // Its time is the server's own: a Date of this file's context is not a Date to PGlite.
      if (config.signingAlg === 'RS256' && config.masterKey && (await listSigningKeys(db)).length === 0) {
        await storeSigningKey(db, new MasterKey(config.masterKey), 'RS256', rsaKeyPair());
      }
    },
  });
  return {
    url: running.url,
    config,
    running,
    async stop() {
      await running.stop();
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
