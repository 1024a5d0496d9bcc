/**
 * The bootstrap file and the management API manage the same objects
 * (docs/management-api.md#the-bootstrap-file-and-the-api-side-by-side):
 * re-applying an unchanged file touches nothing created through the API, neither new objects nor
 * what the API added to the file's objects (roles of a file project, authorizations, a machine's
 * secret, roles in another organization).
 */
import { createClient } from '@connectrpc/connect';
import { AppService } from '@zitadel/proto/zitadel/app/v2beta/app_service_pb.js';
import { APIAuthMethodType } from '@zitadel/proto/zitadel/app/v2beta/api_pb.js';
import { AuthorizationService } from '@zitadel/proto/zitadel/authorization/v2beta/authorization_service_pb.js';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { ProjectService } from '@zitadel/proto/zitadel/project/v2beta/project_service_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { stringify } from 'yaml';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiToken, managementDocument, MGMT, transports, withToken } from '../support/management.ts';

const KEYLESS = '220000000000000077';
const document = managementDocument({ machines: [{ id: KEYLESS, userName: 'mgmt-keyless', accessTokenType: 'jwt' }] });
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(document);
});
afterAll(() => server.stop());

it('re-applying the unchanged file keeps everything the API made', async () => {
  const auth = withToken(await apiToken(server, 'iamAdmin'));
  const transport = transports(() => server)[2]![1]();
  const org = await createClient(OrganizationService, transport).addOrganization({ name: 'Runtime', admins: [{ userType: { case: 'userId', value: MGMT.alice } }] }, auth);
  const projects = createClient(ProjectService, transport);
  const project = await projects.createProject({ organizationId: MGMT.org, name: 'runtime-project' }, auth);
  await projects.addProjectRole({ projectId: MGMT.project, roleKey: 'auditor', displayName: 'Auditor' }, auth);
  const authorization = await createClient(AuthorizationService, transport).createAuthorization({ userId: MGMT.alice, projectId: MGMT.project, roleKeys: ['auditor'] }, auth);
  const app = await createClient(AppService, transport).createApplication(
    { projectId: MGMT.project, name: 'runtime-api', creationRequestType: { case: 'apiRequest', value: { authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC } } },
    auth,
  );
  const users = createClient(UserService, transport);
  const human = await users.addHumanUser({ organization: { org: { case: 'orgId', value: MGMT.org } }, username: 'runtime-human', profile: { givenName: 'Run', familyName: 'Time' }, email: { email: 'run@managed.test', verification: { case: 'isVerified', value: true } } }, auth);
  const secret = await users.addSecret({ userId: KEYLESS }, auth);

  const summary = await applyBootstrap(server.running.gh.db, parseBootstrap(stringify(document), 'again.yaml'));
  expect({ created: summary.created, updated: summary.updated }).toEqual({ created: 0, updated: 0 });
  server.running.gh.directory.clear();

  const db = server.running.gh.db;
  expect(await db.selectFrom('orgs').select('id').where('id', '=', org.organizationId).executeTakeFirst()).toBeDefined();
  expect(await db.selectFrom('user_roles').select('role').where('user_id', '=', MGMT.alice).where('scope_org_id', '=', org.organizationId).execute()).toEqual([{ role: 'ORG_OWNER' }]);
  expect((await projects.getProject({ id: project.id }, auth)).project?.name).toBe('runtime-project');
  expect((await projects.listProjectRoles({ projectId: MGMT.project }, auth)).projectRoles.map((r) => r.key)).toEqual(['auditor', 'reader', 'writer']);
  const kept = await createClient(AuthorizationService, transport).listAuthorizations({ filters: [{ filter: { case: 'authorizationIds', value: { ids: [authorization.id] } } }] }, auth);
  expect(kept.authorizations.map((a) => a.roles)).toEqual([['auditor']]);
  expect((await createClient(AppService, transport).getApplication({ id: app.appId }, auth)).app?.name).toBe('runtime-api');
  expect((await users.getUserByID({ userId: human.userId }, auth)).user?.username).toBe('runtime-human');
  const token = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('mgmt-keyless', secret.clientSecret) });
  expect(token.status).toBe(200);
});
