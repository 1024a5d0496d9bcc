/**
 * zitadel.project.v2beta.ProjectService (docs/management-api.md): projects and their roles.
 *
 * - IAM_OWNER manages every project, ORG_OWNER those of its organizations (lists are filtered);
 *   a missing project is NotFound for who may see it, PermissionDenied for others (management/access.ts).
 * - Names are unique per organization and role keys per project (AlreadyExists).
 * - The switches are those sign-in and tokens read (docs/management-api.md#roles): role assertion,
 *   authorization required (`project_role_check` in updates), project access required
 *   (`has_project_check`). The private labeling setting is stored and reported; Gatehouse's login UI
 *   has one look.
 * - Removing a role takes it out of every authorization; deleting a project removes its
 *   applications, their keys, its roles and its authorizations. Either takes effect in this process
 *   at once and in others within one change poll.
 * - Project grants (to other organizations) do not exist in Gatehouse: the grant filter matches nothing.
 * - The writes are the projects wing's (domain/projects/); this file checks who may ask for them.
 */
import type { ServiceImpl } from '@connectrpc/connect';
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
import { idProblem, nameProblem, roleKeyProblem } from '../domain/kernel/names.ts';
import { actorOf, addProject, addProjectRole, changeProject, removeProject, removeProjectRole } from '../domain/projects/project-admin.ts';
import type { DB } from '../store/database.ts';
import { findOrg } from '../store/orgs.ts';
import { listProjectRolesPage, type ProjectRoleFilter, type ProjectRoleRow, type ProjectRoleSort } from '../store/project-roles.ts';
import { findProject, listProjects, type ProjectFilter, type ProjectRow, type ProjectSort } from '../store/projects.ts';
import { requirePrincipal } from './auth-interceptor.ts';
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
        return addProject(trx, actorOf(gh.instanceId, principal), {
          id: req.id,
          orgId: req.organizationId,
          name,
          roleAssertion: req.projectRoleAssertion,
          authorizationRequired: req.authorizationRequired,
          projectAccessRequired: req.projectAccessRequired,
          privateLabeling: labeling,
        });
      });
      return { id: created.id, creationDate: timestampFromDate(created.createdAt) };
    },

    async updateProject(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const name = req.name === undefined ? undefined : checkedName(req.name);
      const labeling = req.privateLabelingSetting === undefined ? undefined : privateLabeling(req.privateLabelingSetting, 'privateLabelingSetting');
      const changedAt = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.id);
        const { details } = await changeProject(trx, actorOf(gh.instanceId, principal), project, {
          name,
          roleAssertion: req.projectRoleAssertion,
          authorizationRequired: req.projectRoleCheck,
          projectAccessRequired: req.hasProjectCheck,
          privateLabeling: labeling,
        });
        return details?.changeDate ?? project.changed_at;
      });
      gh.directory.clear();
      return { changeDate: timestampFromDate(changedAt) };
    },

    async deleteProject(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const details = await gh.db.transaction().execute(async (trx) => removeProject(trx, actorOf(gh.instanceId, principal), await visibleProject(trx, managed, req.id)));
      gh.directory.clear();
      return { deletionDate: timestampFromDate(details.changeDate) };
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
      const created = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.projectId, 'projectId');
        return addProjectRole(trx, actorOf(gh.instanceId, principal), project, req.roleKey, { displayName, group });
      });
      return { creationDate: timestampFromDate(created.createdAt) };
    },

    async removeProjectRole(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const removed = await gh.db.transaction().execute(async (trx) => {
        const project = await visibleProject(trx, managed, req.projectId, 'projectId');
        return removeProjectRole(trx, actorOf(gh.instanceId, principal), project, req.roleKey);
      });
      gh.directory.clear();
      return { removalDate: timestampFromDate(removed.changeDate) };
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
