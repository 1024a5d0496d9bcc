/**
 * The password check of the login UI, with brute-force lockout (docs/security.md 10.3, 10.11). An unknown
 * login name, a wrong password, a user without a password, a user who may not sign in and a locked
 * user all get the same answer after the same work: one argon2 verification (decoyVerify where no
 * hash exists) and one database write. Only the right password of a locked user is told about the
 * lock, so the lockout reveals nothing to someone who does not know the password.
 * Wrong OTP codes (login step and API) count towards the same lockout through countFailedAttempt
 * (lockout.ts); only a completed sign-in (login/finish.ts) resets the count, never a right password
 * alone (docs/security.md 10.3). Failures are also counted per client address (ctx.throttle), which
 * is checked before any hash.
 */
import { decoyVerify, verifySecret } from '../kernel/crypto.ts';
import { countFailedAttempt, countRefusalWhileLocked, currentLock } from './lockout.ts';
import type { PasswordAttempt } from './login-names.ts';
import type { FailureThrottle } from './failure-throttle.ts';
import type { LockoutContext } from './lockout.ts';

/** What a password check uses: the lockout's context and the failures per client address. */
export interface PasswordCheckContext extends LockoutContext {
  throttle: FailureThrottle;
}

export type PasswordCheck =
  | { kind: 'valid'; userId: string }
  | { kind: 'invalid' }
  /** The right password of a locked user: the only answer that tells of the lock (docs/security.md 10.11). */
  | { kind: 'locked'; until: Date }
  /** Too many failures from this address: nothing was checked (docs/security.md 10.11). */
  | { kind: 'throttled'; retryAfterSeconds: number };

export interface PasswordInput {
  requestId: string;
  /** The user the request's login name named (`passwordAttempt` in sign-in.ts). */
  user: PasswordAttempt['user'];
  password: string;
  /** The client address failures are counted against. */
  address: string;
}

/** Checks `password` for the user the request's login name named. */
export async function checkPassword(ctx: PasswordCheckContext, input: PasswordInput, now = new Date()): Promise<PasswordCheck> {
  const { requestId, user, password, address } = input;
  // Taken before the hash and given back when right, so parallel guesses cannot outrun the limit.
  const wait = ctx.throttle.take(address, now.getTime());
  if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };

  let matches: boolean;
  try {
    matches = user?.passwordHash ? await verifySecret(user.passwordHash, password) : await decoyVerify(password);
  } catch (error) {
    ctx.throttle.succeeded(address, now.getTime()); // HashingBusy: nothing was checked
    throw error;
  }
  const right = user !== undefined && matches && user.state === 'active';
  // Re-read after the hash: a lock set by guesses that finished meanwhile must hold for this one too.
  const lockedUntil = right ? await currentLock(ctx.db, user.id, now) : user?.lockedUntil && user.lockedUntil > now ? user.lockedUntil : undefined;
  if (right) ctx.throttle.succeeded(address, now.getTime()); // a right password is no failure, locked or not
  if (right && lockedUntil === undefined) return { kind: 'valid', userId: user.id };

  if (user && lockedUntil !== undefined) {
    // Counted on the request only (the same write as any refusal): failures during a lock do not
    // extend it, so a stranger's guesses cannot keep an account locked for ever.
    await countRefusalWhileLocked(ctx.db, requestId, lockedUntil);
    ctx.log.info({ event: 'login.failed', factor: 'password', authRequestId: requestId, userId: user.id, locked: true }, 'password refused: user locked');
    return right ? { kind: 'locked', until: lockedUntil } : { kind: 'invalid' };
  }
  // Refused: an inactive or administratively locked user counts like a wrong password, so that
  // nothing distinguishes the cases. The failure that reaches the threshold locks the user but is
  // answered like any other (docs/security.md 10.11): only a later right password learns of the lock.
  await countFailedAttempt(ctx, { requestId, user, factor: 'password' }, now);
  return { kind: 'invalid' };
}
