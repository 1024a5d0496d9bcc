/**
 * Projects and their roles: the one writer of `projects` and `project_roles`, for the management
 * API (ZITADEL's ProjectService) and the bootstrap file alike.
 *
 * - A project's id is claimed in the instance's namespace of token names (kernel/identifiers.ts):
 *   it is a token audience. Names are unique per organization, role keys per project.
 * - Removing a role takes it out of every authorization; removing a project removes its
 *   applications, their keys, its roles and its authorizations (the foreign keys cascade).
 * - Every change appends one event in the caller's transaction, nothing changed appends none.
 *
 * Who may do what is the caller's business (api/management/access.ts); so is which project the call
 * names: functions take the row the caller found.
 */
import type { DB } from '../../store/database.ts';
import {
  deleteProjectRole,
  findProjectRole,
  insertProjectRole,
  updateProjectRole,
  type ProjectRoleRow,
} from '../../store/project-roles.ts';
import { deleteProject, findProjectByName, insertProject, updateProject, type ProjectRow } from '../../store/projects.ts';
import { appendEvent, type ChangeDetails, type EventInput } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { creatorOf, type Principal } from '../kernel/principal.ts';
import { Refusal } from '../kernel/refusals.ts';
import { claimValues } from './refusals.ts';
import type { ProjectEvents } from '../kernel/event-types.ts';

/** Who changes the projects wing's objects, in which instance: every write takes this. */
export interface Actor {
  instanceId: string;
  /** The events' creator: the caller (kernel/principal.ts `creatorOf`), or `bootstrap`. */
  creator: string;
}

/** The actor of a management API call. */
export function actorOf(instanceId: string, principal: Principal): Actor {
  return { instanceId, creator: creatorOf(principal) };
}

/** The switches of a project that sign-in and tokens read, and ZITADEL's labeling setting (stored and reported). */
export interface ProjectSettings {
  name: string;
  roleAssertion: boolean;
  authorizationRequired: boolean;
  projectAccessRequired: boolean;
  /** Left out: the column's default. */
  privateLabeling?: number | undefined;
}

export interface NewProject extends ProjectSettings {
  /** The caller's choice of id; a new one when left out. */
  id?: string | undefined;
  orgId: string;
}

/** A project as the writes of its roles need it. */
type ProjectRef = Pick<ProjectRow, 'id' | 'org_id'>;

/** The event of a change of `project` (aggregate `project`, owned by its organization). */
function projectEvent<T extends keyof ProjectEvents>(trx: DB, actor: Actor, project: ProjectRef, type: T, payload: ProjectEvents[T]): Promise<ChangeDetails> {
  const event = { instanceId: actor.instanceId, creator: actor.creator, aggregateId: project.id, resourceOwner: project.org_id };
  return appendEvent(trx, { ...event, type, payload } as EventInput<T>);
}

function nameTaken(): Refusal {
  return new Refusal('exists', 'PROJECT-NameTaken', 'the organization has a project with this name', { field: 'name' });
}

async function checkNameFree(trx: DB, orgId: string, name: string, projectId: string | undefined): Promise<void> {
  const namesake = await findProjectByName(trx, orgId, name);
  if (namesake !== undefined && namesake.id !== projectId) throw nameTaken();
}

/** The columns of settings, those left out not named. */
function columnsOf(settings: Partial<ProjectSettings>) {
  return {
    ...(settings.name === undefined ? {} : { name: settings.name }),
    ...(settings.roleAssertion === undefined ? {} : { role_assertion: settings.roleAssertion }),
    ...(settings.authorizationRequired === undefined ? {} : { authorization_required: settings.authorizationRequired }),
    ...(settings.projectAccessRequired === undefined ? {} : { project_access_required: settings.projectAccessRequired }),
    ...(settings.privateLabeling === undefined ? {} : { private_labeling: settings.privateLabeling }),
  };
}

