/**
 * The brute-force lockout of a user (docs/security.md 10.3, 10.11): LOCKOUT_THRESHOLD consecutive failed
 * passwords or OTP codes lock the user for LOCKOUT_SECONDS. One rule for the login UI (which counts
 * on its authorization request as well as on the user) and the API (which has no request and counts
 * on the user alone). Only a completed sign-in ends a run of failures (clearLockout), never a right
 * password or code alone (docs/security.md 10.3). The counting statements are in store/users.ts.
 */
import type { DB } from '../../store/database.ts';
import { clearFailedAttempts, countFailedLogin, countFailedUserAttempt, findLockForUpdate, findUserLock } from '../../store/users.ts';
import { appendEvent } from '../kernel/events.ts';
import type { Logger } from 'pino';

/** What counting a failure uses: the database, the log, the instance of the lock event. */
export interface LockoutContext {
  db: DB;
  log: Logger;
  instanceId: string;
}

/**
 * Consecutive failed passwords or OTP codes that lock a user (docs/decisions.md#login-names-and-lockout);
 * a constant until it is configurable.
 */
export const LOCKOUT_THRESHOLD = 10;
/** How long such a lock lasts (docs/decisions.md#login-names-and-lockout); a constant until it is configurable. */
export const LOCKOUT_SECONDS = 15 * 60;

export type AttemptRefusal = { kind: 'invalid' } | { kind: 'locked'; until: Date };

/** Whole minutes until a lock ends, at least one: what the lockout messages tell. */
export function minutesUntil(until: Date, now: Date | number = Date.now()): number {
  return Math.max(1, Math.ceil((until.getTime() - (typeof now === 'number' ? now : now.getTime())) / 60_000));
}

/** The lock event's reason, and how the log names the failures, per factor. */
const LOCK_REASONS = { password: 'failed_passwords', otp: 'failed_otp_codes', passkey: 'failed_passkeys' } as const;
const FACTOR_WORDS = { password: 'passwords', otp: 'OTP codes', passkey: 'passkey sign-ins' } as const;

/**
 * Counts a refused password or OTP code towards the user's lockout (LOCKOUT_THRESHOLD consecutive
 * failures lock for LOCKOUT_SECONDS): on the login UI's request when there is one, and on the user
 * when there is one. Reaching the threshold locks the user, which is recorded as a `user.locked` event.
 */
export async function countFailedAttempt(
  ctx: LockoutContext,
  input: { requestId?: string | undefined; user: { id: string; orgId: string } | undefined; factor: 'password' | 'otp' | 'passkey' },
  now = new Date(),
  /** The transaction that holds the user's row lock, when the caller checked the code under it. */
  db: DB = ctx.db,
): Promise<AttemptRefusal> {
  const { requestId, user, factor } = input;
  const lockUntil = new Date(now.getTime() + LOCKOUT_SECONDS * 1000);
  const lockedUntil =
    requestId !== undefined
      ? await countFailedLogin(db, { requestId, userId: user?.id, threshold: LOCKOUT_THRESHOLD, lockUntil })
      : user
        ? await countFailedUserAttempt(db, { userId: user.id, threshold: LOCKOUT_THRESHOLD, lockUntil })
        : null;
  ctx.log.info({ event: 'login.failed', factor, authRequestId: requestId, userId: user?.id }, `${factor} refused`);
  if (user && lockedUntil && lockedUntil > now) {
    await appendEvent(db, {
      instanceId: ctx.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.locked',
      payload: { reason: LOCK_REASONS[factor], until: lockedUntil.toISOString() },
    });
    ctx.log.warn({ event: 'user.locked', userId: user.id, until: lockedUntil }, `user locked after repeated failed ${FACTOR_WORDS[factor]}`);
    return { kind: 'locked', until: lockedUntil };
  }
  return { kind: 'invalid' };
}

/**
 * Counts a refusal during a lock on the login UI's request only (the same write as any refusal):
 * failures during a lock do not extend it, so a stranger's guesses cannot keep an account locked for ever.
 */
export async function countRefusalWhileLocked(db: DB, requestId: string, lockedUntil: Date): Promise<void> {
  await countFailedLogin(db, { requestId, userId: undefined, threshold: LOCKOUT_THRESHOLD, lockUntil: lockedUntil });
}

/** The user's lock as it stands now, if it has not expired. */
export async function currentLock(db: DB, userId: string, now: Date): Promise<Date | undefined> {
  const lockedUntil = await findUserLock(db, userId);
  return lockedUntil && lockedUntil > now ? lockedUntil : undefined;
}

/**
 * Takes the user's row lock for the rest of the transaction, and returns the user's lockout if it
 * has not expired: read under the lock, so a failure counted by a check that ran just before is seen.
 */
export async function currentLockUnderRowLock(trx: DB, userId: string, now: Date): Promise<Date | undefined> {
  const account = await findLockForUpdate(trx, userId);
  return account?.locked_until && account.locked_until > now ? account.locked_until : undefined;
}

/** A completed sign-in ends the run of failures (and an expired lock). docs/security.md 10.3: only that. */
export async function clearLockout(db: DB, userId: string): Promise<void> {
  await clearFailedAttempts(db, userId);
}
