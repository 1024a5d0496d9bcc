/**
 * The management API's organizations, projects, roles and authorizations (docs/management-api.md)
 * end to end: a real server, tokens from its token endpoint, and clients built from ZITADEL's own
 * descriptors over gRPC, gRPC-web and Connect, plus REST. The roles an authorization gives reach
 * the tokens.
 */
import { createClient, Code } from '@connectrpc/connect';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { OrganizationFieldName } from '@zitadel/proto/zitadel/org/v2/query_pb.js';
import { ProjectService } from '@zitadel/proto/zitadel/project/v2beta/project_service_pb.js';
import { AuthorizationService } from '@zitadel/proto/zitadel/authorization/v2beta/authorization_service_pb.js';
import { TextQueryMethod } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { TextFilterMethod } from '@zitadel/proto/zitadel/filter/v2beta/filter_pb.js';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiToken, apiTokens, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';
import { signedInCode } from '../support/sign-in.ts';

const CLAIMS_PROJECT = '520000000000000009';
const CALLBACK = 'http://localhost:3000/callback';
const ROLES_CLAIM = 'urn:gatehouse:iam:org:project:roles';

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer(
    managementDocument({
      projects: [
        {
          id: CLAIMS_PROJECT,
          name: 'claims',
          roleAssertion: true,
          roles: [{ key: 'editor' }, { key: 'viewer' }],
          apps: [
            {
              name: 'claims-web',
              clientId: 'claims-web',
              clientSecret: 'claims-web-secret',
              authMethod: 'client_secret_basic',
              redirectUris: [CALLBACK],
              responseTypes: ['code'],
              grantTypes: ['authorization_code'],
              accessTokenType: 'jwt',
              idTokenRoleAssertion: true,
              accessTokenRoleAssertion: true,
            },
          ],
        },
      ],
    }),
  );
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

async function aliceTokens(): Promise<{ idToken: Record<string, unknown>; accessToken: Record<string, unknown> }> {
  const issued = await signedInCode(server, { clientId: 'claims-web', redirectUri: CALLBACK, scopes: ['openid'], userId: MGMT.alice });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, {
    authorization: basic('claims-web', 'claims-web-secret'),
  });
  expect(reply.status).toBe(200);
  return { idToken: decodeJwt(String(reply.json['id_token'])), accessToken: decodeJwt(String(reply.json['access_token'])) };
}

