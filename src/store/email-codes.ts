/**
 * Contact email verification codes (`email_codes`): one pending code per user, stored as a salted
 * hash, with its id (which the default mailed link carries) and the counts of wrong tries: those
 * that presented the id, and those that did not.
 */
import type { DB } from './database.ts';

export interface EmailCodeValues {
  id: string;
  code_hash: string;
  salt: string;
  expires_at: Date;
  created_at: Date;
}

/** Stores the user's code, replacing any previous one (and its counts of wrong tries). */
export async function upsertEmailCode(db: DB, userId: string, values: EmailCodeValues): Promise<void> {
  const row = { ...values, attempts: 0, anonymous_attempts: 0 };
  await db
    .insertInto('email_codes')
    .values({ user_id: userId, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
    .execute();
}

/** The user's pending code with what its verification records, both rows locked for the transaction. */
export interface PendingEmailCodeRow {
  /** Null for codes issued before codes had ids. */
  id: string | null;
  code_hash: string;
  salt: string;
  expires_at: Date;
  attempts: number;
  anonymous_attempts: number;
  instance_id: string;
  org_id: string;
  email: string | null;
}

export async function findEmailCodeForUpdate(db: DB, userId: string): Promise<PendingEmailCodeRow | undefined> {
  return db
    .selectFrom('email_codes')
    .innerJoin('users', 'users.id', 'email_codes.user_id')
    .select([
      'email_codes.id',
      'email_codes.code_hash',
      'email_codes.salt',
      'email_codes.expires_at',
      'email_codes.attempts',
      'email_codes.anonymous_attempts',
      'users.instance_id',
      'users.org_id',
      'users.email',
    ])
    .where('email_codes.user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

/** One more wrong try of the user's code: one that counts towards the code's tries, or one without its id. */
export async function countEmailCodeAttempt(db: DB, userId: string, counter: 'attempts' | 'anonymous_attempts' = 'attempts'): Promise<void> {
  await db
    .updateTable('email_codes')
    .set((eb) => (counter === 'attempts' ? { attempts: eb('attempts', '+', 1) } : { anonymous_attempts: eb('anonymous_attempts', '+', 1) }))
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteEmailCode(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('email_codes').where('user_id', '=', userId).execute();
}
