/**
 * zitadel.project.v2beta.ProjectService (SPEC §12): projects and their roles.
 *
 * - IAM_OWNER manages every project, ORG_OWNER those of its organizations (lists are filtered);
 *   a missing project is NotFound for who may see it, PermissionDenied for others (management/access.ts).
 * - Names are unique per organization and role keys per project (AlreadyExists).
 * - The switches are those sign-in and tokens read (SPEC §12): role assertion, authorization
 *   required (`project_role_check` in updates), project access required (`has_project_check`).
 *   The private labeling setting is stored and reported; Gatehouse's login UI has one look.
 * - Removing a role takes it out of every authorization; deleting a project removes its
 *   applications, their keys, its roles and its authorizations. Either takes effect in this process
 *   at once and in others within one change poll.
 * - Project grants (to other organizations) do not exist in Gatehouse: the grant filter matches nothing.
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ProjectService } from '../../gen/zitadel/project/v2beta/project_service_pb.js';
import {
  PrivateLabelingSetting,
  ProjectFieldName,
  ProjectRoleFieldName,
  ProjectState,
  type ProjectRoleSchema,
  type ProjectRoleSearchFilter,
  type ProjectSchema,
  type ProjectSearchFilter,
} from '../../gen/zitadel/project/v2beta/query_pb.js';
import type { Gatehouse } from '../context.ts';
import { appendEvent } from '../domain/kernel/events.ts';
import { claimNewIdentifiers, IdentifierTaken } from '../domain/kernel/identifiers.ts';
import { newId } from '../domain/kernel/ids.ts';
import { idProblem, nameProblem, roleKeyProblem } from '../domain/kernel/names.ts';
import { creatorOf, type Principal } from '../domain/kernel/principal.ts';
import type { DB } from '../store/database.ts';
import { findOrg } from '../store/orgs.ts';
import { deleteProjectRole, findProjectRole, insertProjectRole, listProjectRolesPage, type ProjectRoleFilter, type ProjectRoleRow, type ProjectRoleSort } from '../store/project-roles.ts';
import { deleteProject, findProject, findProjectByName, insertProject, listProjects, updateProject, type ProjectFilter, type ProjectRow, type ProjectSort } from '../store/projects.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';
import { listFilter, requireManager, visibleOrg, type ManagedOrgs } from './management/access.ts';
import { invalidArgument, pageOf, textFilter } from './management/lists.ts';

const PROJECT_SORT: Record<ProjectFieldName, ProjectSort> = {
  [ProjectFieldName.UNSPECIFIED]: 'created_at',
  [ProjectFieldName.ID]: 'id',
  [ProjectFieldName.CREATION_DATE]: 'created_at',
  [ProjectFieldName.CHANGE_DATE]: 'changed_at',
  [ProjectFieldName.NAME]: 'name',
};

const ROLE_SORT: Record<ProjectRoleFieldName, ProjectRoleSort> = {
  [ProjectRoleFieldName.UNSPECIFIED]: 'role_key',
  [ProjectRoleFieldName.KEY]: 'role_key',
  [ProjectRoleFieldName.CREATION_DATE]: 'created_at',
  [ProjectRoleFieldName.CHANGE_DATE]: 'changed_at',
};

function privateLabeling(value: number, field: string): number {
  if (!(value in PrivateLabelingSetting)) throw invalidArgument(field, 'unknown private labeling setting');
  return value;
}

function checkedName(name: string, field = 'name'): string {
  const problem = nameProblem(name);
  if (problem !== undefined) throw invalidArgument(field, problem);
  return name;
}

function toProject(row: ProjectRow): MessageInitShape<typeof ProjectSchema> {
  return {
    id: row.id,
    organizationId: row.org_id,
    creationDate: timestampFromDate(row.created_at),
    changeDate: timestampFromDate(row.changed_at),
    name: row.name,
    state: ProjectState.ACTIVE,
    projectRoleAssertion: row.role_assertion,
    authorizationRequired: row.authorization_required,
    projectAccessRequired: row.project_access_required,
    privateLabelingSetting: row.private_labeling,
  };
}

function toRole(row: ProjectRoleRow): MessageInitShape<typeof ProjectRoleSchema> {
  return {
    projectId: row.project_id,
    key: row.role_key,
    creationDate: timestampFromDate(row.created_at),
    changeDate: timestampFromDate(row.changed_at),
    displayName: row.display_name,
    group: row.role_group,
  };
}

function projectFilter(filter: ProjectSearchFilter, index: number): ProjectFilter {
  const field = `filters[${index}]`;
  switch (filter.filter.case) {
    case 'projectNameFilter':
      return { kind: 'name', text: textFilter(filter.filter.value.projectName, filter.filter.value.method, `${field}.projectNameFilter`) };
    case 'inProjectIdsFilter':
      return { kind: 'ids', ids: filter.filter.value.ids };
    case 'projectResourceOwnerFilter':
    case 'projectOrganizationIdFilter':
      return { kind: 'org', orgId: filter.filter.value.id };
    case 'projectGrantResourceOwnerFilter':
      return { kind: 'none' };
    default:
      throw invalidArgument(field, 'names no filter');
  }
}

function roleFilter(filter: ProjectRoleSearchFilter, index: number): ProjectRoleFilter {
  const field = `filters[${index}]`;
  switch (filter.filter.case) {
    case 'roleKeyFilter':
      return { kind: 'key', text: textFilter(filter.filter.value.key, filter.filter.value.method, `${field}.roleKeyFilter`) };
    case 'displayNameFilter':
      return { kind: 'displayName', text: textFilter(filter.filter.value.displayName, filter.filter.value.method, `${field}.displayNameFilter`) };
    default:
      throw invalidArgument(field, 'names no filter');
  }
}

export function createProjectService(gh: Gatehouse): Partial<ServiceImpl<typeof ProjectService>> {
  /** The project the call names, when the caller may see it. */
  async function visibleProject(db: DB, managed: ManagedOrgs, projectId: string, field = 'id'): Promise<ProjectRow> {
    const row = projectId === '' ? undefined : await findProject(db, projectId);
    const found = row !== undefined && row.instance_id === gh.instanceId ? row : undefined;
    visibleOrg(managed, found?.org_id, `${field}: project`, 'PROJECT-NotFound');
    return found!;
  }

  function event(principal: Principal, project: Pick<ProjectRow, 'id' | 'org_id'>, type: string, payload: Record<string, unknown>) {
    return { instanceId: gh.instanceId, aggregateType: 'project', aggregateId: project.id, resourceOwner: project.org_id, type, creator: creatorOf(principal), payload };
  }

  return {
    async createProject(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const name = checkedName(req.name);
      if (req.id !== undefined && idProblem(req.id) !== undefined) throw invalidArgument('id', idProblem(req.id)!);
      const labeling = privateLabeling(req.privateLabelingSetting, 'privateLabelingSetting');
      const created = await gh.db.transaction().execute(async (trx) => {
        const org = req.organizationId === '' ? undefined : await findOrg(trx, req.organizationId);
        visibleOrg(managed, org?.instance_id === gh.instanceId ? org.id : undefined, 'organizationId: organization', 'ORG-NotFound');
        if ((await findProjectByName(trx, req.organizationId, name)) !== undefined) {
          throw apiError(Code.AlreadyExists, 'PROJECT-NameTaken', 'name: the organization has a project with this name');
        }
        const id = req.id ?? newId();
        const now = new Date();
        await claimNewIdentifiers(trx, gh.instanceId, { type: 'project', id }, [id], now).catch((error: unknown) => {
          throw error instanceof IdentifierTaken ? apiError(Code.AlreadyExists, 'PROJECT-IdTaken', 'id: the id is taken') : error;
        });
        await insertProject(trx, {
          id, instance_id: gh.instanceId, org_id: req.organizationId, name, role_assertion: req.projectRoleAssertion,
          authorization_required: req.authorizationRequired, project_access_required: req.projectAccessRequired, private_labeling: labeling,
          created_at: now, changed_at: now,
        });
        await appendEvent(trx, event(principal, { id, org_id: req.organizationId }, 'project.added', { name }));
        return { id, now };
      });
      return { id: created.id, creationDate: timestampFromDate(created.now) };
    },

    async updateProject(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const name = req.name === undefined ? undefined : checkedName(req.name);
      const labeling = req.privateLabelingSetting === undefined ? undefined : privateLabeling(req.privateLabelingSetting, 'privateLabelingSetting');
      const changedAt = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.id);
        const desired = {
          ...(name !== undefined && name !== project.name ? { name } : {}),
          ...(req.projectRoleAssertion !== undefined && req.projectRoleAssertion !== project.role_assertion ? { role_assertion: req.projectRoleAssertion } : {}),
          ...(req.projectRoleCheck !== undefined && req.projectRoleCheck !== project.authorization_required ? { authorization_required: req.projectRoleCheck } : {}),
          ...(req.hasProjectCheck !== undefined && req.hasProjectCheck !== project.project_access_required ? { project_access_required: req.hasProjectCheck } : {}),
          ...(labeling !== undefined && labeling !== project.private_labeling ? { private_labeling: labeling } : {}),
        };
        if (Object.keys(desired).length === 0) return project.changed_at;
        if (desired.name !== undefined) {
          const namesake = await findProjectByName(trx, project.org_id, desired.name);
          if (namesake !== undefined && namesake.id !== project.id) throw apiError(Code.AlreadyExists, 'PROJECT-NameTaken', 'name: the organization has a project with this name');
        }
        await updateProject(trx, project.id, desired);
        const details = await appendEvent(trx, event(principal, project, 'project.changed', { changed: Object.keys(desired) }));
        return details.changeDate;
      });
      gh.directory.clear();
      return { changeDate: timestampFromDate(changedAt) };
    },

    async deleteProject(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const deletedAt = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.id);
        await deleteProject(trx, project.id);
        const details = await appendEvent(trx, event(principal, project, 'project.removed', { name: project.name }));
        return details.changeDate;
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(deletedAt) };
    },

    async getProject(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      return { project: toProject(await visibleProject(gh.db, managed, req.id)) };
    },

    async listProjects(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const sortingColumn = req.sortingColumn ?? ProjectFieldName.UNSPECIFIED;
      const sort = PROJECT_SORT[sortingColumn];
      if (sort === undefined) throw invalidArgument('sortingColumn', 'unknown field');
      const page = pageOf(req.pagination);
      const { rows, total } = await listProjects(gh.db, { instanceId: gh.instanceId, within: listFilter(managed), filters: req.filters.map(projectFilter), page, sort });
      return { pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) }, projects: rows.map(toProject) };
    },

    async addProjectRole(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const keyIssue = roleKeyProblem(req.roleKey);
      if (keyIssue !== undefined) throw invalidArgument('roleKey', keyIssue);
      const displayName = checkedName(req.displayName, 'displayName');
      const group = req.group === undefined || req.group === '' ? '' : checkedName(req.group, 'group');
      const createdAt = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.projectId, 'projectId');
        if ((await findProjectRole(trx, project.id, req.roleKey)) !== undefined) throw apiError(Code.AlreadyExists, 'PROJECT-RoleTaken', 'roleKey: the project has this role');
        const now = new Date();
        await insertProjectRole(trx, { project_id: project.id, role_key: req.roleKey, display_name: displayName, role_group: group, created_at: now, changed_at: now });
        await appendEvent(trx, event(principal, project, 'project.role.added', { key: req.roleKey, displayName, group }));
        return now;
      });
      return { creationDate: timestampFromDate(createdAt) };
    },

    async removeProjectRole(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const removedAt = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.projectId, 'projectId');
        if (!(await deleteProjectRole(trx, project.id, req.roleKey))) throw apiError(Code.NotFound, 'PROJECT-RoleNotFound', 'roleKey: the project has no such role');
        const details = await appendEvent(trx, event(principal, project, 'project.role.removed', { key: req.roleKey }));
        return details.changeDate;
      });
      gh.directory.clear();
      return { removalDate: timestampFromDate(removedAt) };
    },

    async listProjectRoles(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const sortingColumn = req.sortingColumn ?? ProjectRoleFieldName.UNSPECIFIED;
      const sort = ROLE_SORT[sortingColumn];
      if (sort === undefined) throw invalidArgument('sortingColumn', 'unknown field');
      const page = pageOf(req.pagination);
      const project = await visibleProject(gh.db, managed, req.projectId, 'projectId');
      const { rows, total } = await listProjectRolesPage(gh.db, { projectId: project.id, filters: req.filters.map(roleFilter), page, sort });
      return { pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) }, projectRoles: rows.map(toRole) };
    },
  };
}
