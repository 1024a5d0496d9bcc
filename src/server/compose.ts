/**
 * Composition: opens the database, checks the master key against it before anything is written
 * (server/master-key.ts), migrates, binds the key, and builds the `Gatehouse` context (master key,
 * instance, signing keys, directory, tokens, metrics, throttle) with the caches a change empties
 * (the discovery document, the CORS origins).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { Gatehouse } from '../context.ts';
import { Directory } from '../domain/instance/directory.ts';
import { FailureThrottle } from '../domain/sign-in/failure-throttle.ts';
import { KeyStore } from '../domain/tokens/keys.ts';
import { Tokens } from '../domain/tokens/tokens.ts';
import { discoveryDocument } from '../oauth/discovery.ts';
import { findFirstInstanceId } from '../store/instances.ts';
import { migrate, openDatabase, type DB } from '../store/database.ts';
import { createCors, type Cors } from './cors.ts';
import { openMasterKey } from './master-key.ts';
import { createMetrics } from '../metrics/metrics.ts';

export interface ComposeOptions {
  config: Config;
  log: Logger;
  /** Runs after migrations, before anything is built: first-run defaults or a bootstrap file. */
  prepare?: ((db: DB) => Promise<void>) | undefined;
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

export async function compose(options: ComposeOptions): Promise<Composition> {
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
  await migrate(db);
  await opened.bind();
  const masterKey = opened.key;
  await prepare?.(db);
  const instanceId = await findFirstInstanceId(db); // the instance this database serves (the first created)
  if (!instanceId) throw new Error('the database has no instance: run `gatehouse bootstrap FILE` or start without a bootstrap file');

  const keys = new KeyStore(db, masterKey, {
    signingAlg: config.signingAlg,
    keyRotationSeconds: config.keyRotationSeconds,
    maxTokenSeconds: Math.max(config.lifetimes.accessToken, config.lifetimes.idToken),
  });
  await keys.refresh();
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
