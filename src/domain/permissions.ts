/**
 * Who may act on which user through the API (SPEC §5, 10.1, 10.13): one rule, read by every service
 * that changes users (the contact email calls today, the management API next).
 *
 * - A caller acting on its own user is `self`, whatever roles it holds: an IAM_OWNER changing its own
 *   email is a user changing its own email (SPEC 10.1: no `returnCode`, no `isVerified`).
 * - IAM_OWNER may manage every user of the instance.
 * - ORG_OWNER may manage the users of its organization, except users holding an instance-wide role
 *   (SPEC 10.13): an org-scoped role must not reach above itself, e.g. rewrite the verified email of
 *   an instance owner and then reset that owner's password through the mail.
 * - Anyone else may not act on the user at all; the caller then gets the same answer as for a user
 *   that does not exist (the services decide that answer).
 */
import { hasRole, type Principal, type RoleGrant } from './principal.ts';

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

/** SPEC §5, 10.1, 10.13: how far `principal` may act on `user`. */
export function accessTo(principal: Principal, user: ManagedUser): UserAccess {
  if (principal.userId === user.id) return 'self';
  if (hasRole(principal, 'IAM_OWNER')) return 'manage';
  if (hasRole(principal, 'ORG_OWNER', user.orgId) && !holdsInstanceRole(user)) return 'manage';
  return 'none';
}
