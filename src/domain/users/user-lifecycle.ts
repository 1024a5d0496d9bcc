/**
 * Ending a user's access: deactivating, locking or deleting a user, and a password set by an
 * administrator or with a reset code, end its browser sessions and mark the moment before which none
 * of its tokens count (`tokens_valid_after`): JWT and opaque access tokens, refresh tokens and the
 * tokens someone else holds as the user's actor are all checked against it at every use
 * (token-user.ts, the refresh grant). None of it comes back when the user is reactivated or unlocked.
 *
 * The token rows themselves are left alone: a busy service account holds hundreds of thousands of
 * live tokens, and rewriting each row in one statement took longer than any request may. The cost
 * is one row of `users` and the user's few sessions, whatever the number of tokens.
 *
 * Codes that let someone set up a credential for the user (passkey registration links and pending
 * registrations, password reset codes) die with it too: an old link must not set up a credential
 * once the user is active again.
 *
 * Runs inside the caller's transaction, which also announces the user to every process (so their
 * caches forget it when the change commits); `afterAccessEnded` updates this process's caches.
 */
import type { DB } from '../../store/database.ts';
import { deletePasswordResetCode } from '../../store/credentials.ts';
import { deletePasskeyCode, deletePendingPasskeys } from '../../store/passkeys.ts';
import { announceUserChanged, recordSessionRevocations, type Revoked } from '../../store/tokens.ts';
import { endUserSessions } from '../../store/user-sessions.ts';
import { updateUser } from '../../store/users.ts';
import type { Directory } from '../instance/directory.ts';
import type { RevocationCache } from '../tokens/revocation-cache.ts';

export interface EndedAccess {
  userId: string;
  sessionIds: string[];
  /** Sessions whose tokens were revoked by record (a user's other sessions), for this process's cache. */
  revoked: Revoked[];
}

export async function endUserAccess(trx: DB, userId: string, now = new Date()): Promise<EndedAccess> {
  await updateUser(trx, userId, { tokens_valid_after: now });
  const sessionIds = await endUserSessions(trx, userId, now);
  await deletePasskeyCode(trx, userId);
  await deletePendingPasskeys(trx, userId);
  await deletePasswordResetCode(trx, userId);
  await announceUserChanged(trx, userId);
  return { userId, sessionIds, revoked: [] };
}

/**
 * A user who changes its own password with the current one ends its other browser sessions, and
 * with them their refresh families and tokens; the session the change comes from goes on. The
 * revocations last `until` (past the longest life of any token a session issued).
 */
export async function endOtherSessions(trx: DB, userId: string, keepSessionId: string | undefined, until: Date, now = new Date()): Promise<EndedAccess> {
  const sessionIds = await endUserSessions(trx, userId, now, keepSessionId);
  const revoked = sessionIds.map((id) => ({ id, until: until.getTime() }));
  await recordSessionRevocations(trx, revoked);
  return { userId, sessionIds, revoked };
}

/** How a new password was proved, as far as what it ends goes. */
export type PasswordChange =
  /** By an administrator, or with a reset code: as if the account may be in someone else's hands. */
  | { kind: 'everything' }
  /** By the user itself with its current password, in the session `keepSessionId` (if any). */
  | { kind: 'others'; keepSessionId: string | undefined; until: Date };

/**
 * What a new password ends, by who set it: the user itself with its current password (no one acting
 * for it) keeps the session it works in; anyone else (an administrator, a reset code) ends everything.
 * `lifetimes`: the longest a session's tokens live, for how long their revocation must last.
 */
export function passwordChangeBy(
  setter: { self: boolean; provedWithCurrentPassword: boolean; actorId?: string | undefined; sessionId?: string | undefined },
  lifetimes: { accessToken: number; refreshAbsolute: number },
  now = new Date(),
): PasswordChange {
  if (!setter.self || !setter.provedWithCurrentPassword || setter.actorId !== undefined) return { kind: 'everything' };
  const until = new Date(now.getTime() + Math.max(lifetimes.accessToken, lifetimes.refreshAbsolute) * 1000);
  return { kind: 'others', keepSessionId: setter.sessionId, until };
}

/** What a password change ends: everything as a deactivation does, or the user's other sessions. */
export function endAccessForPasswordChange(trx: DB, userId: string, change: PasswordChange, now = new Date()): Promise<EndedAccess> {
  return change.kind === 'everything' ? endUserAccess(trx, userId, now) : endOtherSessions(trx, userId, change.keepSessionId, change.until, now);
}

/** This process's caches, after the transaction committed. */
export function afterAccessEnded(ended: EndedAccess, caches: { directory: Directory; revocations: RevocationCache }): void {
  caches.revocations.add(ended.revoked);
  caches.directory.clear();
}
