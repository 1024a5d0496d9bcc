/**
 * RSA key pairs for the suites, made once per `jest` run. A 2048-bit RSA key takes 80–150 ms of CPU
 * to generate, and the suites asked for well over a hundred of them (three per `fixture()` alone, and
 * the first signing key of every test server): more than 15 s of a run's CPU. The global setup now
 * generates a pool in the background threads while the database template is migrated, and each test
 * file hands out its keys in turn, so no two keys a file gets are the same. A file that needs more
 * than the pool holds, or a run without the global setup, generates the rest as before. Files share
 * the pool, which is harmless: each has a database and a server of its own.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeStaleTempFolders } from './stale.ts';

/** Names the JSON file (an array of PKCS #8 PEM private keys) of this run's pool. */
const POOL_ENV = 'TEST_RSA_KEY_POOL';
const POOL_PREFIX = 'gatehouse-keys-';
/** More than the most keys one file takes (bad-input takes 10 and one per server). */
const POOL_SIZE = 20;

export interface RsaKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

let pool: string[] | undefined;
let next = 0;

/** A 2048-bit RSA key pair that no earlier call of this test file returned. */
export function rsaKeyPair(): RsaKeyPair {
  pool ??= readPool();
  const pem = pool[next++];
  if (pem === undefined) return generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

function readPool(): string[] {
  const file = process.env[POOL_ENV];
  return file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as string[]) : [];
}

/** Generates this run's pool and names it in the environment the workers inherit. */
export async function createKeyPool(): Promise<void> {
  removeStaleTempFolders(POOL_PREFIX);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), POOL_PREFIX));
  const one = () =>
    new Promise<string>((resolve, reject) =>
      generateKeyPair('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }, (error, _publicKey, privateKey) =>
        error ? reject(error) : resolve(privateKey),
      ),
    );
  const keys = await Promise.all(Array.from({ length: POOL_SIZE }, one));
  const file = path.join(folder, 'keys.json');
  fs.writeFileSync(file, JSON.stringify(keys), { mode: 0o600 });
  process.env[POOL_ENV] = file;
}

/** Removes this run's pool. */
export function removeKeyPool(): void {
  const file = process.env[POOL_ENV];
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
  delete process.env[POOL_ENV];
}
