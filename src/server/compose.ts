/**
 * Composition: opens the database, checks the master key against it before anything is written
 * (server/master-key.ts), migrates, binds the key, and builds the `Gatehouse` context (master key,
 * instance, signing keys, directory, tokens, metrics, throttle) with the caches a change empties
 * (the discovery document, the CORS origins).
 *
 * Each phase says what it did in one info line (docs/operations.md#starting); the database's line
 * comes before it opens, since creating the embedded database takes seconds.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { displayedDatabaseUrl, type Config } from '../config/index.ts';
import type { Gatehouse } from '../context.ts';
import { Directory } from '../domain/instance/directory.ts';
import { FailureThrottle } from '../domain/sign-in/failure-throttle.ts';
import { KeyStore } from '../domain/tokens/keys.ts';
import { Tokens } from '../domain/tokens/tokens.ts';
import { discoveryDocument } from '../oauth/discovery.ts';
import { findFirstInstanceId } from '../store/instances.ts';
import { migrate, openDatabase, type DB } from '../store/database.ts';
import { createCors, type Cors } from './cors.ts';
import type { MasterKey } from '../domain/kernel/crypto.ts';
import { openMasterKey } from './master-key.ts';
import { createMetrics } from '../metrics/metrics.ts';

export interface ComposeOptions {
  config: Config;
  log: Logger;
  /**
   * Runs after migrations, before anything is built: first-run defaults or a bootstrap file. Gets
   * the master key, which seals what a bootstrap file declares (identity providers' secrets).
   */
  prepare?: ((db: DB, masterKey: MasterKey) => Promise<void>) | undefined;
}

export interface Composition {
  gh: Gatehouse;
  /** The discovery document, serialized; rebuilt by `refresh`. */
  discoveryJson(): string;
  /** The CORS origins of the registered applications (cached; emptied by `refresh`). */
  cors: Cors;
  /** Empties the caches after a change (ours or, through the change watcher, another process's). */
  refresh(): Promise<void>;
  /** Closes the database: the last step of a stop. */
  close(): Promise<void>;
}

/** The database phase's line, written before the database opens (initdb in WebAssembly takes seconds). */
function announceDatabase(config: Config, log: Logger): void {
  if (config.databaseUrl) {
    const database = displayedDatabaseUrl(config.databaseUrl);
    log.info({ database }, `database: PostgreSQL at ${database}`);
    return;
  }
  const folder = path.join(config.dataDir, 'pgdata'); // where store/database.ts keeps PGlite's files
  if (fs.existsSync(path.join(folder, 'PG_VERSION'))) {
    log.info({ database: folder, created: false }, `database: opening the embedded database in ${folder}`);
  } else {
    log.info({ database: folder, created: true }, `database: creating the embedded database in ${folder} (the first start takes a few seconds)`);
  }
}

/** The signing keys' line: the key that signs, and whether this start created one. */
function announceKeys(keys: KeyStore, createdFrom: Date, log: Logger): void {
  const published = keys.published();
  const newest = published.at(-1);
  if (!newest) return;
  const created = newest.signFrom >= createdFrom; // a key created by this start signs from then or later
  const what = created ? `created ${newest.alg} key ${newest.kid}` : `ready, newest ${newest.alg} key ${newest.kid}`;
  log.info({ kid: newest.kid, alg: newest.alg, created, published: published.length }, `signing keys: ${what} (${published.length} published)`);
}

export async function compose(options: ComposeOptions): Promise<Composition> {
  announceDatabase(options.config, options.log);
  const { db } = await openDatabase(options.config);
  try {
    return await build(db, options);
  } catch (error) {
    await db.destroy(); // a start that fails leaves the database (and the embedded folder) free
    throw error;
  }
}

async function build(db: DB, { config, log, prepare }: ComposeOptions): Promise<Composition> {
  // The key is checked before anything is written: migrations, first-run defaults, a bootstrap file, signing keys.
  const opened = await openMasterKey(db, config, log);
  const { results = [] } = await migrate(db);
  if (results.length === 0) log.info({ migrations: 0 }, 'migrations: up to date');
  else log.info({ migrations: results.length, newest: results.at(-1)!.migrationName }, `migrations: applied ${results.length}, the newest ${results.at(-1)!.migrationName}`);
  await opened.bind();
  const masterKey = opened.key;
  await prepare?.(db, masterKey);
  const instanceId = await findFirstInstanceId(db); // the instance this database serves (the first created)
  if (!instanceId) throw new Error('the database has no instance: run `gatehouse bootstrap FILE` or start without a bootstrap file');

  const keys = new KeyStore(db, masterKey, {
    signingAlg: config.signingAlg,
    keyRotationSeconds: config.keyRotationSeconds,
    maxTokenSeconds: Math.max(config.lifetimes.accessToken, config.lifetimes.idToken),
  });
  const keysFrom = new Date();
  await keys.refresh(keysFrom);
  announceKeys(keys, keysFrom, log);
  const directory = new Directory(db);
  const metrics = createMetrics();
  const tokens = new Tokens(db, keys, {
    issuer: config.externalUrl,
    accessTokenSeconds: config.lifetimes.accessToken,
    idTokenSeconds: config.lifetimes.idToken,
  });
  // the embedded database serves this process alone: every revocation is its own (server/jobs.ts)
  if (!config.databaseUrl) await tokens.trustRevocations();
  const throttle = new FailureThrottle(config.failedAuthRateLimit);
  const gh: Gatehouse = { config, db, log, masterKey, keys, directory, tokens, metrics, throttle, instanceId };

  let discoveryJson = JSON.stringify(await discoveryDocument(gh));
  const cors = createCors(db, instanceId, config.externalUrl);
  return {
    gh,
    discoveryJson: () => discoveryJson,
    cors,
    async refresh() {
      directory.clear();
      cors.clear();
      await keys.refresh();
      discoveryJson = JSON.stringify(await discoveryDocument(gh));
    },
    async close() {
      await db.destroy();
    },
  };
}
