/**
 * Who may use the management API (docs/management-api.md#who-may-do-what, docs/security.md 10.13), in
 * one place for every management service:
 *
 * - IAM_OWNER manages everything in the instance;
 * - ORG_OWNER manages its own organizations' objects (and never users holding an instance-wide
 *   role: domain/permissions.ts), and lists see only those objects (filtered, not refused);
 * - anyone else gets PermissionDenied, for list calls too.
 *
 * A missing object is NotFound for callers who may see it and PermissionDenied for others. Only an
 * IAM_OWNER may see every id, so for anyone else an id that names nothing gets the same answer as an
 * id of another organization's object: the answer does not tell which ids exist.
 */
import { Code, type ConnectError } from '@connectrpc/connect';
import type { Voucher } from '../../domain/users/contact-email.ts';
import { creatorOf, hasRole, type Principal } from '../../domain/kernel/principal.ts';
import type { AdminContext } from '../../domain/users/user-admin.ts';
import type { Gatehouse } from '../../context.ts';
import { apiError } from '../errors.ts';

/** The organizations a caller manages: all of the instance, or some. */
export type ManagedOrgs = { all: true } | { all: false; orgIds: ReadonlySet<string> };

/** What the caller manages, or undefined when it manages nothing. */
export function managedOrgs(principal: Principal): ManagedOrgs | undefined {
  if (hasRole(principal, 'IAM_OWNER')) return { all: true };
  const orgIds = new Set(principal.roles.filter((grant) => grant.role === 'ORG_OWNER' && grant.orgId !== '').map((grant) => grant.orgId));
  return orgIds.size > 0 ? { all: false, orgIds } : undefined;
}

export function permissionDenied(): ConnectError {
  return apiError(Code.PermissionDenied, 'AUTHZ-Denied', 'no permission');
}

/** What the caller manages; PermissionDenied when it manages nothing. */
export function requireManager(principal: Principal): ManagedOrgs {
  const managed = managedOrgs(principal);
  if (managed === undefined) throw permissionDenied();
  return managed;
}

export function managesOrg(managed: ManagedOrgs, orgId: string): boolean {
  return managed.all || managed.orgIds.has(orgId);
}

/** PermissionDenied unless the caller manages `orgId`. */
export function requireOrg(managed: ManagedOrgs, orgId: string): void {
  if (!managesOrg(managed, orgId)) throw permissionDenied();
}

/**
 * The answer for an object the caller asked for: its organization when the caller manages it;
 * NotFound (`what` names the kind of object) for an IAM_OWNER when there is none; PermissionDenied otherwise.
 */
export function visibleOrg(managed: ManagedOrgs, orgId: string | undefined, what: string, errorId: string): string {
  if (orgId === undefined) {
    if (managed.all) throw apiError(Code.NotFound, errorId, `${what} not found`);
    throw permissionDenied();
  }
  requireOrg(managed, orgId);
  return orgId;
}

/** The organization filter of a list: undefined for all, else the ids the caller manages. */
export function listFilter(managed: ManagedOrgs): readonly string[] | undefined {
  return managed.all ? undefined : [...managed.orgIds];
}

/** Whose addresses the caller's `isVerified` may vouch for (domain/contact-email.ts vouchedChange). */
export function voucherOf(principal: Principal): Voucher {
  const managed = managedOrgs(principal);
  return managed === undefined || managed.all ? 'instance' : { orgIds: [...managed.orgIds] };
}

/** What the users wing's writes take from a call of `principal` (domain/users/user-admin.ts AdminContext). */
export function adminContext(gh: Pick<Gatehouse, 'instanceId' | 'config' | 'masterKey'>, principal: Principal): AdminContext {
  return { instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, masterKey: gh.masterKey, creator: creatorOf(principal), voucher: voucherOf(principal) };
}
