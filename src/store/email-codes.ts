/**
 * Contact email verification codes (`email_codes`): one pending code per user, stored as a salted
 * hash, with the count of wrong tries.
 */
import type { DB } from './database.ts';

export interface EmailCodeValues {
  code_hash: string;
  salt: string;
  expires_at: Date;
  created_at: Date;
  attempts: number;
}

/** Stores the user's code, replacing any previous one. */
export async function upsertEmailCode(db: DB, userId: string, values: EmailCodeValues): Promise<void> {
  await db
    .insertInto('email_codes')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
}

/** The user's pending code with what its verification records, both rows locked for the transaction. */
export interface PendingEmailCodeRow {
  code_hash: string;
  salt: string;
  expires_at: Date;
  attempts: number;
  instance_id: string;
  org_id: string;
  email: string | null;
}

export async function findEmailCodeForUpdate(db: DB, userId: string): Promise<PendingEmailCodeRow | undefined> {
  return db
    .selectFrom('email_codes')
    .innerJoin('users', 'users.id', 'email_codes.user_id')
    .select(['email_codes.code_hash', 'email_codes.salt', 'email_codes.expires_at', 'email_codes.attempts', 'users.instance_id', 'users.org_id', 'users.email'])
    .where('email_codes.user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

/** One more wrong try of the user's code. */
export async function countEmailCodeAttempt(db: DB, userId: string): Promise<void> {
  await db.updateTable('email_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('user_id', '=', userId).execute();
}

export async function deleteEmailCode(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('email_codes').where('user_id', '=', userId).execute();
}
