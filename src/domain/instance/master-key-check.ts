/**
 * The master key is bound to the database, so that nothing is ever sealed under a key the database
 * does not know (a CLI run without the deployment's key once made every server's signing fail). The
 * binding is a check stored in the database: HMAC-SHA256 of a fixed label under a key derived from
 * the master key for this purpose alone. It tells keys apart and reveals nothing of them; it is
 * compared in constant time.
 *
 * A database from before the check was kept has none: there the key is tried on what is already
 * sealed (the newest signing key, an OTP secret), and the check is stored only if that opens.
 */
import { createHmac } from 'node:crypto';
import type { DB } from '../../store/database.ts';
import { findKeyCheck, sealedSamples, storeKeyCheck } from '../../store/master-key-check.ts';
import { safeEqual, type MasterKey } from '../kernel/crypto.ts';

const LABEL = 'gatehouse master key check';

/** The check of `key`: `v1.` and the base64url HMAC. */
export function keyCheckOf(key: MasterKey): string {
  return `v1.${createHmac('sha256', key.derive('master key check')).update(LABEL).digest('base64url')}`;
}

/**
 * What the database says of `key`, read only: `bound` (its check is stored), `opens` (no check, but it
 * opens what is sealed), `unknown` (no check and nothing sealed), or `another` (it is not the key).
 */
export type KeyVerdict = 'bound' | 'opens' | 'unknown' | 'another';

function opens(key: MasterKey, sealed: string): boolean {
  try {
    key.decrypt(sealed);
    return true;
  } catch {
    return false; // AES-GCM's tag does not verify: sealed under another key
  }
}

export async function judgeMasterKey(db: DB, key: MasterKey): Promise<KeyVerdict> {
  const check = await findKeyCheck(db);
  if (check !== undefined) return safeEqual(check, keyCheckOf(key)) ? 'bound' : 'another';
  const samples = await sealedSamples(db);
  if (samples.length === 0) return 'unknown';
  return samples.every((sealed) => opens(key, sealed)) ? 'opens' : 'another';
}

/** Whether the database knows a master key already: it has a check, or sealed data. */
export async function knowsAKey(db: DB): Promise<boolean> {
  return (await findKeyCheck(db)) !== undefined || (await sealedSamples(db)).length > 0;
}

/**
 * Stores the check of `key` unless one is stored, and tells whether the stored check is `key`'s: of
 * two processes binding different keys at once, one wins and the other learns it lost.
 */
export async function bindMasterKey(db: DB, key: MasterKey): Promise<boolean> {
  const mine = keyCheckOf(key);
  return safeEqual(await storeKeyCheck(db, mine), mine);
}
