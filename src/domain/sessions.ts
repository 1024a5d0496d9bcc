/**
 * Browser sessions (SPEC §7, issue 3). A browser is known by a random cookie, stored only as its
 * SHA-256 (`browser_hash`). A browser holds one active user session per user who signed in in it;
 * each records when and how the user authenticated (`auth_time`, `amr`: pwd, otp, mfa).
 */
import type { DB } from '../store/database.ts';
import type { UserSessionRow } from '../store/schema.ts';
import { sha256 } from './crypto.ts';
import { newId, randomToken } from './ids.ts';

export const BROWSER_COOKIE = 'gh_browser';

export function newBrowserId(): string {
  return randomToken(32);
}

export function browserHash(cookieValue: string): string {
  return sha256(`browser\n${cookieValue}`);
}

export interface UserSession {
  id: string;
  userId: string;
  authTime: Date;
  amr: string[];
  lastUsedAt: Date;
}

function toSession(row: UserSessionRow): UserSession {
  return { id: row.id, userId: row.user_id, authTime: row.auth_time, amr: row.amr, lastUsedAt: row.last_used_at };
}

/** The browser's active sessions, most recently used first. */
export async function activeSessions(db: DB, instanceId: string, browser: string): Promise<UserSession[]> {
  const rows = await db
    .selectFrom('user_sessions')
    .selectAll()
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', browser)
    .where('ended_at', 'is', null)
    .orderBy('last_used_at', 'desc')
    .execute();
  return rows.map(toSession);
}

export async function sessionById(db: DB, id: string): Promise<UserSession | undefined> {
  const row = await db.selectFrom('user_sessions').selectAll().where('id', '=', id).where('ended_at', 'is', null).executeTakeFirst();
  return row ? toSession(row) : undefined;
}

/**
 * Records a successful authentication of `userId` in this browser: a new session, or the browser's
 * existing session of that user with a new auth_time and amr. Returns the session.
 */
export async function recordAuthentication(
  db: DB,
  input: { instanceId: string; browser: string; userId: string; amr: string[]; at?: Date },
): Promise<UserSession> {
  const at = input.at ?? new Date();
  return db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('user_sessions')
      .selectAll()
      .where('browser_hash', '=', input.browser)
      .where('user_id', '=', input.userId)
      .where('ended_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (existing) {
      const row = await trx
        .updateTable('user_sessions')
        .set({ auth_time: at, amr: input.amr, last_used_at: at })
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSession(row);
    }
    const row = await trx
      .insertInto('user_sessions')
      .values({ id: newId(), instance_id: input.instanceId, browser_hash: input.browser, user_id: input.userId, auth_time: at, amr: input.amr, created_at: at, last_used_at: at })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSession(row);
  });
}

export async function touchSession(db: DB, id: string, at = new Date()): Promise<void> {
  await db.updateTable('user_sessions').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Ends every active session of the browser; returns their ids (to revoke what they issued). */
export async function endBrowserSessions(db: DB, instanceId: string, browser: string): Promise<string[]> {
  const rows = await db
    .updateTable('user_sessions')
    .set({ ended_at: new Date() })
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', browser)
    .where('ended_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
