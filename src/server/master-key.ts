/**
 * Which master key a process uses, checked against the database before the process writes anything
 * (the binding itself: domain/master-key-check.ts). The key comes from GATEHOUSE_MASTER_KEY, else from
 * the file a first start generated into the data folder. A key file is generated only for a database
 * that knows no key yet: without the variable, a process on a database sealed under some key refuses
 * to start instead of sealing under a new one.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/index.ts';
import { MasterKey } from '../domain/kernel/crypto.ts';
import { bindMasterKey, judgeMasterKey, knowsAKey } from '../domain/instance/master-key-check.ts';
import type { DB } from '../store/database.ts';

/** The master key does not belong to this database: the process stops before writing (exit 2). */
export class MasterKeyRefused extends ConfigError {}

type KeyConfig = Pick<Config, 'masterKey' | 'dataDir'>;

interface ConfiguredKey {
  key: MasterKey;
  /** The key file it was read from; undefined for GATEHOUSE_MASTER_KEY. */
  file: string | undefined;
}

function keyFileOf(config: KeyConfig): string {
  return path.join(config.dataDir, 'master.key');
}

function parseKey(base64: string, from: string): MasterKey {
  try {
    return new MasterKey(base64);
  } catch {
    throw new ConfigError(`${from} must hold 32 bytes, base64-encoded`);
  }
}

/** The key this process is configured with, if any: the variable, else an existing key file. */
function configuredKey(config: KeyConfig): ConfiguredKey | undefined {
  if (config.masterKey) return { key: parseKey(config.masterKey, 'GATEHOUSE_MASTER_KEY'), file: undefined };
  const file = keyFileOf(config);
  if (!fs.existsSync(file)) return undefined;
  return { key: parseKey(fs.readFileSync(file, 'utf8').trim(), file), file };
}

function generateKeyFile(config: KeyConfig, log: Logger): ConfiguredKey {
  const file = keyFileOf(config);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const base64 = randomBytes(32).toString('base64');
  fs.writeFileSync(file, base64, { mode: 0o600, flag: 'wx' });
  log.warn({ file }, 'GATEHOUSE_MASTER_KEY is not set: generated a master key into the data dir; set the variable in production');
  return { key: new MasterKey(base64), file };
}

function refused({ file }: ConfiguredKey): MasterKeyRefused {
  const which = file ? `GATEHOUSE_MASTER_KEY is not set, and the key in ${file}` : 'GATEHOUSE_MASTER_KEY';
  return new MasterKeyRefused(
    `${which} does not match this database: its data was encrypted under another master key; ` +
      'set GATEHOUSE_MASTER_KEY to the key the database was first started with',
  );
}

export interface OpenedMasterKey {
  key: MasterKey;
  /** After the migrations: stores the key's check when the database has none (refuses if another process stored another). */
  bind(): Promise<void>;
}

/**
 * The master key of a process that seals or opens data (a server, `keys rotate`), checked against the
 * database; read only, so it runs before the migrations. Generates a key file when none is configured
 * and the database knows no key.
 */
export async function openMasterKey(db: DB, config: KeyConfig, log: Logger): Promise<OpenedMasterKey> {
  let configured = configuredKey(config);
  if (!configured) {
    if (await knowsAKey(db)) {
      throw new MasterKeyRefused(
        "GATEHOUSE_MASTER_KEY is not set, and this database's data was encrypted under a master key: set GATEHOUSE_MASTER_KEY to that key",
      );
    }
    configured = generateKeyFile(config, log);
  }
  const { key } = configured;
  const verdict = await judgeMasterKey(db, key);
  if (verdict === 'another') throw refused(configured);
  return {
    key,
    async bind() {
      if (verdict !== 'bound' && !(await bindMasterKey(db, key))) throw refused(configured);
    },
  };
}

/**
 * For a command that seals nothing (migrate, bootstrap, features, machine keys): refuses a configured
 * key the database does not know, so that no process runs under a wrong key; generates no key file and
 * stores no check.
 */
export async function checkMasterKey(db: DB, config: KeyConfig): Promise<void> {
  const configured = configuredKey(config);
  if (configured && (await judgeMasterKey(db, configured.key)) === 'another') throw refused(configured);
}
