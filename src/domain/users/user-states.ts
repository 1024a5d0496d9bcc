/**
 * A user's lifecycle through the management API
 * (docs/management-api.md#secrets-changes-and-ended-access): deactivate, reactivate, lock (an
 * administrator's lock, until unlocked), unlock (which also clears the sign-in lockout,
 * docs/security.md 10.3) and delete. Deactivating, locking and deleting end the user's access
 * (user-lifecycle.ts). The state the API reports counts a sign-in lockout in force as locked.
 */
import type { DB } from '../../store/database.ts';
import type { UserRow, UserState } from '../../store/schema.ts';
import { clearFailedAttempts, deleteUser, updateUser, type UserFilter } from '../../store/users.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { claimIdentifiersFor, IdentifierTaken } from '../kernel/identifiers.ts';
import { lockedUser, userEvent, type AdminContext } from './user-admin.ts';
import { UserStateConflict } from './user-rules.ts';
import { endUserAccess, type EndedAccess } from './user-lifecycle.ts';

export type LifecycleAction = 'deactivate' | 'reactivate' | 'lock' | 'unlock';

/** The state as the API reports it: a brute-force lockout in force counts as locked. */
export function effectiveState(row: Pick<UserRow, 'state' | 'locked_until'>, now = new Date()): UserState {
  if (row.state === 'active' && row.locked_until !== null && row.locked_until > now) return 'locked';
  return row.state;
}

/** The filter for users whose effectiveState is `state`. */
export function effectiveStateFilter(state: UserState, now = new Date()): UserFilter {
  const lockedOut: UserFilter = { kind: 'lockedOut', at: now };
  const active: UserFilter = { kind: 'state', state: 'active' };
  if (state === 'active') return { kind: 'and', filters: [active, { kind: 'not', filter: lockedOut }] };
  if (state === 'locked') return { kind: 'or', filters: [{ kind: 'state', state: 'locked' }, { kind: 'and', filters: [active, lockedOut] }] };
  return { kind: 'state', state };
}

/**
 * Moves the user along its lifecycle; FailedPrecondition (UserStateConflict) when its state does
 * not allow it. `ended`: what deactivating or locking ended, for afterAccessEnded after the commit.
 */
export async function changeLifecycle(
  trx: DB,
  ctx: AdminContext,
  userId: string,
  action: LifecycleAction,
  now = new Date(),
): Promise<{ details: ChangeDetails; ended?: EndedAccess }> {
  const row = await lockedUser(trx, userId);
  const user = { id: row.id, orgId: row.org_id };
  switch (action) {
    case 'deactivate': {
      if (row.state === 'inactive') throw new UserStateConflict('the user is already inactive');
      await updateUser(trx, row.id, { state: 'inactive', changed_at: now });
      const ended = await endUserAccess(trx, row.id, now);
      return { details: await appendEvent(trx, userEvent(ctx, user, 'user.deactivated')), ended };
    }
    case 'reactivate': {
      if (row.state !== 'inactive') throw new UserStateConflict('the user is not inactive: only an inactive user can be reactivated');
      await updateUser(trx, row.id, { state: 'active', changed_at: now });
      return { details: await appendEvent(trx, userEvent(ctx, user, 'user.reactivated')) };
    }
    case 'lock': {
      if (row.state === 'locked') throw new UserStateConflict('the user is already locked');
      if (row.state === 'inactive') throw new UserStateConflict('the user is inactive: only an active user can be locked');
      await updateUser(trx, row.id, { state: 'locked', changed_at: now });
      const ended = await endUserAccess(trx, row.id, now);
      return { details: await appendEvent(trx, userEvent(ctx, user, 'user.locked', { reason: 'administrator' })), ended };
    }
    case 'unlock': {
      const lockedOut = row.locked_until !== null && row.locked_until > now;
      if (row.state !== 'locked' && !lockedOut) throw new UserStateConflict('the user is not locked');
      await clearFailedAttempts(trx, row.id);
      if (row.state === 'locked') await updateUser(trx, row.id, { state: 'active', changed_at: now });
      return { details: await appendEvent(trx, userEvent(ctx, user, 'user.unlocked')) };
    }
  }
}

/**
 * Deletes the user after ending its access; the event outlives it, and so do its id and a machine's
 * name in the namespace of token names (identifiers.ts): nothing created later gets them.
 */
export async function removeUser(trx: DB, ctx: AdminContext, userId: string, now = new Date()): Promise<{ details: ChangeDetails; ended: EndedAccess }> {
  const row = await lockedUser(trx, userId);
  const ended = await endUserAccess(trx, row.id, now);
  // Users created before their values were claimed (or by a path that claims none) keep them now.
  await claimIdentifiersFor(trx, ctx.instanceId, { type: 'user', id: row.id }, row.kind === 'machine' ? [row.id, row.user_name] : [row.id], now).catch(
    (error: unknown) => {
      if (!(error instanceof IdentifierTaken)) throw error;
    },
  );
  const details = await appendEvent(trx, userEvent(ctx, { id: row.id, orgId: row.org_id }, 'user.removed', { userName: row.user_name }));
  await deleteUser(trx, row.id);
  return { details, ended };
}