/** Adds a project to an organization; `project.added` names it. */
export async function addProject(trx: DB, actor: Actor, input: NewProject): Promise<{ id: string; createdAt: Date; details: ChangeDetails }> {
  await checkNameFree(trx, input.orgId, input.name, undefined);
  const id = input.id ?? newId();
  const now = new Date();
  await claimValues(trx, actor.instanceId, { type: 'project', id }, [id], 'PROJECT-IdTaken');
  const row = { ...columnsOf(input), id, instance_id: actor.instanceId, org_id: input.orgId, name: input.name, created_at: now, changed_at: now };
  await insertProject(trx, row);
  const details = await projectEvent(trx, actor, { id, org_id: input.orgId }, 'project.added', { name: input.name });
  return { id, createdAt: now, details };
}

/**
 * Changes what `desired` names and differs from `project`; `project.changed` lists the columns.
 * Returns them, and the event's details (undefined when nothing changed).
 */
export async function changeProject(
  trx: DB,
  actor: Actor,
  project: ProjectRow,
  desired: Partial<ProjectSettings>,
): Promise<{ changed: string[]; details: ChangeDetails | undefined }> {
  const wanted = Object.entries(columnsOf(desired));
  const changes = Object.fromEntries(wanted.filter(([column, value]) => project[column as keyof ProjectRow] !== value));
  const changed = Object.keys(changes);
  if (changed.length === 0) return { changed, details: undefined };
  if (changes['name'] !== undefined) await checkNameFree(trx, project.org_id, desired.name!, project.id);
  await updateProject(trx, project.id, changes);
  return { changed, details: await projectEvent(trx, actor, project, 'project.changed', { changed }) };
}

/** Removes a project and everything in it; `project.removed` names it. */
export async function removeProject(trx: DB, actor: Actor, project: ProjectRow): Promise<ChangeDetails> {
  await deleteProject(trx, project.id);
  return projectEvent(trx, actor, project, 'project.removed', { name: project.name });
}

export interface RoleSettings {
  displayName: string;
  /** '' for none. */
  group: string;
}

/** Adds a role to a project; `project.role.added` carries the role. */
export async function addProjectRole(
  trx: DB,
  actor: Actor,
  project: ProjectRef,
  key: string,
  role: RoleSettings,
): Promise<{ createdAt: Date; details: ChangeDetails }> {
  if ((await findProjectRole(trx, project.id, key)) !== undefined) {
    throw new Refusal('exists', 'PROJECT-RoleTaken', 'the project has this role', { field: 'roleKey' });
  }
  const now = new Date();
  const { displayName, group } = role;
  await insertProjectRole(trx, { project_id: project.id, role_key: key, display_name: displayName, role_group: group, created_at: now, changed_at: now });
  const details = await projectEvent(trx, actor, project, 'project.role.added', { key, displayName, group });
  return { createdAt: now, details };
}

/** Changes a role's display name and group where they differ; `project.role.changed` lists the columns. */
export async function changeProjectRole(
  trx: DB,
  actor: Actor,
  project: ProjectRef,
  role: ProjectRoleRow,
  desired: RoleSettings,
): Promise<{ changed: string[]; details: ChangeDetails | undefined }> {
  const changes = {
    ...(desired.displayName === role.display_name ? {} : { display_name: desired.displayName }),
    ...(desired.group === role.role_group ? {} : { role_group: desired.group }),
  };
  const changed = Object.keys(changes);
  if (changed.length === 0) return { changed, details: undefined };
  await updateProjectRole(trx, project.id, role.role_key, changes);
  const details = await projectEvent(trx, actor, project, 'project.role.changed', { key: role.role_key, changed });
  return { changed, details };
}

/** Removes a role and takes it out of every authorization of the project; `project.role.removed` names it. */
export async function removeProjectRole(trx: DB, actor: Actor, project: ProjectRef, key: string): Promise<ChangeDetails> {
  if (!(await deleteProjectRole(trx, project.id, key))) {
    throw new Refusal('not_found', 'PROJECT-RoleNotFound', 'the project has no such role', { field: 'roleKey' });
  }
  return projectEvent(trx, actor, project, 'project.role.removed', { key });
}
