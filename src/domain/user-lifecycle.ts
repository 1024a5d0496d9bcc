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
import type { DB } from '../store/database.ts';
import { deletePasswordResetCode } from '../store/credentials.ts';
import { deletePasskeyCode, deletePendingPasskeys } from '../store/passkeys.ts';
import { announceUserChanged } from '../store/tokens.ts';
import { endUserSessions } from '../store/user-sessions.ts';
import { updateUser } from '../store/users.ts';
import type { Directory } from './directory.ts';

export interface EndedAccess {
  userId: string;
  sessionIds: string[];
}

export async function endUserAccess(trx: DB, userId: string, now = new Date()): Promise<EndedAccess> {
  await updateUser(trx, userId, { tokens_valid_after: now });
  const sessionIds = await endUserSessions(trx, userId, now);
  await deletePasskeyCode(trx, userId);
  await deletePendingPasskeys(trx, userId);
  await deletePasswordResetCode(trx, userId);
  await announceUserChanged(trx, userId);
  return { userId, sessionIds };
}

/** This process's caches, after the transaction committed. */
export function afterAccessEnded(_ended: EndedAccess, caches: { directory: Directory }): void {
  caches.directory.clear();
}
