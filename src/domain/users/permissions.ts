/**
 * Who may act on which user through the API (docs/management-api.md#who-may-do-what;
 * docs/security.md 10.1, 10.13): one rule, read by every service that changes users (the contact
 * email calls today, the management API next).
 *
 * - A caller acting on its own user is `self`, whatever roles it holds: an IAM_OWNER changing its own
 *   email is a user changing its own email (docs/security.md 10.1: no `returnCode`, no `isVerified`).
 * - IAM_OWNER may manage every user of the instance.
 * - ORG_OWNER may manage the users of its organization, except users holding an instance-wide role,
 *   and users holding an org-scoped role in an organization the caller does not own: an org-scoped
 *   role must not reach above itself or sideways (rewrite the verified email of an instance owner, or
 *   set the password of another organization's owner, and then be that user).
 * - Anyone else may not act on the user at all; the caller then gets the same answer as for a user
 *   that does not exist (the services decide that answer).
 */
import { hasRole, type Principal, type RoleGrant } from '../kernel/principal.ts';

/** What a caller may do to a user: everything a user may do to itself, everything an administrator may, or nothing. */
export type UserAccess = 'self' | 'manage' | 'none';

/** The user acted on, as far as the rule needs it. */
export interface ManagedUser {
  id: string;
  orgId: string;
  roles: readonly RoleGrant[];
}

/** A role that applies to the whole instance rather than to one organization (IAM_OWNER, IAM_ADMIN_IMPERSONATOR, ...). */
export function isInstanceRole(grant: RoleGrant): boolean {
  return grant.orgId === '' || grant.role.startsWith('IAM_');
}

/** Whether the user holds any instance-wide role: only instance-wide administrators may change it. */
export function holdsInstanceRole(user: Pick<ManagedUser, 'roles'>): boolean {
  return user.roles.some(isInstanceRole);
}

/**
 * Whether every role `user` holds stays within `orgIds`: no instance-wide role, and each org-scoped
 * role in one of these organizations. An org-scoped administrator may act on such a user only.
 */
export function rolesWithin(user: Pick<ManagedUser, 'roles'>, orgIds: ReadonlySet<string>): boolean {
  return user.roles.every((grant) => !isInstanceRole(grant) && orgIds.has(grant.orgId));
}

/** The organizations where `principal` holds `role` (org-scoped grants only). */
export function orgsWithRole(principal: Principal, role: string): Set<string> {
  return new Set(principal.roles.filter((grant) => grant.role === role && grant.orgId !== '').map((grant) => grant.orgId));
}

/** How far `principal` may act on `user`. */
export function accessTo(principal: Principal, user: ManagedUser): UserAccess {
  if (principal.userId === user.id) return 'self';
  if (hasRole(principal, 'IAM_OWNER')) return 'manage';
  const owned = orgsWithRole(principal, 'ORG_OWNER');
  if (owned.has(user.orgId) && rolesWithin(user, owned)) return 'manage';
  return 'none';
}
