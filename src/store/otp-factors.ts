/**
 * Authenticator-app factors (`otp_factors`): one row per user, the secret sealed, `unverified` until
 * a first valid code makes it `ready`; `last_step` is the last accepted time step.
 */
import type { Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { OtpFactorsTable } from './schema.ts';

export type OtpFactorRow = Selectable<OtpFactorsTable>;
export type OtpFactorState = OtpFactorRow['state'];

export async function findOtpFactor(db: DB, userId: string): Promise<OtpFactorRow | undefined> {
  return db.selectFrom('otp_factors').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export async function findOtpFactorState(db: DB, userId: string): Promise<OtpFactorState | undefined> {
  const row = await db.selectFrom('otp_factors').select('state').where('user_id', '=', userId).executeTakeFirst();
  return row?.state;
}

/** The factor's state, its row locked for the transaction. */
export async function findOtpFactorStateForUpdate(db: DB, userId: string): Promise<OtpFactorState | undefined> {
  const row = await db.selectFrom('otp_factors').select('state').where('user_id', '=', userId).forUpdate().executeTakeFirst();
  return row?.state;
}

/** The user's ready factor, its row locked for the transaction. */
export async function findReadyOtpFactorForUpdate(db: DB, userId: string): Promise<OtpFactorRow | undefined> {
  return db.selectFrom('otp_factors').selectAll().where('user_id', '=', userId).where('state', '=', 'ready').forUpdate().executeTakeFirst();
}

export async function hasReadyOtpFactor(db: DB, userId: string): Promise<boolean> {
  const row = await db.selectFrom('otp_factors').select('user_id').where('user_id', '=', userId).where('state', '=', 'ready').executeTakeFirst();
  return row !== undefined;
}

/** Stores an unverified factor with this sealed secret, replacing an unverified one (never a ready one). */
export async function upsertUnverifiedOtpFactor(db: DB, userId: string, sealedSecret: string, now: Date): Promise<void> {
  const row = { secret: sealedSecret, state: 'unverified', last_step: null, created_at: now, changed_at: now } as const;
  await db
    .insertInto('otp_factors')
    .values({ user_id: userId, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row).where('otp_factors.state', '=', 'unverified'))
    .execute();
}

/** The factor is verified by a code of time step `step`. */
export async function markOtpFactorReady(db: DB, userId: string, step: number, now: Date): Promise<void> {
  await db.updateTable('otp_factors').set({ state: 'ready', last_step: step, changed_at: now }).where('user_id', '=', userId).execute();
}

/** A code of time step `step` was accepted: no code of that step or before is accepted again. */
export async function recordOtpStep(db: DB, userId: string, step: number, now: Date): Promise<void> {
  await db.updateTable('otp_factors').set({ last_step: step, changed_at: now }).where('user_id', '=', userId).execute();
}

export async function deleteOtpFactor(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('otp_factors').where('user_id', '=', userId).execute();
}
