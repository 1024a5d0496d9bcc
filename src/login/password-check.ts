/**
 * The password check of the login UI, with brute-force lockout (SPEC §7). An unknown login name, a
 * wrong password, a user without a password and a user who may not sign in all get the same
 * answer after the same work: one argon2 verification (decoyVerify where no hash exists) and one
 * database write. Only a locked user is told so, and only once the threshold is reached.
 * Wrong OTP codes (login step and API) count towards the same lockout through countFailedAttempt.
 */
import type { Gatehouse } from '../context.ts';
import { decoyVerify, verifySecret } from '../domain/crypto.ts';
import { appendEvent } from '../domain/events.ts';
import { clearFailedPasswords, countFailedPassword, type PasswordAttempt } from './store.ts';

/** Consecutive failed passwords or OTP codes that lock a user. SPEC §7 (10); a constant until it is configurable. */
export const LOCKOUT_THRESHOLD = 10;
/** How long such a lock lasts. SPEC §7 (15 minutes); a constant until it is configurable. */
export const LOCKOUT_SECONDS = 15 * 60;

export type PasswordCheck =
  | { kind: 'valid'; userId: string }
  | { kind: 'invalid' }
  | { kind: 'locked'; until: Date };

/** Checks `password` for the user the request's login name named (`passwordAttempt` in store.ts). */
export async function checkPassword(gh: Gatehouse, requestId: string, user: PasswordAttempt['user'], password: string, now = new Date()): Promise<PasswordCheck> {
  if (user?.lockedUntil && user.lockedUntil > now) return { kind: 'locked', until: user.lockedUntil };

  const matches = user?.passwordHash ? await verifySecret(user.passwordHash, password) : await decoyVerify(password);
  if (user && matches && user.state === 'active') {
    await clearFailedPasswords(gh.db, user.id);
    return { kind: 'valid', userId: user.id };
  }

  // Refused: an inactive or administratively locked user counts like a wrong password, so that
  // nothing distinguishes the cases before the lockout threshold.
  return countFailedAttempt(gh, { requestId, user, factor: 'password' }, now);
}

export type AttemptRefusal = { kind: 'invalid' } | { kind: 'locked'; until: Date };

/**
 * Counts a refused password or OTP code towards the user's lockout (LOCKOUT_THRESHOLD consecutive
 * failures lock for LOCKOUT_SECONDS): on the login UI's request when there is one, and on the user
 * when there is one. Reaching the threshold locks the user, which is recorded as a `user.locked` event.
 */
export async function countFailedAttempt(
  gh: Gatehouse,
  input: { requestId?: string | undefined; user: { id: string; orgId: string } | undefined; factor: 'password' | 'otp' },
  now = new Date(),
): Promise<AttemptRefusal> {
  const { requestId, user, factor } = input;
  const lockUntil = new Date(now.getTime() + LOCKOUT_SECONDS * 1000);
  const lockedUntil =
    requestId !== undefined
      ? await countFailedPassword(gh.db, { requestId, userId: user?.id, threshold: LOCKOUT_THRESHOLD, lockUntil })
      : user
        ? await countUserFailure(gh, user.id, lockUntil)
        : null;
  gh.log.info({ event: 'login.failed', factor, authRequestId: requestId, userId: user?.id }, `${factor} refused`);
  if (user && lockedUntil && lockedUntil > now) {
    await appendEvent(gh.db, {
      instanceId: gh.instanceId,
      aggregateType: 'user',
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.locked',
      payload: { reason: factor === 'password' ? 'failed_passwords' : 'failed_otp_codes', until: lockedUntil.toISOString() },
    });
    gh.log.warn({ event: 'user.locked', userId: user.id, until: lockedUntil }, `user locked after repeated failed ${factor === 'password' ? 'passwords' : 'OTP codes'}`);
    return { kind: 'locked', until: lockedUntil };
  }
  return { kind: 'invalid' };
}

/**
 * The user's counter alone (an API call has no login request), by the same statement as the login
 * UI's: with no request row to update, only its user update runs (PostgreSQL runs data-modifying
 * WITH statements to completion whether or not the main statement touches a row), so the lock it
 * may have set is read back afterwards.
 */
async function countUserFailure(gh: Gatehouse, userId: string, lockUntil: Date): Promise<Date | null> {
  await countFailedPassword(gh.db, { requestId: '', userId, threshold: LOCKOUT_THRESHOLD, lockUntil });
  const row = await gh.db.selectFrom('users').select('locked_until').where('id', '=', userId).executeTakeFirst();
  return row?.locked_until ?? null;
}
