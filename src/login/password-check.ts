/**
 * The password check of the login UI, with brute-force lockout (SPEC §7). An unknown login name, a
 * wrong password, a user without a password and a user who may not sign in all get the same
 * answer after the same work: one argon2 verification (decoyVerify where no hash exists) and one
 * database write. Only a locked user is told so, and only once the threshold is reached.
 */
import type { Gatehouse } from '../context.ts';
import { decoyVerify, verifySecret } from '../domain/crypto.ts';
import { appendEvent } from '../domain/events.ts';
import { clearFailedPasswords, countFailedPassword, type PasswordAttempt } from './store.ts';

/** Consecutive failed passwords that lock a user. SPEC §7 (10); a constant until it is configurable. */
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
  const lockUntil = new Date(now.getTime() + LOCKOUT_SECONDS * 1000);
  const lockedUntil = await countFailedPassword(gh.db, { requestId, userId: user?.id, threshold: LOCKOUT_THRESHOLD, lockUntil });
  gh.log.info({ event: 'login.failed', authRequestId: requestId, userId: user?.id }, 'password refused');
  if (user && lockedUntil && lockedUntil > now) {
    await appendEvent(gh.db, {
      instanceId: gh.instanceId,
      aggregateType: 'user',
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.locked',
      payload: { reason: 'failed_passwords', until: lockedUntil.toISOString() },
    });
    gh.log.warn({ event: 'user.locked', userId: user.id, until: lockedUntil }, 'user locked after repeated failed passwords');
    return { kind: 'locked', until: lockedUntil };
  }
  return { kind: 'invalid' };
}
