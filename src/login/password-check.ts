/**
 * The password check of the login UI, with brute-force lockout (SPEC §7, 10.3, 10.11). An unknown
 * login name, a wrong password, a user without a password, a user who may not sign in and a locked
 * user all get the same answer after the same work: one argon2 verification (decoyVerify where no
 * hash exists) and one database write. Only the right password of a locked user is told about the
 * lock, so the lockout reveals nothing to someone who does not know the password.
 * Wrong OTP codes (login step and API) count towards the same lockout through countFailedAttempt;
 * only a completed sign-in (finish.ts) resets the count, never a right password alone (SPEC 10.3).
 * Failures are also counted per client address (gh.throttle), which is checked before any hash.
 */
import type { Gatehouse } from '../context.ts';
import { decoyVerify, verifySecret } from '../domain/crypto.ts';
import { appendEvent } from '../domain/events.ts';
import { countFailedPassword, userLock, type PasswordAttempt } from './store.ts';

/** Consecutive failed passwords or OTP codes that lock a user. SPEC §7 (10); a constant until it is configurable. */
export const LOCKOUT_THRESHOLD = 10;
/** How long such a lock lasts. SPEC §7 (15 minutes); a constant until it is configurable. */
export const LOCKOUT_SECONDS = 15 * 60;

export type PasswordCheck =
  | { kind: 'valid'; userId: string }
  | { kind: 'invalid' }
  /** The right password of a locked user: the only answer that tells of the lock (SPEC 10.11). */
  | { kind: 'locked'; until: Date }
  /** Too many failures from this address: nothing was checked (SPEC 10.11). */
  | { kind: 'throttled'; retryAfterSeconds: number };

export interface PasswordInput {
  requestId: string;
  /** The user the request's login name named (`passwordAttempt` in store.ts). */
  user: PasswordAttempt['user'];
  password: string;
  /** The client address failures are counted against. */
  address: string;
}

/** Checks `password` for the user the request's login name named. */
export async function checkPassword(gh: Gatehouse, input: PasswordInput, now = new Date()): Promise<PasswordCheck> {
  const { requestId, user, password, address } = input;
  // Taken before the hash and given back when right, so parallel guesses cannot outrun the limit.
  const wait = gh.throttle.take(address, now.getTime());
  if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };

  let matches: boolean;
  try {
    matches = user?.passwordHash ? await verifySecret(user.passwordHash, password) : await decoyVerify(password);
  } catch (error) {
    gh.throttle.succeeded(address, now.getTime()); // HashingBusy: nothing was checked
    throw error;
  }
  const right = user !== undefined && matches && user.state === 'active';
  // Re-read after the hash: a lock set by guesses that finished meanwhile must hold for this one too.
  const lockedUntil = right ? await currentLock(gh, user.id, now) : user?.lockedUntil && user.lockedUntil > now ? user.lockedUntil : undefined;
  if (right) gh.throttle.succeeded(address, now.getTime()); // a right password is no failure, locked or not
  if (right && lockedUntil === undefined) return { kind: 'valid', userId: user.id };

  if (user && lockedUntil !== undefined) {
    // Counted on the request only (the same write as any refusal): failures during a lock do not
    // extend it, so a stranger's guesses cannot keep an account locked for ever.
    await countFailedPassword(gh.db, { requestId, userId: undefined, threshold: LOCKOUT_THRESHOLD, lockUntil: lockedUntil });
    gh.log.info({ event: 'login.failed', factor: 'password', authRequestId: requestId, userId: user.id, locked: true }, 'password refused: user locked');
    return right ? { kind: 'locked', until: lockedUntil } : { kind: 'invalid' };
  }
  // Refused: an inactive or administratively locked user counts like a wrong password, so that
  // nothing distinguishes the cases. The failure that reaches the threshold locks the user but is
  // answered like any other (SPEC 10.11): only a later right password learns of the lock.
  await countFailedAttempt(gh, { requestId, user, factor: 'password' }, now);
  return { kind: 'invalid' };
}

/** The user's lock as it stands now, if it has not expired. */
async function currentLock(gh: Gatehouse, userId: string, now: Date): Promise<Date | undefined> {
  const lockedUntil = await userLock(gh.db, userId);
  return lockedUntil && lockedUntil > now ? lockedUntil : undefined;
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
  /** The transaction that holds the user's row lock, when the caller checked the code under it. */
  db: Gatehouse['db'] = gh.db,
): Promise<AttemptRefusal> {
  const { requestId, user, factor } = input;
  const lockUntil = new Date(now.getTime() + LOCKOUT_SECONDS * 1000);
  const lockedUntil =
    requestId !== undefined
      ? await countFailedPassword(db, { requestId, userId: user?.id, threshold: LOCKOUT_THRESHOLD, lockUntil })
      : user
        ? await countUserFailure(db, user.id, lockUntil)
        : null;
  gh.log.info({ event: 'login.failed', factor, authRequestId: requestId, userId: user?.id }, `${factor} refused`);
  if (user && lockedUntil && lockedUntil > now) {
    await appendEvent(db, {
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
async function countUserFailure(db: Gatehouse['db'], userId: string, lockUntil: Date): Promise<Date | null> {
  await countFailedPassword(db, { requestId: '', userId, threshold: LOCKOUT_THRESHOLD, lockUntil });
  return userLock(db, userId);
}
