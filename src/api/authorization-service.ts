/**
 * zitadel.authorization.v2beta.AuthorizationService (docs/management-api.md): roles of a project
 * given to a user.
 *
 * - IAM_OWNER manages every authorization; ORG_OWNER those on projects of its organizations, for
 *   users of organizations it manages (an organization's owner does not hand its project's roles
 *   to strangers, nor learn which user ids exist elsewhere). Lists are filtered to what the caller
 *   manages; anyone else gets PermissionDenied.
 * - An authorization belongs to the project's organization; `organization_id`, when given, must be it.
 * - Every role key must be one the project defines (InvalidArgument naming `roleKeys[i]`); a user
 *   has at most one authorization per project (AlreadyExists).
 * - The roles appear in tokens exactly as roles from the bootstrap file do (oauth/role-claims.ts),
 *   in this process at once and in others within one change poll.
 * - Authorizations are always active; filters for another state or for project grants match nothing.
 * - The writes are the projects wing's (domain/projects/authorization-admin.ts); this file checks who may ask.
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  AuthorizationFieldName,
  State,
  type AuthorizationSchema,
  type AuthorizationsSearchFilter,
} from '../../gen/zitadel/authorization/v2beta/authorization_pb.js';
import type { AuthorizationService } from '../../gen/zitadel/authorization/v2beta/authorization_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { hasRole } from '../domain/kernel/principal.ts';
import { addAuthorization, removeAuthorization } from '../domain/projects/authorization-admin.ts';
import { actorOf } from '../domain/projects/project-admin.ts';
import { findAuthorization, listAuthorizations, type AuthorizationFilter, type AuthorizationListRow, type AuthorizationSort } from '../store/authorizations.ts';
import { findProject } from '../store/projects.ts';
import { findUserById } from '../store/users.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';
import { listFilter, managesOrg, permissionDenied, requireManager, visibleOrg } from './management/access.ts';
import { invalidArgument, pageOf, textFilter } from './management/lists.ts';

const SORT: Record<AuthorizationFieldName, AuthorizationSort> = {
  [AuthorizationFieldName.UNSPECIFIED]: 'created_at',
  [AuthorizationFieldName.CREATED_DATE]: 'created_at',
  [AuthorizationFieldName.CHANGED_DATE]: 'changed_at',
  [AuthorizationFieldName.ID]: 'id',
  [AuthorizationFieldName.USER_ID]: 'user_id',
  [AuthorizationFieldName.PROJECT_ID]: 'project_id',
  [AuthorizationFieldName.ORGANIZATION_ID]: 'org_id',
  [AuthorizationFieldName.USER_ORGANIZATION_ID]: 'user_org_id',
};

function authorizationFilter(filter: AuthorizationsSearchFilter, index: number): AuthorizationFilter | undefined {
  const field = `filters[${index}]`;
  const f = filter.filter;
  switch (f.case) {
    case 'authorizationIds': return { kind: 'ids', ids: f.value.ids };
    case 'organizationId': return { kind: 'org', orgId: f.value.id };
    case 'state':
      if (!(f.value.state in State)) throw invalidArgument(`${field}.state.state`, 'unknown state');
      return f.value.state === State.ACTIVE ? undefined : { kind: 'none' };
    case 'userId': return { kind: 'user', userId: f.value.id };
    case 'userOrganizationId': return { kind: 'userOrg', orgId: f.value.id };
    case 'userPreferredLoginName': return { kind: 'loginName', text: textFilter(f.value.loginName, f.value.method, `${field}.userPreferredLoginName`) };
    case 'userDisplayName': return { kind: 'displayName', text: textFilter(f.value.displayName, f.value.method, `${field}.userDisplayName`) };
    case 'projectId': return { kind: 'project', projectId: f.value.id };
    case 'projectName': return { kind: 'projectName', text: textFilter(f.value.name, f.value.method, `${field}.projectName`) };
    case 'roleKey': return { kind: 'roleKey', text: textFilter(f.value.key, f.value.method, `${field}.roleKey`) };
    case 'projectGrantId': return { kind: 'none' };
    default: throw invalidArgument(field, 'names no filter');
  }
}

function toAuthorization(row: AuthorizationListRow): MessageInitShape<typeof AuthorizationSchema> {
  const displayName = row.display_name ?? ([row.given_name, row.family_name].filter(Boolean).join(' ') || row.user_name);
  return {
    id: row.id,
    projectId: row.project_id,
    projectName: row.project_name,
    projectOrganizationId: row.org_id,
    organizationId: row.org_id,
    creationDate: timestampFromDate(row.created_at),
    changeDate: timestampFromDate(row.changed_at),
    state: State.ACTIVE,
    user: { id: row.user_id, preferredLoginName: `${row.user_name}@${row.user_domain}`, displayName, organizationId: row.user_org_id },
    roles: row.roles,
  };
}

export function createAuthorizationService(gh: Gatehouse): Partial<ServiceImpl<typeof AuthorizationService>> {
  return {
    async createAuthorization(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const created = await gh.db.transaction().execute(async (trx) => {
        const project = req.projectId === '' ? undefined : await findProject(trx, req.projectId);
        const visible = project !== undefined && project.instance_id === gh.instanceId ? project : undefined;
        visibleOrg(managed, visible?.org_id, 'projectId: project', 'PROJECT-NotFound');
        if (req.organizationId !== undefined && req.organizationId !== visible!.org_id) {
          throw invalidArgument('organizationId', "must be the project's organization (Gatehouse has no project grants)");
        }
        const user = req.userId === '' ? undefined : await findUserById(trx, req.userId);
        if (user === undefined || user.instance_id !== gh.instanceId) {
          if (hasRole(principal, 'IAM_OWNER')) throw apiError(Code.NotFound, 'USER-NotFound', 'userId: user not found');
          throw permissionDenied();
        }
        if (!managesOrg(managed, user.org_id)) throw permissionDenied();
        return addAuthorization(trx, actorOf(gh.instanceId, principal), visible!, user.id, req.roleKeys);
      });
      gh.directory.clear();
      return { id: created.id, creationDate: timestampFromDate(created.createdAt) };
    },

    async deleteAuthorization(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const removed = await gh.db.transaction().execute(async (trx) => {
        const row = req.id === '' ? undefined : await findAuthorization(trx, gh.instanceId, req.id);
        visibleOrg(managed, row?.org_id, 'id: authorization', 'AUTHZ-NotFound');
        return removeAuthorization(trx, actorOf(gh.instanceId, principal), row!);
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(removed.changeDate) };
    },

    async listAuthorizations(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const sort = SORT[req.sortingColumn ?? AuthorizationFieldName.UNSPECIFIED];
      if (sort === undefined) throw invalidArgument('sortingColumn', 'unknown field');
      const page = pageOf(req.pagination);
      const filters = req.filters.map(authorizationFilter).filter((filter) => filter !== undefined);
      const { rows, total } = await listAuthorizations(gh.db, { instanceId: gh.instanceId, within: listFilter(managed), filters, page, sort });
      return { pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) }, authorizations: rows.map(toAuthorization) };
    },
  };
}
