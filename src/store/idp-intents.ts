/**
 * The `idp_intents` table: sign-ins at external identity providers in progress
 * (docs/federation.md#the-intent-calls). domain/federation/intents.ts is its one writer.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { IdpIntentsTable } from './schema.ts';

export type IdpIntentRow = Selectable<IdpIntentsTable>;

export async function insertIdpIntent(db: DB, row: Insertable<IdpIntentsTable>): Promise<void> {
  await db.insertInto('idp_intents').values(row).execute();
}

export async function findIdpIntent(db: DB, instanceId: string, id: string): Promise<IdpIntentRow | undefined> {
  return db.selectFrom('idp_intents').selectAll().where('id', '=', id).where('instance_id', '=', instanceId).executeTakeFirst();
}

export async function findIdpIntentByState(db: DB, stateHash: string): Promise<IdpIntentRow | undefined> {
  return db.selectFrom('idp_intents').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
}

/**
 * Takes a started intent for its callback: only one of two callbacks with the same state gets the
 * row (the other finds it no longer `started`).
 */
export async function claimStartedIdpIntent(db: DB, id: string): Promise<boolean> {
  const result = await db.updateTable('idp_intents').set({ status: 'exchanging' }).where('id', '=', id).where('status', '=', 'started').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Records the callback's outcome: on success the sealed result and the hash of the intent token handed out. */
export async function finishIdpIntent(db: DB, id: string, outcome: { status: 'succeeded'; sealedResult: string; tokenHash: string } | { status: 'failed' }): Promise<void> {
  await db
    .updateTable('idp_intents')
    .set(outcome.status === 'succeeded' ? { status: 'succeeded', sealed_result: outcome.sealedResult, token_hash: outcome.tokenHash } : { status: 'failed', sealed_result: null })
    .where('id', '=', id)
    .where('status', '=', 'exchanging')
    .execute();
}

/**
 * Uses a succeeded intent: marks it consumed and forgets its result (the provider's tokens), in one
 * statement; the result, or undefined when it was not (or no longer) succeeded and unexpired.
 */
export async function consumeIdpIntent(db: DB, id: string, now: Date): Promise<string | undefined> {
  const row = await db
    .with('old', (w) => w.selectFrom('idp_intents').select(['id', 'sealed_result']).where('id', '=', id).where('status', '=', 'succeeded').where('expires_at', '>', now).forUpdate())
    .updateTable('idp_intents')
    .from('old')
    .set({ status: 'consumed', sealed_result: null })
    .whereRef('idp_intents.id', '=', 'old.id')
    .returning('old.sealed_result')
    .executeTakeFirst();
  return row?.sealed_result ?? undefined;
}

/** Deletes up to `limit` intents past their expiry (with the provider's tokens they may hold). */
export async function deleteExpiredIdpIntents(db: DB, now: Date, limit: number): Promise<number> {
  // One bounded batch by physical address through the expiry index, as store/tokens.ts deleteSomeExpired.
  const result = await sql`delete from idp_intents where ctid = any(array(
      select ctid from idp_intents where expires_at < ${now} order by expires_at limit ${limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