describe.each(transports(() => server))('over %s', (name, transport) => {
  const suffix = name.replace(/[^a-z]/gi, '').toLowerCase();

  it('an IAM_OWNER adds an organization and finds it', async () => {
    const orgs = createClient(OrganizationService, transport());
    const added = await orgs.addOrganization({ name: `Team ${suffix}` }, withToken(tokens.iamAdmin));
    expect(added.organizationId).toMatch(/^\d+$/);
    expect(added.details?.sequence).toBeGreaterThan(0n);
    expect(added.createdAdmins).toEqual([]);
    const found = await orgs.listOrganizations(
      { queries: [{ query: { case: 'nameQuery', value: { name: `team ${suffix}`, method: TextQueryMethod.EQUALS_IGNORE_CASE } } }] },
      withToken(tokens.iamAdmin),
    );
    expect(found.details?.totalResult).toBe(1n);
    expect(found.result[0]).toMatchObject({ id: added.organizationId, name: `Team ${suffix}`, primaryDomain: `team-${suffix}.127.0.0.1` });
  });

  it('a project with a role, updated, listed, and deleted', async () => {
    const projects = createClient(ProjectService, transport());
    const auth = withToken(tokens.orgAdmin);
    const created = await projects.createProject({ organizationId: MGMT.org, name: `shop-${suffix}`, projectRoleAssertion: true }, auth);
    await projects.addProjectRole({ projectId: created.id, roleKey: 'buyer', displayName: 'Buyer', group: 'customers' }, auth);
    await projects.updateProject({ id: created.id, name: `store-${suffix}`, projectRoleCheck: true }, auth);
    const got = await projects.getProject({ id: created.id }, auth);
    expect(got.project).toMatchObject({ name: `store-${suffix}`, organizationId: MGMT.org, projectRoleAssertion: true, authorizationRequired: true, projectAccessRequired: false });
    const roles = await projects.listProjectRoles({ projectId: created.id }, auth);
    expect(roles.projectRoles.map((r) => [r.key, r.displayName, r.group])).toEqual([['buyer', 'Buyer', 'customers']]);
    const listed = await projects.listProjects({ filters: [{ filter: { case: 'projectNameFilter', value: { projectName: `store-${suffix}`, method: TextFilterMethod.EQUALS } } }] }, auth);
    expect(listed.projects.map((p) => p.id)).toEqual([created.id]);
    await projects.removeProjectRole({ projectId: created.id, roleKey: 'buyer' }, auth);
    expect((await projects.listProjectRoles({ projectId: created.id }, auth)).projectRoles).toEqual([]);
    await projects.deleteProject({ id: created.id }, auth);
    expect((await failure(projects.getProject({ id: created.id }, withToken(tokens.iamAdmin)))).code).toBe(Code.NotFound);
  });

  it('an authorization puts its roles in the tokens at once, and its removal takes them out', async () => {
    const authorizations = createClient(AuthorizationService, transport());
    const auth = withToken(tokens.orgAdmin);
    const created = await authorizations.createAuthorization({ userId: MGMT.alice, projectId: CLAIMS_PROJECT, roleKeys: ['editor'] }, auth);
    try {
      const withRole = await aliceTokens();
      expect(withRole.idToken[ROLES_CLAIM]).toEqual({ editor: { [MGMT.org]: 'managed.test' } });
      expect(withRole.accessToken[ROLES_CLAIM]).toEqual({ editor: { [MGMT.org]: 'managed.test' } });
      const listed = await authorizations.listAuthorizations({ filters: [{ filter: { case: 'userId', value: { id: MGMT.alice } } }] }, auth);
      expect(listed.authorizations).toHaveLength(1);
      expect(listed.authorizations[0]).toMatchObject({ id: created.id, projectId: CLAIMS_PROJECT, projectName: 'claims', roles: ['editor'] });
      expect(listed.authorizations[0]!.user).toMatchObject({ id: MGMT.alice, preferredLoginName: 'alice@managed.test', organizationId: MGMT.org });
    } finally {
      await authorizations.deleteAuthorization({ id: created.id }, auth);
    }
    expect((await aliceTokens()).idToken[ROLES_CLAIM]).toBeUndefined();
  });
});

