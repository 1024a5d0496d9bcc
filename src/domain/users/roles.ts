/**
 * A user's roles (docs/management-api.md#who-may-do-what): IAM_* roles hold in the whole instance (stored
 * with the scope ''), ORG_* roles in one organization. The one writer of `user_roles`.
 *
 * - An organization's admins (AddOrganization) get organization roles in it, ORG_OWNER when none are
 *   named; roles they hold elsewhere stay.
 * - The bootstrap file owns a user's instance-wide roles and its roles in its own organization;
 *   roles in other organizations (given as admins through the API) stay.
 */
import type { DB } from '../../store/database.ts';
import { listUserRoles, replaceUserRoles, type UserRoleRow } from '../../store/users.ts';
import { appendEvent } from '../kernel/events.ts';
import { Refusal } from '../kernel/refusals.ts';
import { userEvent, type UserWriter } from './user-admin.ts';
import type { UserEvents } from '../kernel/event-types.ts';

/** The roles that hold in one organization; the others hold in the whole instance. */
export const ORG_ROLES: ReadonlySet<string> = new Set(['ORG_OWNER', 'ORG_ADMIN_IMPERSONATOR']);

/** The payload of `user.roles.added` (kernel/event-types.ts). */
export type RolesAdded = UserEvents['user.roles.added'];

/**
 * The roles an organization's admin gets: those named (once each), ORG_OWNER when none are; only
 * organization roles. `field` names them in the request.
 */
export function orgAdminRoles(named: readonly string[], field: string): string[] {
  const roles = named.length === 0 ? ['ORG_OWNER'] : [...new Set(named)];
  const refused = roles.find((role) => !ORG_ROLES.has(role));
  if (refused !== undefined) {
    // The id the management API has always answered invalid organization input with.
    throw new Refusal('invalid', 'API-InvalidArgument', `"${refused}" is no organization role (ORG_OWNER, ORG_ADMIN_IMPERSONATOR)`, { field });
  }
  return roles;
}

/** Gives `user` the organization roles `roles` in `orgId` (from orgAdminRoles), keeping every role it has. */
export async function grantOrgRoles(trx: DB, writer: UserWriter, user: { id: string; orgId: string }, orgId: string, roles: readonly string[]): Promise<void> {
  const current = await listUserRoles(trx, user.id);
  const added = roles.filter((role) => !current.some((row) => row.role === role && row.scope_org_id === orgId));
  await replaceUserRoles(trx, user.id, [...current, ...added.map((role) => ({ role, scope_org_id: orgId }))]);
  const payload: RolesAdded = { orgId, roles: added };
  await appendEvent(trx, userEvent(writer, user, 'user.roles.added', { ...payload }));
}

function sameRoles(current: readonly UserRoleRow[], desired: readonly UserRoleRow[]): boolean {
  const key = (row: UserRoleRow) => `${row.role}\u0000${row.scope_org_id}`;
  const held = new Set(current.map(key));
  return held.size === desired.length && desired.every((row) => held.has(key(row)));
}

/**
 * Makes the user's instance-wide roles and its roles in its own organization `orgId` exactly `roles`
 * (organization roles scoped to it); true when anything changed. No event of its own: the caller's
 * `user.*.added` or `.changed` names the roles.
 */
export async function declareOwnRoles(trx: DB, userId: string, orgId: string, roles: readonly string[]): Promise<boolean> {
  const desired: UserRoleRow[] = roles.map((role) => ({ role, scope_org_id: ORG_ROLES.has(role) ? orgId : '' }));
  const current = await listUserRoles(trx, userId);
  const owned = (row: UserRoleRow) => row.scope_org_id === '' || row.scope_org_id === orgId;
  if (sameRoles(current.filter(owned), desired)) return false;
  await replaceUserRoles(trx, userId, [...current.filter((row) => !owned(row)), ...desired]);
  return true;
}
