/**
 * Authorization requests (`auth_requests`): created at /authorize, carried through the login UI
 * (which records here the login name, the user, the password check and the OTP code owed), answered
 * with a code that is consumed once.
 */
import type { Insertable } from 'kysely';
import type { DB } from './database.ts';
import type { AuthRequestRow, AuthRequestsTable, UserState } from './schema.ts';

export async function insertAuthRequest(db: DB, values: Insertable<AuthRequestsTable>): Promise<AuthRequestRow> {
  return db.insertInto('auth_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A request of this browser that is neither expired nor answered. */
export async function findPendingAuthRequest(db: DB, id: string, browser: string, now: Date): Promise<AuthRequestRow | undefined> {
  return db
    .selectFrom('auth_requests')
    .selectAll()
    .where('id', '=', id)
    .where('browser_hash', '=', browser)
    .where('code_hash', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Moves the browser's unanswered requests from browser hash `from` to `to`. */
export async function movePendingAuthRequests(db: DB, instanceId: string, from: string, to: string, now: Date): Promise<void> {
  await db
    .updateTable('auth_requests')
    .set({ browser_hash: to })
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', from)
    .where('code_hash', 'is', null)
    .where('expires_at', '>', now)
    .execute();
}

/** The request is authenticated by this session of this user. */
export async function setAuthRequestSession(db: DB, id: string, userId: string, sessionId: string): Promise<void> {
  await db.updateTable('auth_requests').set({ user_id: userId, session_id: sessionId }).where('id', '=', id).execute();
}

/** The code that answers the request (its hash) and the grant it starts; with the session it carries, when given. */
export async function setAuthRequestCode(
  db: DB,
  id: string,
  code: { hash: string; expiresAt: Date; grantId: string; session?: { userId: string; sessionId: string } | undefined },
): Promise<void> {
  const session = code.session ? { user_id: code.session.userId, session_id: code.session.sessionId } : {};
  await db
    .updateTable('auth_requests')
    .set({ code_hash: code.hash, code_expires_at: code.expiresAt, grant_id: code.grantId, ...session })
    .where('id', '=', id)
    .execute();
}

/** Marks the request answered without a code (a code hash no code has, already used). */
export async function markAuthRequestClosed(db: DB, id: string, at: Date): Promise<void> {
  await db.updateTable('auth_requests').set({ code_hash: `closed:${id}`, code_used_at: at }).where('id', '=', id).execute();
}

/** The request a code answered, its row locked for the transaction. */
export async function findAuthRequestByCodeForUpdate(db: DB, codeHash: string): Promise<AuthRequestRow | undefined> {
  return db.selectFrom('auth_requests').selectAll().where('code_hash', '=', codeHash).forUpdate().executeTakeFirst();
}

export async function markCodeUsed(db: DB, id: string, at: Date): Promise<void> {
  await db.updateTable('auth_requests').set({ code_used_at: at }).where('id', '=', id).execute();
}

/** The login name step's result: the name as typed and the user it names (null when none). */
export async function rememberLoginName(db: DB, requestId: string, loginName: string, userId: string | null): Promise<void> {
  await db.updateTable('auth_requests').set({ login_name: loginName, user_id: userId, session_id: null }).where('id', '=', requestId).execute();
}

export async function rememberedLoginName(db: DB, requestId: string): Promise<string | undefined> {
  const row = await db.selectFrom('auth_requests').select('login_name').where('id', '=', requestId).executeTakeFirst();
  return row?.login_name ?? undefined;
}

/** The request's login name and the human user it named, if any (null columns when none). */
export interface PasswordAttemptRow {
  login_name: string | null;
  user_id: string | null;
  org_id: string | null;
  state: UserState | null;
  password_hash: string | null;
  locked_until: Date | null;
}

/** What the password step checks, in one query whether or not the login name named a user. */
export async function findPasswordAttempt(db: DB, requestId: string): Promise<PasswordAttemptRow | undefined> {
  return db
    .selectFrom('auth_requests as r')
    .leftJoin('users as u', (join) => join.onRef('u.id', '=', 'r.user_id').on('u.kind', '=', 'human'))
    .select(['r.login_name', 'u.id as user_id', 'u.org_id', 'u.state', 'u.password_hash', 'u.locked_until'])
    .where('r.id', '=', requestId)
    .executeTakeFirst();
}

/** The first factor of `userId` (its amr values) was proven at `at`; the request now waits for a second factor. */
export async function markOtpPending(db: DB, requestId: string, userId: string, at: Date, firstFactorAmr: readonly string[]): Promise<void> {
  await db
    .updateTable('auth_requests')
    .set({ password_checked_at: at, otp_pending_user_id: userId, first_factor_amr: firstFactorAmr.join(' ') })
    .where('id', '=', requestId)
    .execute();
}

export async function clearOtpPending(db: DB, requestId: string): Promise<void> {
  await db.updateTable('auth_requests').set({ otp_pending_user_id: null }).where('id', '=', requestId).execute();
}

/** The request's OTP mark with the user it names (none when no user owes a code). */
export interface OtpPendingRow {
  login_name: string | null;
  user_id: string | null;
  otp_pending_user_id: string | null;
  password_checked_at: Date | null;
  first_factor_amr: string | null;
  id: string;
  org_id: string;
  state: UserState;
  locked_until: Date | null;
}

export async function findOtpPending(db: DB, requestId: string): Promise<OtpPendingRow | undefined> {
  return db
    .selectFrom('auth_requests as r')
    .innerJoin('users as u', 'u.id', 'r.otp_pending_user_id')
    .select(['r.login_name', 'r.user_id', 'r.otp_pending_user_id', 'r.password_checked_at', 'r.first_factor_amr', 'u.id', 'u.org_id', 'u.state', 'u.locked_until'])
    .where('r.id', '=', requestId)
    .executeTakeFirst();
}
