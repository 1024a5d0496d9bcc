/**
 * The `used_assertions` table: the JWT assertions already accepted (RFC 7523 §3 item 7, SPEC 10.9),
 * one row per signer and assertion id, kept until the assertion can no longer be accepted.
 */
import type { DB } from './database.ts';

/** Records an assertion as used; resolves to false when it already was (the row exists). */
export async function markAssertionUsed(db: DB, id: string, expiresAt: Date): Promise<boolean> {
  const inserted = await db
    .insertInto('used_assertions')
    .values({ id, expires_at: expiresAt })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return inserted.numInsertedOrUpdatedRows !== 0n;
}

/** Deletes the records of assertions that expired before `now` (housekeeping). */
export async function deleteExpiredAssertions(db: DB, now: Date): Promise<void> {
  await db.deleteFrom('used_assertions').where('expires_at', '<', now).execute();
}