describe('organization admins', () => {
  it('a new human admin and an existing user become ORG_OWNERs of the new organization', async () => {
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    const added = await orgs.addOrganization(
      {
        name: 'With Admins',
        admins: [
          {
            userType: {
              case: 'human',
              value: {
                username: 'founder',
                profile: { givenName: 'Fay', familyName: 'Founder' },
                email: { email: 'fay@admins.test', verification: { case: 'returnCode', value: {} } },
                passwordType: { case: 'password', value: { password: 'Correct-Horse-9', changeRequired: false } },
              },
            },
          },
          { userType: { case: 'userId', value: MGMT.alice }, roles: ['ORG_OWNER', 'ORG_ADMIN_IMPERSONATOR'] },
        ],
      },
      withToken(tokens.iamAdmin),
    );
    expect(added.createdAdmins).toHaveLength(2);
    const [founder, alice] = added.createdAdmins;
    expect(founder!.emailCode).toMatch(/^[A-Z0-9]{6,}$/);
    expect(alice).toEqual(expect.objectContaining({ userId: MGMT.alice }));
    const roles = await server.running.gh.db.selectFrom('user_roles').selectAll().where('scope_org_id', '=', added.organizationId).orderBy('role').execute();
    expect(roles.map((r) => [r.user_id, r.role])).toEqual(
      expect.arrayContaining([[founder!.userId, 'ORG_OWNER'], [MGMT.alice, 'ORG_OWNER'], [MGMT.alice, 'ORG_ADMIN_IMPERSONATOR']]),
    );
    const user = await server.running.gh.db.selectFrom('users').select(['org_id', 'user_name']).where('id', '=', founder!.userId).executeTakeFirstOrThrow();
    expect(user).toEqual({ org_id: added.organizationId, user_name: 'founder' });
  });

  it('a bad admin changes nothing: no organization, no user', async () => {
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    const weak = await failure(orgs.addOrganization({ name: 'Weak Admin', admins: [{ userType: { case: 'human', value: { username: 'weak', profile: { givenName: 'W', familyName: 'K' }, email: { email: 'weak@admins.test' }, passwordType: { case: 'password', value: { password: 'short', changeRequired: false } } } } }] }, withToken(tokens.iamAdmin)));
    expect(weak.code).toBe(Code.InvalidArgument);
    expect(weak.message.startsWith('admins[0].human.password')).toBe(true);
    const role = await failure(orgs.addOrganization({ name: 'Wrong Role', admins: [{ userType: { case: 'userId', value: MGMT.alice }, roles: ['IAM_OWNER'] }] }, withToken(tokens.iamAdmin)));
    expect(role.code).toBe(Code.InvalidArgument);
    expect(role.message.startsWith('admins[0].roles')).toBe(true);
    const listed = await orgs.listOrganizations({ queries: [{ query: { case: 'nameQuery', value: { name: 'W', method: TextQueryMethod.STARTS_WITH } } }] }, withToken(tokens.iamAdmin));
    expect(listed.result.map((o) => o.name)).not.toEqual(expect.arrayContaining(['Weak Admin']));
    expect(listed.result.map((o) => o.name)).not.toEqual(expect.arrayContaining(['Wrong Role']));
    const weakUser = await server.running.gh.db.selectFrom('users').select('id').where('user_name', '=', 'weak').executeTakeFirst();
    expect(weakUser).toBeUndefined();
  });
});

describe('permissions', () => {
  it('only an IAM_OWNER adds organizations', async () => {
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    for (const caller of ['orgAdmin', 'plain'] as const) {
      expect((await failure(orgs.addOrganization({ name: `Nope ${caller}` }, withToken(tokens[caller])))).code).toBe(Code.PermissionDenied);
    }
  });

  it('an ORG_OWNER lists its own organization only; others are refused', async () => {
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    const own = await orgs.listOrganizations({ sortingColumn: OrganizationFieldName.NAME }, withToken(tokens.orgAdmin));
    expect(own.result.map((o) => o.id)).toEqual([MGMT.org]);
    expect(own.details?.totalResult).toBe(1n);
    const all = await orgs.listOrganizations({}, withToken(tokens.iamAdmin));
    expect(all.result.map((o) => o.id)).toEqual(expect.arrayContaining([MGMT.org, MGMT.otherOrg]));
    expect((await failure(orgs.listOrganizations({}, withToken(tokens.plain)))).code).toBe(Code.PermissionDenied);
  });

  it("another organization's project and a missing one look alike to an ORG_OWNER; an IAM_OWNER is told NotFound", async () => {
    const projects = createClient(ProjectService, transports(() => server)[2]![1]());
    const other = await failure(projects.getProject({ id: MGMT.otherProject }, withToken(tokens.orgAdmin)));
    const missing = await failure(projects.getProject({ id: '999999999999999999' }, withToken(tokens.orgAdmin)));
    expect([other.code, missing.code]).toEqual([Code.PermissionDenied, Code.PermissionDenied]);
    expect(other.message).toBe(missing.message);
    expect((await failure(projects.getProject({ id: '999999999999999999' }, withToken(tokens.iamAdmin)))).code).toBe(Code.NotFound);
    expect((await failure(projects.createProject({ organizationId: MGMT.otherOrg, name: 'intruder' }, withToken(tokens.orgAdmin)))).code).toBe(Code.PermissionDenied);
    expect((await failure(projects.listProjects({}, withToken(tokens.plain)))).code).toBe(Code.PermissionDenied);
    const listed = await projects.listProjects({}, withToken(tokens.orgAdmin));
    expect(listed.projects.every((p) => p.organizationId === MGMT.org)).toBe(true);
  });

  it("an ORG_OWNER gives its project's roles to its own users only", async () => {
    const authorizations = createClient(AuthorizationService, transports(() => server)[2]![1]());
    const elsewhere = await failure(authorizations.createAuthorization({ userId: MGMT.otherAdmin, projectId: MGMT.project, roleKeys: ['reader'] }, withToken(tokens.orgAdmin)));
    expect(elsewhere.code).toBe(Code.PermissionDenied);
    const foreignProject = await failure(authorizations.createAuthorization({ userId: MGMT.alice, projectId: MGMT.otherProject, roleKeys: ['reader'] }, withToken(tokens.orgAdmin)));
    expect(foreignProject.code).toBe(Code.PermissionDenied);
    expect((await failure(authorizations.listAuthorizations({}, withToken(tokens.plain)))).code).toBe(Code.PermissionDenied);
  });

  it('a token without the API scope is PermissionDenied', async () => {
    const openidOnly = await apiToken(server, 'iamAdmin', 'openid');
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    expect((await failure(orgs.listOrganizations({}, withToken(openidOnly)))).code).toBe(Code.PermissionDenied);
  });
});

