/**
 * The user a zitadel.user.v2 call names, loaded after the permission check
 * (docs/management-api.md#who-may-do-what, docs/security.md 10.13):
 *
 * - the user itself (`self`) or a caller who manages it (`manage`: IAM_OWNER; ORG_OWNER of the
 *   user's organization unless the user holds an instance-wide role) may act on it;
 * - an id naming no user of the instance is NotFound for an IAM_OWNER and for a caller whose own id
 *   it is, PermissionDenied for everyone else, the same answer as for a user they may not act on.
 */
import { Code } from '@connectrpc/connect';
import { accessTo, type UserAccess } from '../../domain/users/permissions.ts';
import { hasRole, type Principal } from '../../domain/kernel/principal.ts';
import type { DB } from '../../store/database.ts';
import { findUserWithRoles, type UserWithDomain } from '../../store/users.ts';
import { apiError } from '../errors.ts';
import { permissionDenied } from '../management/access.ts';

export interface TargetUser {
  /** The user's row, with its organization's primary domain. */
  row: UserWithDomain;
  access: Exclude<UserAccess, 'none'>;
}

export function userNotFound() {
  return apiError(Code.NotFound, 'USER-NotFound', 'user not found');
}

/**
 * Loads the user for `principal`; `allowSelf: false` for calls only an administrator may make on a
 * user (a user does not deactivate or delete itself through the management API).
 */
export async function targetUser(db: DB, instanceId: string, principal: Principal, userId: string, options: { allowSelf: boolean }): Promise<TargetUser> {
  const found = userId === '' ? undefined : await findUserWithRoles(db, userId);
  if (found === undefined || found.instance_id !== instanceId) {
    if (hasRole(principal, 'IAM_OWNER') || principal.userId === userId) throw userNotFound();
    throw permissionDenied();
  }
  const { roles, ...row } = found;
  const access = accessTo(principal, { id: row.id, orgId: row.org_id, roles: roles.map((r) => ({ role: r.role, orgId: r.scope_org_id })) });
  if (access === 'none') throw permissionDenied();
  if (access === 'self' && !options.allowSelf) {
    // An administrator acting on itself is still an administrator for these calls.
    const asManager = hasRole(principal, 'IAM_OWNER') || hasRole(principal, 'ORG_OWNER', row.org_id);
    if (!asManager) throw permissionDenied();
    return { row, access: 'manage' };
  }
  return { row, access };
}
