/**
 * The project or application an AppService call names, loaded after the permission check
 * (api/management/access.ts): IAM_OWNER reaches every one, ORG_OWNER those of its organizations. An
 * id naming nothing is NotFound for an IAM_OWNER and PermissionDenied for anyone else, the answer for
 * another organization's object; an application the caller may see but that is not in the project
 * the request names is NotFound.
 */
import { Code } from '@connectrpc/connect';
import { findApp, findAppForUpdate } from '../../store/apps.ts';
import type { DB } from '../../store/database.ts';
import { findProject, type ProjectRow } from '../../store/projects.ts';
import type { AppRow } from '../../store/schema.ts';
import { apiError } from '../errors.ts';
import { permissionDenied, requireOrg, type ManagedOrgs } from '../management/access.ts';
import { invalidArgument } from '../management/lists.ts';

/** Ids are at most this long (ZITADEL's limit); longer ones name nothing and are refused as input. */
const MAX_ID_LENGTH = 200;

/** A required id of the request; `field` names it in the error. */
export function requiredId(value: string, field: string): string {
  if (value === '') throw invalidArgument(field, 'is required');
  if (value.length > MAX_ID_LENGTH) throw invalidArgument(field, `must be at most ${MAX_ID_LENGTH} characters`);
  return value;
}

/** An optional id of the request (a filter or a check); undefined when empty. */
export function optionalId(value: string, field: string): string | undefined {
  return value === '' ? undefined : requiredId(value, field);
}

export function appNotFound() {
  return apiError(Code.NotFound, 'APP-NotFound', 'application not found');
}

export function keyNotFound() {
  return apiError(Code.NotFound, 'APP-KeyNotFound', 'application key not found');
}

/** The answer for an id naming nothing (access.ts `visibleOrg` with no organization). */
export function missing(managed: ManagedOrgs, what: string, errorId: string) {
  return managed.all ? apiError(Code.NotFound, errorId, `${what} not found`) : permissionDenied();
}

export async function targetProject(db: DB, instanceId: string, managed: ManagedOrgs, projectId: string): Promise<ProjectRow> {
  const row = await findProject(db, requiredId(projectId, 'projectId'));
  if (row === undefined || row.instance_id !== instanceId) throw missing(managed, 'project', 'PROJECT-NotFound');
  requireOrg(managed, row.org_id);
  return row;
}

export interface AppTarget {
  /** The application's id, and the field of the request that carries it. */
  appId: string;
  field: string;
  /** The project the request names ('' for none): the application must be in it. */
  projectId: string;
  /** Lock the row until the transaction ends (changes). */
  lock?: boolean;
}

export async function targetApp(db: DB, instanceId: string, managed: ManagedOrgs, target: AppTarget): Promise<AppRow> {
  const appId = requiredId(target.appId, target.field);
  const projectId = optionalId(target.projectId, 'projectId');
  const row = await (target.lock ? findAppForUpdate(db, appId) : findApp(db, appId));
  if (row === undefined || row.instance_id !== instanceId) throw missing(managed, 'application', 'APP-NotFound');
  requireOrg(managed, row.org_id);
  if (projectId !== undefined && row.project_id !== projectId) throw appNotFound();
  return row;
}
