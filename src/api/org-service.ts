/**
 * zitadel.org.v2.OrganizationService (docs/management-api.md): AddOrganization and ListOrganizations.
 *
 * - Adding an organization is for IAM_OWNER; listing for IAM_OWNER (every organization) and
 *   ORG_OWNER (its own), PermissionDenied for anyone else.
 * - Names are unique in the instance (case-insensitively), and so are primary domains, derived
 *   from the name (domain/instance/org-admin.ts, the one writer of organizations); a taken one is
 *   AlreadyExists. `org_id` lets the caller choose the id.
 * - Admins are optional (docs/decisions.md#organizations). An admin named by `user_id` (a user of any
 *   organization of the instance), or a new human created in the organization by AddHumanUser's
 *   rules, gets the listed organization roles (ORG_OWNER when none are listed) in the new
 *   organization; a new admin's email code comes back in `createdAdmins` when the request asked for
 *   it (`returnCode`).
 * - Every organization is active: a state query for another state matches nothing.
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AddOrganizationRequest_Admin } from '../../gen/zitadel/org/v2/org_service_pb.js';
import { addHuman, prepareHuman, type PreparedHuman } from '../domain/users/user-admin.ts';
import { addHumanInput } from './user-v2/user-input.ts';
import type { OrganizationService } from '../../gen/zitadel/org/v2/org_service_pb.js';
import { OrganizationState, type OrganizationSchema } from '../../gen/zitadel/org/v2/org_pb.js';
import { OrganizationFieldName, type SearchQuery } from '../../gen/zitadel/org/v2/query_pb.js';
import type { Gatehouse } from '../context.ts';
import { latestSequence } from '../domain/kernel/events.ts';
import { addOrg, prepareOrg } from '../domain/instance/org-admin.ts';
import { creatorOf, hasRole, type Principal } from '../domain/kernel/principal.ts';
import { grantOrgRoles, orgAdminRoles } from '../domain/users/roles.ts';
import type { DB } from '../store/database.ts';
import { listOrgs, type OrgFilter } from '../store/orgs.ts';
import type { OrgRow } from '../store/schema.ts';
import { findUserById } from '../store/users.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';
import { adminContext, listFilter, permissionDenied, requireManager } from './management/access.ts';
import { changeDetails, listDetails } from './management/details.ts';
import { invalidArgument, pageOf, textFilter } from './management/lists.ts';

/** The filter of one query; undefined when it matches every organization. */
function orgFilter(query: SearchQuery, index: number): OrgFilter | undefined {
  const field = `queries[${index}]`;
  switch (query.query.case) {
    case 'nameQuery':
      return { kind: 'name', text: textFilter(query.query.value.name, query.query.value.method, `${field}.nameQuery`) };
    case 'domainQuery':
      return { kind: 'domain', text: textFilter(query.query.value.domain, query.query.value.method, `${field}.domainQuery`) };
    case 'idQuery':
      return { kind: 'id', id: query.query.value.id };
    case 'defaultQuery':
      return { kind: 'default' };
    case 'stateQuery':
      if (!(query.query.value.state in OrganizationState)) throw invalidArgument(`${field}.stateQuery.state`, 'unknown state');
      return query.query.value.state === OrganizationState.ACTIVE ? undefined : { kind: 'none' };
    default:
      throw invalidArgument(field, 'names no query');
  }
}

function toOrganization(row: OrgRow & { sequence: string | null }): MessageInitShape<typeof OrganizationSchema> {
  return {
    id: row.id,
    details: {
      sequence: BigInt(row.sequence ?? '0'),
      changeDate: timestampFromDate(row.changed_at),
      creationDate: timestampFromDate(row.created_at),
      resourceOwner: row.id,
    },
    state: OrganizationState.ACTIVE,
    name: row.name,
    primaryDomain: row.primary_domain,
  };
}

export function createOrganizationService(gh: Gatehouse): Partial<ServiceImpl<typeof OrganizationService>> {
  /**
   * An admin of the new organization: an existing user of the instance (`userId`), or a new human
   * user created in the organization with AddHumanUser's rules (`human`, prepared before the
   * transaction). It gets the listed organization roles, ORG_OWNER when none are listed.
   */
  async function addAdmin(trx: DB, principal: Principal, orgId: string, admin: AddOrganizationRequest_Admin, index: number, human: PreparedHuman | undefined) {
    const field = `admins[${index}]`;
    const roles = orgAdminRoles(admin.roles, `${field}.roles`);
    // The admin and the organization it belongs to (a new human: the new organization).
    let userId: string;
    let userOrgId: string;
    let emailCode: string | undefined;
    if (human !== undefined) {
      const added = await addHuman(trx, adminContext(gh, principal), orgId, human);
      userId = added.id;
      userOrgId = orgId;
      emailCode = added.emailCode;
    } else if (admin.userType.case === 'userId') {
      const user = await findUserById(trx, admin.userType.value);
      if (user === undefined || user.instance_id !== gh.instanceId) throw apiError(Code.NotFound, 'USER-NotFound', `${field}.userId: user not found`);
      userId = user.id;
      userOrgId = user.org_id;
    } else {
      throw invalidArgument(field, 'needs userId or human');
    }
    await grantOrgRoles(trx, { instanceId: gh.instanceId, creator: creatorOf(principal) }, { id: userId, orgId: userOrgId }, orgId, roles);
    return { userId, ...(emailCode !== undefined ? { emailCode } : {}) };
  }

  return {
    async addOrganization(req, ctx) {
      const principal = requirePrincipal(ctx);
      if (!hasRole(principal, 'IAM_OWNER')) throw permissionDenied();
      const org = prepareOrg({ id: req.orgId, name: req.name }, gh.config.externalUrl);
      // New human admins are checked and their passwords hashed before the transaction.
      const humans = await Promise.all(
        req.admins.map(({ userType }, index) => {
          if (userType.case !== 'human') return undefined;
          const field = `admins[${index}].human.`;
          return prepareHuman(addHumanInput(userType.value, field), field);
        }),
      );
      const result = await gh.db.transaction().execute(async (trx) => {
        const now = new Date();
        const details = await addOrg(trx, { instanceId: gh.instanceId, creator: creatorOf(principal) }, org, now);
        const orgId = org.id;
        const admins: Array<{ userId: string; emailCode?: string }> = [];
        for (const [index, admin] of req.admins.entries()) admins.push(await addAdmin(trx, principal, orgId, admin, index, humans[index]));
        return { orgId, details, admins, now };
      });
      if (result.admins.length > 0) gh.directory.clear();
      return {
        details: changeDetails(result.details, result.now),
        organizationId: result.orgId,
        createdAdmins: result.admins,
      };
    },

    async listOrganizations(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      if (!(req.sortingColumn in OrganizationFieldName)) throw invalidArgument('sortingColumn', 'unknown field');
      const filters = req.queries.map(orgFilter).filter((filter) => filter !== undefined);
      const page = pageOf(req.query, 'query');
      const [{ rows, total }, sequence] = await Promise.all([
        listOrgs(gh.db, { instanceId: gh.instanceId, within: listFilter(managed), filters, page, sortByName: req.sortingColumn === OrganizationFieldName.NAME }),
        latestSequence(gh.db),
      ]);
      return { details: listDetails(total, sequence), sortingColumn: req.sortingColumn, result: rows.map(toOrganization) };
    },
  };
}
