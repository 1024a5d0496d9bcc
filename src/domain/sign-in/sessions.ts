/**
 * Browser sessions. A browser is known by a cookie the server issued, stored only
 * as its SHA-256 (`browser_hash`). A browser holds one active user session per user who signed in in
 * it; each records when and how the user authenticated (`auth_time`, `amr`: pwd, otp, mfa).
 *
 * docs/security.md 10.7: the cookie value is `<random>.<mac>`, the MAC an HMAC of the random part
 * under a key derived from the master key, so the server recognizes the values it issued without
 * storing them (several processes sharing a master key agree) and ignores any other (session
 * fixation by a planted value). Every completed sign-in moves the browser to a fresh value
 * (moveBrowser).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { inTransaction, type DB } from '../../store/database.ts';
import type { UserSessionRow } from '../../store/schema.ts';
import {
  endActiveBrowserSessions,
  findActiveSession,
  findBrowserUserSessionForUpdate,
  insertSession,
  listActiveSessions,
  moveActiveSessions,
  reauthenticateSession,
  setSessionLastUsed,
} from '../../store/user-sessions.ts';
import { sha256, type MasterKey } from '../kernel/crypto.ts';
import { newId, randomToken } from '../kernel/ids.ts';
import { movePendingRequests } from './auth-requests.ts';

export const BROWSER_COOKIE = 'gh_browser';

/** 256 random bits and a 256-bit HMAC, base64url: what a well-formed cookie value looks like. */
const BROWSER_ID = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

function macOf(masterKey: MasterKey, random: string): Buffer {
  return createHmac('sha256', masterKey.derive('browser cookie')).update(random).digest();
}

/** A new browser id, issued by this server (docs/security.md 10.7). */
export function newBrowserId(masterKey: MasterKey): string {
  const random = randomToken(32);
  return `${random}.${macOf(masterKey, random).toString('base64url')}`;
}

/** Whether this server issued `value` (constant-time MAC comparison). */
export function isIssuedBrowserId(masterKey: MasterKey, value: string): boolean {
  const match = BROWSER_ID.exec(value);
  if (!match) return false;
  const given = Buffer.from(match[2]!, 'base64url');
  return given.length === 32 && timingSafeEqual(given, macOf(masterKey, match[1]!));
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
  const rows = await listActiveSessions(db, instanceId, browser);
  return rows.map(toSession);
}

export async function sessionById(db: DB, id: string): Promise<UserSession | undefined> {
  const row = await findActiveSession(db, id);
  return row ? toSession(row) : undefined;
}

/**
 * Records a successful authentication of `userId` in this browser: a new session, or the browser's
 * existing session of that user with a new auth_time and amr. Returns the session. Runs in `db`'s
 * transaction when it is one (login/finish.ts records the whole sign-in in one).
 */
export async function recordAuthentication(
  db: DB,
  input: { instanceId: string; browser: string; userId: string; amr: string[]; at?: Date },
): Promise<UserSession> {
  const at = input.at ?? new Date();
  return inTransaction(db, async (trx) => {
    const existing = await findBrowserUserSessionForUpdate(trx, input.browser, input.userId);
    if (existing) return toSession(await reauthenticateSession(trx, existing.id, { amr: input.amr, at }));
    const row = await insertSession(trx, {
      id: newId(),
      instance_id: input.instanceId,
      browser_hash: input.browser,
      user_id: input.userId,
      auth_time: at,
      amr: input.amr,
      created_at: at,
      last_used_at: at,
    });
    return toSession(row);
  });
}

export async function touchSession(db: DB, id: string, at = new Date()): Promise<void> {
  await setSessionLastUsed(db, id, at);
}

/** Ends every active session of the browser; returns their ids (to revoke what they issued). */
export async function endBrowserSessions(db: DB, instanceId: string, browser: string): Promise<string[]> {
  return endActiveBrowserSessions(db, instanceId, browser, new Date());
}

/**
 * Moves everything of browser `from` to browser `to` (docs/security.md 10.7: a completed sign-in
 * gives the browser a fresh cookie): its active sessions and its pending authorization requests, in
 * one transaction (or in `db`'s, when it is one), so the old value, whoever else holds it, carries
 * nothing afterwards.
 */
export async function moveBrowser(db: DB, instanceId: string, from: string, to: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    await moveActiveSessions(trx, instanceId, from, to);
    await movePendingRequests(trx, instanceId, from, to);
  });
}
