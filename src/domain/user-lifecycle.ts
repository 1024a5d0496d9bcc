/**
 * Ending a user's access (SPEC §12): deactivating, locking or deleting a user ends its browser
 * sessions, revokes its refresh families and stored access tokens, and marks the moment before
 * which its JWTs no longer count (`tokens_valid_after`, checked by domain/token-user.ts). None of it
 * comes back when the user is reactivated or unlocked.
 *
 * Runs inside the caller's transaction; after the commit, `afterCommit` updates this process's
 * caches at once (other processes follow the revocation announcements and the change feed).
 */
import type { DB } from '../store/database.ts';
import { revokeSubjectTokens, type Revoked } from '../store/tokens.ts';
import { endUserSessions } from '../store/user-sessions.ts';
import { updateUser } from '../store/users.ts';
import type { Directory } from './directory.ts';
import type { RevocationCache } from './revocation-cache.ts';

export interface EndedAccess {
  revoked: Revoked[];
  sessionIds: string[];
}

export async function endUserAccess(trx: DB, userId: string, now = new Date()): Promise<EndedAccess> {
  await updateUser(trx, userId, { tokens_valid_after: now });
  const sessionIds = await endUserSessions(trx, userId, now);
  const revoked = await revokeSubjectTokens(trx, userId, now);
  return { revoked, sessionIds };
}

/** This process's caches, after the transaction committed. */
export function afterAccessEnded(ended: EndedAccess, caches: { directory: Directory; revocations: RevocationCache }): void {
  caches.revocations.add(ended.revoked);
  caches.directory.clear();
}