describe('conflicts and invalid input', () => {
  it('duplicates are AlreadyExists', async () => {
    const orgs = createClient(OrganizationService, transports(() => server)[2]![1]());
    const projects = createClient(ProjectService, transports(() => server)[2]![1]());
    const authorizations = createClient(AuthorizationService, transports(() => server)[2]![1]());
    const admin = withToken(tokens.iamAdmin);
    expect((await failure(orgs.addOrganization({ name: 'managed' }, admin))).code).toBe(Code.AlreadyExists);
    expect((await failure(orgs.addOrganization({ name: 'Other', orgId: MGMT.org }, admin))).code).toBe(Code.AlreadyExists);
    expect((await failure(projects.createProject({ organizationId: MGMT.org, name: 'PORTAL' }, admin))).code).toBe(Code.AlreadyExists);
    expect((await failure(projects.addProjectRole({ projectId: MGMT.project, roleKey: 'reader', displayName: 'Again' }, admin))).code).toBe(Code.AlreadyExists);
    const first = await authorizations.createAuthorization({ userId: MGMT.alice, projectId: MGMT.project, roleKeys: ['reader'] }, admin);
    expect((await failure(authorizations.createAuthorization({ userId: MGMT.alice, projectId: MGMT.project, roleKeys: [] }, admin))).code).toBe(Code.AlreadyExists);
    await authorizations.deleteAuthorization({ id: first.id }, admin);
    expect((await failure(authorizations.deleteAuthorization({ id: first.id }, admin))).code).toBe(Code.NotFound);
  });

  it.each([
    ['an empty organization name', () => createClient(OrganizationService, transports(() => server)[2]![1]()).addOrganization({ name: '' }, withToken(tokens.iamAdmin)), 'name'],
    ['an organization name without letters or digits', () => createClient(OrganizationService, transports(() => server)[2]![1]()).addOrganization({ name: '!!!' }, withToken(tokens.iamAdmin)), 'name'],
    ['a malformed organization id', () => createClient(OrganizationService, transports(() => server)[2]![1]()).addOrganization({ name: 'Fine', orgId: 'a b' }, withToken(tokens.iamAdmin)), 'orgId'],
    ['a project name of 201 characters', () => createClient(ProjectService, transports(() => server)[2]![1]()).createProject({ organizationId: MGMT.org, name: 'x'.repeat(201) }, withToken(tokens.iamAdmin)), 'name'],
    ['a role key with a space', () => createClient(ProjectService, transports(() => server)[2]![1]()).addProjectRole({ projectId: MGMT.project, roleKey: 'two words', displayName: 'Two' }, withToken(tokens.iamAdmin)), 'roleKey'],
    ['a role without a display name', () => createClient(ProjectService, transports(() => server)[2]![1]()).addProjectRole({ projectId: MGMT.project, roleKey: 'nameless', displayName: '' }, withToken(tokens.iamAdmin)), 'displayName'],
    ['a role the project does not define', () => createClient(AuthorizationService, transports(() => server)[2]![1]()).createAuthorization({ userId: MGMT.alice, projectId: MGMT.project, roleKeys: ['reader', 'owner'] }, withToken(tokens.iamAdmin)), 'roleKeys[1]'],
    ['an organization other than the project\'s', () => createClient(AuthorizationService, transports(() => server)[2]![1]()).createAuthorization({ userId: MGMT.alice, projectId: MGMT.project, organizationId: MGMT.otherOrg }, withToken(tokens.iamAdmin)), 'organizationId'],
    ['a page larger than 1000', () => createClient(ProjectService, transports(() => server)[2]![1]()).listProjects({ pagination: { limit: 1001 } }, withToken(tokens.iamAdmin)), 'pagination.limit'],
  ])('%s is InvalidArgument naming the field', async (_name, call, field) => {
    const refused = await failure(call());
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message.startsWith(`${field}:`)).toBe(true);
  });
});

