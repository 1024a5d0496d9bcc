/**
 * The `signing_keys` table (docs/decisions.md#signing-keys): public JWK and encrypted private key
 * of every key still published, and the advisory lock that serializes rotations across every
 * Gatehouse process.
 */
import { sql, type Insertable } from 'kysely';
import type { DB } from './database.ts';
import type { SigningKeyRow, SigningKeysTable } from './schema.ts';

const ROTATION_LOCK = 7_041_001; // pg_advisory_xact_lock key shared by every Gatehouse process

/** Holds the rotation lock until `trx` ends: one rotation at a time on this database. */
export async function lockKeyRotation(trx: DB): Promise<void> {
  await sql`select pg_advisory_xact_lock(${ROTATION_LOCK})`.execute(trx);
}

export async function listSigningKeys(db: DB): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().execute();
}

/** Adds a key (`public_jwk` serialized, `private_key` encrypted under the master key). */
export async function insertSigningKey(db: DB, key: Insertable<SigningKeysTable>): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
}

/** Deletes keys that are no longer published (housekeeping). */
export async function deleteSigningKeys(db: DB, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('signing_keys').where('id', 'in', ids).execute();
}
