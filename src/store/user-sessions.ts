/**
 * Browser sessions (`user_sessions`): one active row per user who signed in in a browser, the
 * browser known by the hash of its cookie; ended rows keep `ended_at`.
 */
import type { Insertable } from 'kysely';
import type { DB } from './database.ts';
import type { UserSessionRow, UserSessionsTable } from './schema.ts';

/** The browser's active sessions, most recently used first. */
export async function listActiveSessions(db: DB, instanceId: string, browser: string): Promise<UserSessionRow[]> {
  return db
    .selectFrom('user_sessions')
    .selectAll()
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', browser)
    .where('ended_at', 'is', null)
    .orderBy('last_used_at', 'desc')
    .execute();
}

export async function findActiveSession(db: DB, id: string): Promise<UserSessionRow | undefined> {
  return db.selectFrom('user_sessions').selectAll().where('id', '=', id).where('ended_at', 'is', null).executeTakeFirst();
}

/** The browser's active session of that user, its row locked for the transaction. */
export async function findBrowserUserSessionForUpdate(db: DB, browser: string, userId: string): Promise<UserSessionRow | undefined> {
  return db
    .selectFrom('user_sessions')
    .selectAll()
    .where('browser_hash', '=', browser)
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** A new authentication in an existing session: new auth_time and amr. */
export async function reauthenticateSession(db: DB, id: string, input: { amr: string[]; at: Date }): Promise<UserSessionRow> {
  return db
    .updateTable('user_sessions')
    .set({ auth_time: input.at, amr: input.amr, last_used_at: input.at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertSession(db: DB, values: Insertable<UserSessionsTable>): Promise<UserSessionRow> {
  return db.insertInto('user_sessions').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function setSessionLastUsed(db: DB, id: string, at: Date): Promise<void> {
  await db.updateTable('user_sessions').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Ends every active session of the browser; returns their ids. */
export async function endActiveBrowserSessions(db: DB, instanceId: string, browser: string, at: Date): Promise<string[]> {
  const rows = await db
    .updateTable('user_sessions')
    .set({ ended_at: at })
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', browser)
    .where('ended_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Moves the browser's active sessions from browser hash `from` to `to`. */
export async function moveActiveSessions(db: DB, instanceId: string, from: string, to: string): Promise<void> {
  await db
    .updateTable('user_sessions')
    .set({ browser_hash: to })
    .where('instance_id', '=', instanceId)
    .where('browser_hash', '=', from)
    .where('ended_at', 'is', null)
    .execute();
}

/** Ends every active session of a user; returns their ids. */
export async function endUserSessions(db: DB, userId: string, at: Date, exceptSessionId?: string): Promise<string[]> {
  const rows = await db
    .updateTable('user_sessions')
    .set({ ended_at: at })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .$if(exceptSessionId !== undefined, (qb) => qb.where('id', '<>', exceptSessionId!))
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}