describe('REST', () => {
  it('the same calls on their REST paths', async () => {
    const token = tokens.iamAdmin;
    const org = await rest(server, 'POST', '/v2/organizations', token, { name: 'Rest Org' });
    expect(org.status).toBe(200);
    const organizationId = String(org.json['organizationId']);
    const project = await rest(server, 'POST', '/v2beta/projects', token, { organizationId, name: 'rest-project' });
    expect(project.status).toBe(200);
    const projectId = String(project.json['id']);
    expect((await rest(server, 'POST', `/v2beta/projects/${projectId}/roles`, token, { roleKey: 'clerk', displayName: 'Clerk' })).status).toBe(200);
    const got = await rest(server, 'GET', `/v2beta/projects/${projectId}`, token);
    expect(got.json['project']).toMatchObject({ id: projectId, name: 'rest-project', state: 'PROJECT_STATE_ACTIVE' });
    const roles = await rest(server, 'POST', `/v2beta/projects/${projectId}/roles/search?pagination.limit=5`, token);
    expect(roles.json['projectRoles']).toEqual([expect.objectContaining({ key: 'clerk' })]);
    const search = await rest(server, 'POST', '/v2beta/projects/search', token, { filters: [{ projectOrganizationIdFilter: { id: organizationId } }] });
    expect(search.json['pagination']).toEqual({ totalResult: '1', appliedLimit: '100' });
    expect((await rest(server, 'DELETE', `/v2beta/projects/${projectId}/roles/clerk`, token)).status).toBe(200);
    expect((await rest(server, 'DELETE', `/v2beta/projects/${projectId}`, token)).status).toBe(200);
    const orgs = await rest(server, 'POST', '/v2/organizations/_search', token, { queries: [{ idQuery: { id: organizationId } }] });
    expect(orgs.json['result']).toEqual([expect.objectContaining({ name: 'Rest Org', primaryDomain: 'rest-org.127.0.0.1', state: 'ORGANIZATION_STATE_ACTIVE' })]);
  });

  it('wrong types and unknown enum values are 400, a missing object 404', async () => {
    const token = tokens.iamAdmin;
    expect((await rest(server, 'POST', '/v2/organizations', token, { name: 42 })).status).toBe(400);
    expect((await rest(server, 'POST', '/v2beta/projects', token, { organizationId: MGMT.org, name: 'x', privateLabelingSetting: 'NO_SUCH' })).status).toBe(400);
    expect((await rest(server, 'POST', '/v2beta/projects/search', token, { pagination: { limit: 'many' } })).status).toBe(400);
    expect((await rest(server, 'POST', '/v2beta/authorizations/search', token, { filters: [{ state: { state: 7 } }] })).status).toBe(400);
    const missing = await rest(server, 'GET', '/v2beta/projects/999999999999999999', token);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ code: 5 });
  });
});
