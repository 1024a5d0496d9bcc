/**
 * Authorizations: roles of a project given to a user, the one writer of `authorizations` (ZITADEL's
 * AuthorizationService, and the bootstrap file's `authorizations` of a user).
 *
 * - An authorization belongs to the project's organization; a user has at most one per project.
 * - Every role key must be one the project defines; the roles reach tokens as the directory reloads
 *   (oauth/role-claims.ts).
 * - Every change appends one event in the caller's transaction, nothing changed appends none.
 *
 * Which users and projects the caller may name is the caller's business (api/management/access.ts).
 */
import {
  deleteAuthorization,
  findUserProjectAuthorization,
  insertAuthorization,
  setAuthorizationRoles,
  type AuthorizationRow,
} from '../../store/authorizations.ts';
import type { DB } from '../../store/database.ts';
import { undefinedRoleKeys } from '../../store/project-roles.ts';
import type { ProjectRow } from '../../store/projects.ts';
import { appendEvent, type ChangeDetails, type EventInput } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import type { Actor } from './project-admin.ts';
import { UndefinedRoles } from './refusals.ts';
import type { AuthorizationEvents } from '../kernel/event-types.ts';

/** The event of a change of authorization `id` (aggregate `authorization`, owned by the project's organization). */
function authorizationEvent<T extends keyof AuthorizationEvents>(trx: DB, actor: Actor, id: string, orgId: string, type: T, payload: AuthorizationEvents[T]) {
  const event = { instanceId: actor.instanceId, creator: actor.creator, aggregateId: id, resourceOwner: orgId };
  return appendEvent(trx, { ...event, type, payload } as EventInput<T>);
}

/** The roles, each once; refused naming `roleKeys[i]` (the first unknown key's place) unless the project defines them all. */
async function definedRoles(trx: DB, projectId: string, roles: readonly string[]): Promise<string[]> {
  const distinct = [...new Set(roles)];
  const unknown = await undefinedRoleKeys(trx, projectId, distinct);
  if (unknown.length > 0) throw new UndefinedRoles(`roleKeys[${roles.indexOf(unknown[0]!)}]`, unknown);
  return distinct;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  return left.size === new Set(b).size && b.every((item) => left.has(item));
}

/** Gives a user roles of a project; `authorization.added` names both and the roles. */
export async function addAuthorization(
  trx: DB,
  actor: Actor,
  project: Pick<ProjectRow, 'id' | 'org_id'>,
  userId: string,
  roleKeys: readonly string[],
): Promise<{ id: string; createdAt: Date; details: ChangeDetails }> {
  const roles = await definedRoles(trx, project.id, roleKeys);
  if ((await findUserProjectAuthorization(trx, userId, project.id)) !== undefined) {
    throw new Refusal('exists', 'AUTHZ-Exists', 'the user already has an authorization for this project');
  }
  const id = newId();
  const now = new Date();
  const row = { id, instance_id: actor.instanceId, org_id: project.org_id, user_id: userId, project_id: project.id, roles };
  await insertAuthorization(trx, { ...row, created_at: now, changed_at: now });
  const details = await authorizationEvent(trx, actor, id, project.org_id, 'authorization.added', { userId, projectId: project.id, roles });
  return { id, createdAt: now, details };
}

/** Sets the roles of an authorization (order does not matter); undefined when they are the same already. */
export async function changeAuthorizationRoles(
  trx: DB,
  actor: Actor,
  authorization: AuthorizationRow,
  roleKeys: readonly string[],
): Promise<ChangeDetails | undefined> {
  const roles = await definedRoles(trx, authorization.project_id, roleKeys);
  if (sameSet(authorization.roles, roles)) return undefined;
  await setAuthorizationRoles(trx, authorization.id, roles);
  return authorizationEvent(trx, actor, authorization.id, authorization.org_id, 'authorization.changed', {
    userId: authorization.user_id,
    projectId: authorization.project_id,
    roles,
  });
}

/** Takes an authorization away; `authorization.removed` names its user and project. */
export async function removeAuthorization(trx: DB, actor: Actor, authorization: AuthorizationRow): Promise<ChangeDetails> {
  await deleteAuthorization(trx, authorization.id);
  return authorizationEvent(trx, actor, authorization.id, authorization.org_id, 'authorization.removed', {
    userId: authorization.user_id,
    projectId: authorization.project_id,
  });
}
