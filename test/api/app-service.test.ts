/**
 * zitadel.app.v2beta.AppService (docs/management-api.md) end to end: a real server, tokens from its
 * token endpoint, clients built from ZITADEL's own descriptors over the four protocols, and REST.
 * The applications it creates sign users in, their secrets and keys authenticate at the token and
 * introspection endpoints, and a replaced secret, a deleted application or a deleted key is
 * `invalid_client` at the next request.
 */
import { createPrivateKey } from 'node:crypto';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, createClient, type Client, type Transport } from '@connectrpc/connect';
import { APIAuthMethodType } from '@zitadel/proto/zitadel/app/v2beta/api_pb.js';
import { AppSorting, AppState } from '@zitadel/proto/zitadel/app/v2beta/app_pb.js';
import { AppService } from '@zitadel/proto/zitadel/app/v2beta/app_service_pb.js';
import { OIDCAppType, OIDCAuthMethodType, OIDCGrantType, OIDCResponseType, OIDCTokenType } from '@zitadel/proto/zitadel/app/v2beta/oidc_pb.js';
import { TextFilterMethod } from '@zitadel/proto/zitadel/filter/v2/filter_pb.js';
import { decodeJwt } from 'jose';
import { signAssertion } from '../support/assertions.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { apiTokens, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';
import { signedInCode } from '../support/sign-in.ts';

const CALLBACK = 'http://localhost:3000/callback';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** An application of `otherOrg`'s project, from the bootstrap file. */
const REMOTE_APP = '620000000000000001';

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  const document = managementDocument();
  const orgs = document['orgs'] as { projects: { apps?: unknown[] }[] }[];
  orgs[1]!.projects[0]!.apps = [{ id: REMOTE_APP, name: 'remote-api', clientId: 'remote-api', clientSecret: 'remote-api-secret', type: 'api', authMethod: 'client_secret_basic' }];
  // Failed client authentications are what these tests provoke: no throttling (docs/security.md 10.11) in the way.
  server = await startTestServer(document, { GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' });
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

const connect = (): Transport => transports(() => server)[2]![1]();
const appsAs = (transport: Transport = connect()): Client<typeof AppService> => createClient(AppService, transport);
const admin = () => withToken(tokens.iamAdmin);

/** The client credentials of a CreateApplication answer, whichever kind it created. */
function credentialsOf(created: Awaited<ReturnType<Client<typeof AppService>['createApplication']>>): { clientId: string; clientSecret: string } {
  const answer = created.creationResponseType;
  if (answer.case !== 'oidcResponse' && answer.case !== 'apiResponse') throw new Error('no credentials in the answer');
  return answer.value;
}

async function createOidc(name: string, settings: Record<string, unknown> = {}, caller: Caller = 'iamAdmin', projectId: string = MGMT.project) {
  const created = await appsAs().createApplication(
    {
      projectId,
      name,
      creationRequestType: {
        case: 'oidcRequest',
        value: { redirectUris: [CALLBACK], responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE], grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE], ...settings },
      },
    },
    withToken(tokens[caller]),
  );
  return { appId: created.appId, ...credentialsOf(created) };
}

async function createApi(name: string, authMethodType: APIAuthMethodType) {
  const created = await appsAs().createApplication({ projectId: MGMT.project, name, creationRequestType: { case: 'apiRequest', value: { authMethodType } } }, admin());
  return { appId: created.appId, ...credentialsOf(created) };
}

/** Client authentication at the introspection endpoint with a secret (client_secret_basic). */
function introspectWithSecret(clientId: string, secret: string): Promise<Reply> {
  return postForm(`${server.url}/oauth/v2/introspect`, { token: 'not-a-token' }, { authorization: basic(clientId, secret) });
}

/** Client authentication at the introspection endpoint with a key from CreateApplicationKey (private_key_jwt). */
async function introspectWithKey(keyFile: { keyId: string; key: string; clientId: string }): Promise<Reply> {
  const assertion = await signAssertion({ issuer: keyFile.clientId, audience: server.url, key: createPrivateKey(keyFile.key), kid: keyFile.keyId });
  return postForm(`${server.url}/oauth/v2/introspect`, { token: 'not-a-token', client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
}

function expectInvalidClient(reply: Reply): void {
  expect(reply.status).toBe(401);
  expect(reply.json['error']).toBe('invalid_client');
}

describe.each(transports(() => server))('the IAM_OWNER over %s', (name, transport) => {
  const suffix = name.replace(/[^a-z]/gi, '').toLowerCase();

  it('creates an OIDC web application, reads it back, signs a user in through it, renews its secret and deletes it', async () => {
    const apps = appsAs(transport());
    const created = await apps.createApplication(
      {
        projectId: MGMT.project,
        name: `web ${suffix}`,
        creationRequestType: {
          case: 'oidcRequest',
          value: {
            redirectUris: [CALLBACK],
            postLogoutRedirectUris: ['https://web.example/signed-out'],
            responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
            grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN],
            appType: OIDCAppType.OIDC_APP_TYPE_WEB,
            authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
            accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_JWT,
            idTokenUserinfoAssertion: true,
            idTokenRoleAssertion: true,
            accessTokenRoleAssertion: true,
          },
        },
      },
      admin(),
    );
    expect(created.appId).toMatch(/^\d+$/);
    expect(created.creationDate).toBeDefined();
    expect(created.creationResponseType.case).toBe('oidcResponse');
    const { clientId, clientSecret } = credentialsOf(created);
    expect(clientId).toBe(`${created.appId}@portal`);
    expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const { app } = await apps.getApplication({ id: created.appId }, admin());
    expect(app).toMatchObject({ id: created.appId, name: `web ${suffix}`, state: AppState.ACTIVE });
    expect(app?.config.case).toBe('oidcConfig');
    expect(app?.config.value).toMatchObject({
      clientId,
      redirectUris: [CALLBACK],
      postLogoutRedirectUris: ['https://web.example/signed-out'],
      responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
      grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN],
      appType: OIDCAppType.OIDC_APP_TYPE_WEB,
      authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
      accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_JWT,
      idTokenUserinfoAssertion: true,
      idTokenRoleAssertion: true,
      accessTokenRoleAssertion: true,
      devMode: false,
      additionalOrigins: [],
      allowedOrigins: ['http://localhost:3000', 'https://web.example'],
      backChannelLogoutUri: '',
    });

    // A user signs in through the new application: its secret works at the token endpoint.
    const issued = await signedInCode(server, { clientId, redirectUri: CALLBACK, scopes: ['openid', 'offline_access'], userId: MGMT.alice });
    const tokenUrl = `${server.url}/oauth/v2/token`;
    const grant = await postForm(tokenUrl, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, { authorization: basic(clientId, clientSecret) });
    expect(grant.status).toBe(200);
    expect(decodeJwt(String(grant.json['access_token']))).toMatchObject({ sub: MGMT.alice, client_id: clientId });
    const refresh = (secret: string) => postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: String(grant.json['refresh_token']) }, { authorization: basic(clientId, secret) });

    const renewed = await apps.regenerateClientSecret({ projectId: MGMT.project, applicationId: created.appId, appType: { case: 'isOidc', value: true } }, admin());
    expect(renewed.clientSecret).not.toBe(clientSecret);
    expect(renewed.creationDate).toBeDefined();
    expectInvalidClient(await refresh(clientSecret));
    expect((await refresh(renewed.clientSecret)).status).toBe(200);

    const deleted = await apps.deleteApplication({ projectId: MGMT.project, id: created.appId }, admin());
    expect(deleted.deletionDate).toBeDefined();
    expectInvalidClient(await introspectWithSecret(clientId, renewed.clientSecret));
    expect((await failure(apps.getApplication({ id: created.appId }, admin()))).code).toBe(Code.NotFound);
  });

  it('creates an API application whose generated key signs client assertions until the key is deleted', async () => {
    const apps = appsAs(transport());
    const created = await apps.createApplication(
      {
        projectId: MGMT.project,
        name: `keyed api ${suffix}`,
        creationRequestType: { case: 'apiRequest', value: { authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT } },
      },
      admin(),
    );
    expect(created.creationResponseType.case).toBe('apiResponse');
    const { clientId, clientSecret } = credentialsOf(created);
    expect(clientSecret).toBe('');

    const key = await apps.createApplicationKey({ appId: created.appId, projectId: MGMT.project }, admin());
    const file = JSON.parse(new TextDecoder().decode(key.keyDetails)) as Record<string, string>;
    expect(file).toEqual({ type: 'application', keyId: key.id, key: expect.stringContaining('-----BEGIN RSA PRIVATE KEY-----'), appId: created.appId, clientId });
    const keyFile = { keyId: key.id, key: file['key']!, clientId };
    const accepted = await introspectWithKey(keyFile);
    expect(accepted.status).toBe(200);
    expect(accepted.json).toEqual({ active: false });

    const listed = await apps.listApplicationKeys({ resourceId: { case: 'applicationId', value: created.appId } }, admin());
    expect(listed.keys).toEqual([expect.objectContaining({ id: key.id, applicationId: created.appId, projectId: MGMT.project, organizationId: MGMT.org })]);
    expect(listed.keys[0]!.expirationDate).toBeUndefined();
    expect(listed.pagination?.totalResult).toBe(1n);

    await apps.deleteApplicationKey({ id: key.id, projectId: MGMT.project, applicationId: created.appId }, admin());
    expectInvalidClient(await introspectWithKey(keyFile));
    expect((await apps.listApplicationKeys({ resourceId: { case: 'applicationId', value: created.appId } }, admin())).keys).toEqual([]);
    await apps.deleteApplication({ projectId: MGMT.project, id: created.appId }, admin());
  });
});

describe('creating applications', () => {
  it('takes a code client with its grants when the flows are left out, and gives a public client no secret', async () => {
    const created = await appsAs().createApplication(
      {
        projectId: MGMT.project,
        name: 'spa',
        creationRequestType: {
          case: 'oidcRequest',
          value: { redirectUris: [CALLBACK], appType: OIDCAppType.OIDC_APP_TYPE_USER_AGENT, authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE },
        },
      },
      admin(),
    );
    expect(credentialsOf(created).clientSecret).toBe('');
    const { app } = await appsAs().getApplication({ id: created.appId }, admin());
    expect(app?.config.value).toMatchObject({
      responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
      grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE],
      appType: OIDCAppType.OIDC_APP_TYPE_USER_AGENT,
      authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE,
      accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_BEARER,
    });
    const regenerate = await failure(appsAs().regenerateClientSecret({ projectId: MGMT.project, applicationId: created.appId }, admin()));
    expect(regenerate.code).toBe(Code.FailedPrecondition);
    const keyForSecretApp = await failure(appsAs().createApplicationKey({ appId: created.appId, projectId: MGMT.project }, admin()));
    expect(keyForSecretApp.code).toBe(Code.FailedPrecondition);
  });

  it('takes an id from the request, and the authorization endpoint knows the new client at once', async () => {
    const created = await createOidc('chosen id', {}, 'iamAdmin');
    const chosen = await appsAs().createApplication(
      { projectId: MGMT.project, id: 'my-app-1', name: 'my app', creationRequestType: { case: 'apiRequest', value: {} } },
      admin(),
    );
    expect(chosen.appId).toBe('my-app-1');
    expect(credentialsOf(chosen).clientId).toBe('my-app-1@portal');
    const authorize = await request(
      `${server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: created.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 's' })}`,
      { redirect: 'manual' },
    );
    expect([302, 303]).toContain(authorize.status);
    expect(authorize.headers.get('location')).not.toContain('error=');
  });

  it('appends an event naming the creator for every change', async () => {
    const created = await createOidc('audited');
    await appsAs().updateApplication({ id: created.appId, name: 'audited twice' }, admin());
    await appsAs().regenerateClientSecret({ applicationId: created.appId }, admin());
    await appsAs().deleteApplication({ id: created.appId }, admin());
    const events = await server.running.gh.db
      .selectFrom('events')
      .select(['event_type', 'creator', 'resource_owner'])
      .where('aggregate_type', '=', 'app')
      .where('aggregate_id', '=', created.appId)
      .orderBy('sequence')
      .execute();
    expect(events).toEqual(
      ['app.added', 'app.changed', 'app.secret.changed', 'app.removed'].map((type) => ({ event_type: type, creator: MGMT.iamAdmin, resource_owner: MGMT.org })),
    );
  });

  it('stores only the hash of the secret', async () => {
    const created = await createOidc('hashed');
    const row = await server.running.gh.db.selectFrom('apps').select('secret_hash').where('id', '=', created.appId).executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^\$argon2id\$/);
    expect(row.secret_hash).not.toContain(created.clientSecret);
  });

  it('names are unique per project (ignoring case), ids per instance', async () => {
    await createOidc('Unique Name');
    expect((await failure(createOidc('unique name'))).code).toBe(Code.AlreadyExists);
    const elsewhere = await createOidc('Unique Name', {}, 'iamAdmin', MGMT.otherProject);
    expect(elsewhere.clientId).toBe(`${elsewhere.appId}@remote`);
    const again = await failure(appsAs().createApplication({ projectId: MGMT.project, id: 'my-app-1', name: 'other', creationRequestType: { case: 'apiRequest', value: {} } }, admin()));
    expect(again.code).toBe(Code.AlreadyExists);
  });

  const oidc = (value: Record<string, unknown>) => ({ case: 'oidcRequest' as const, value: { redirectUris: [CALLBACK], ...value } });
  it.each([
    ['no name', { name: '' }, 'name'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
    ['a malformed id', { id: 'a b' }, 'id'],
    ['neither OIDC nor API settings', { creationRequestType: { case: undefined } }, 'oidcRequest'],
    ['an http redirect URI outside dev mode', { creationRequestType: oidc({ redirectUris: ['http://app.example/cb'] }) }, 'redirectUris[0]'],
    ['a redirect URI with a fragment', { creationRequestType: oidc({ redirectUris: ['https://app.example/cb#x'] }) }, 'redirectUris[0]'],
    ['a relative post-logout URI', { creationRequestType: oidc({ postLogoutRedirectUris: ['/bye'] }) }, 'postLogoutRedirectUris[0]'],
    ['a code flow without redirect URIs', { creationRequestType: oidc({ redirectUris: [] }) }, 'redirectUris'],
    ['an unspecified response type', { creationRequestType: oidc({ responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_UNSPECIFIED] }) }, 'responseTypes[0]'],
    [
      'an id_token response without the implicit grant',
      { creationRequestType: oidc({ responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN], grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE] }) },
      'responseTypes[0]',
    ],
    [
      'the device code grant',
      { creationRequestType: oidc({ grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDCGrantType.OIDC_GRANT_TYPE_DEVICE_CODE] }) },
      'grantTypes[1]',
    ],
    ['an unknown auth method', { creationRequestType: oidc({ authMethodType: 99 }) }, 'authMethodType'],
    ['an unknown API auth method', { creationRequestType: { case: 'apiRequest', value: { authMethodType: 7 } } }, 'authMethodType'],
    ['a clock skew', { creationRequestType: oidc({ clockSkew: { seconds: 1n, nanos: 0 } }) }, 'clockSkew'],
    ['additional origins', { creationRequestType: oidc({ additionalOrigins: ['https://other.example'] }) }, 'additionalOrigins'],
    ['a back-channel logout URI', { creationRequestType: oidc({ backChannelLogoutUri: 'https://app.example/logout' }) }, 'backChannelLogoutUri'],
    ['101 redirect URIs', { creationRequestType: oidc({ redirectUris: Array.from({ length: 101 }, (_, i) => `https://app.example/${i}`) }) }, 'redirectUris'],
    ['a project id of 201 characters', { projectId: '1'.repeat(201) }, 'projectId'],
  ])('%s is InvalidArgument naming the field', async (_case, change, field) => {
    const refused = await failure(appsAs().createApplication({ projectId: MGMT.project, name: 'refused', creationRequestType: oidc({}), ...change } as never, admin()));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message.startsWith(`${field}:`)).toBe(true);
  });
});

describe('updating applications', () => {
  it('changes what the request names and keeps the rest (docs/management-api.md#services-and-calls)', async () => {
    const created = await createOidc('updatable', {
      postLogoutRedirectUris: ['https://app.example/bye'],
      grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN],
      accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_JWT,
    });
    const apps = appsAs();
    const before = (await apps.getApplication({ id: created.appId }, admin())).app!;
    const changed = await apps.updateApplication(
      {
        projectId: MGMT.project,
        id: created.appId,
        name: '',
        updateRequestType: { case: 'oidcConfigurationRequest', value: { devMode: true, redirectUris: [], grantTypes: [], idTokenRoleAssertion: true } },
      },
      admin(),
    );
    expect(changed.changeDate).toBeDefined();
    const after = (await apps.getApplication({ id: created.appId }, admin())).app!;
    expect(after.name).toBe('updatable');
    expect(after.config.value).toEqual({ ...before.config.value, devMode: true, idTokenRoleAssertion: true });

    await apps.updateApplication(
      {
        id: created.appId,
        name: 'updated',
        updateRequestType: { case: 'oidcConfigurationRequest', value: { redirectUris: ['http://app.example/cb'], accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_BEARER } },
      },
      admin(),
    );
    const renamed = (await apps.getApplication({ id: created.appId }, admin())).app!;
    expect(renamed.name).toBe('updated');
    expect(renamed.config.value).toMatchObject({ redirectUris: ['http://app.example/cb'], accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_BEARER, devMode: true });
    // Leaving dev mode with a plain-http redirect URI breaks the rule.
    const devModeOff = await failure(apps.updateApplication({ id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { devMode: false } } }, admin()));
    expect(devModeOff.code).toBe(Code.InvalidArgument);
    expect(devModeOff.message.startsWith('redirectUris[0]:')).toBe(true);
  });

  it('a method without a secret drops the secret; back to a secret method, a new one comes from RegenerateClientSecret', async () => {
    const created = await createOidc('switching');
    const apps = appsAs();
    expect((await introspectWithSecret(created.clientId, created.clientSecret)).status).toBe(200);
    await apps.updateApplication(
      { id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT } } },
      admin(),
    );
    const row = await server.running.gh.db.selectFrom('apps').select(['secret_hash', 'auth_method']).where('id', '=', created.appId).executeTakeFirstOrThrow();
    expect(row).toEqual({ secret_hash: null, auth_method: 'private_key_jwt' });
    expectInvalidClient(await introspectWithSecret(created.clientId, created.clientSecret));
    await apps.updateApplication(
      { id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC } } },
      admin(),
    );
    expectInvalidClient(await introspectWithSecret(created.clientId, created.clientSecret));
    const renewed = await apps.regenerateClientSecret({ applicationId: created.appId, appType: { case: 'isOidc', value: true } }, admin());
    expect((await introspectWithSecret(created.clientId, renewed.clientSecret)).status).toBe(200);
  });

  it('refuses settings of the other kind, clashing flows and a taken name', async () => {
    const created = await createOidc('flows');
    const api = await createApi('flows api', APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC);
    const apps = appsAs();
    const cases: Array<[Promise<unknown>, Code, string]> = [
      [apps.updateApplication({ id: created.appId, updateRequestType: { case: 'apiConfigurationRequest', value: {} } }, admin()), Code.InvalidArgument, 'apiConfigurationRequest'],
      [apps.updateApplication({ id: api.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: {} } }, admin()), Code.InvalidArgument, 'oidcConfigurationRequest'],
      [
        apps.updateApplication({ id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT] } } }, admin()),
        Code.InvalidArgument,
        'responseTypes[0]',
      ],
      [apps.updateApplication({ id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { clockSkew: { seconds: 0n, nanos: 5 } } } }, admin()), Code.InvalidArgument, 'clockSkew'],
      [apps.updateApplication({ id: created.appId, name: 'FLOWS API' }, admin()), Code.AlreadyExists, 'name'],
      [apps.updateApplication({ id: created.appId, projectId: MGMT.otherProject, name: 'moved' }, admin()), Code.NotFound, ''],
      [apps.regenerateClientSecret({ applicationId: api.appId, appType: { case: 'isOidc', value: true } }, admin()), Code.InvalidArgument, 'isOidc'],
    ];
    for (const [call, code, field] of cases) {
      const refused = await failure(call);
      expect([refused.code, refused.message.startsWith(`${field}:`) || field === '']).toEqual([code, true]);
    }
    // An API application changes its method; its secret goes with a method that has none.
    await apps.updateApplication({ id: api.appId, updateRequestType: { case: 'apiConfigurationRequest', value: { authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT } } }, admin());
    expectInvalidClient(await introspectWithSecret(api.clientId, api.clientSecret));
    const { app } = await apps.getApplication({ id: api.appId }, admin());
    expect(app?.config).toEqual({ case: 'apiConfig', value: expect.objectContaining({ clientId: api.clientId, authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT }) });
  });
});

describe('listing', () => {
  let project: { a: string; b: string; api: string };
  beforeAll(async () => {
    const a = await createOidc('list alpha');
    const b = await createOidc('list beta');
    const api = await createApi('list api', APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC);
    project = { a: a.appId, b: b.appId, api: api.appId };
  });
  const names = (applications: { name: string }[]) => applications.map((app) => app.name);
  const nameFilter = (name: string, method: TextFilterMethod) => ({ filter: { case: 'nameFilter' as const, value: { name, method } } });

  it('filters by name, kind and state, sorts, pages and counts', async () => {
    const apps = appsAs();
    const byName = await apps.listApplications(
      { projectId: MGMT.project, filters: [nameFilter('LIST ', TextFilterMethod.STARTS_WITH_IGNORE_CASE)], sortingColumn: AppSorting.APP_SORT_BY_NAME, pagination: { asc: true } },
      admin(),
    );
    expect(names(byName.applications)).toEqual(['list alpha', 'list api', 'list beta']);
    expect(byName.pagination).toMatchObject({ totalResult: 3n, appliedLimit: 100n });

    const page = await apps.listApplications(
      { projectId: MGMT.project, filters: [nameFilter('IST', TextFilterMethod.CONTAINS_IGNORE_CASE)], sortingColumn: AppSorting.APP_SORT_BY_CREATION_DATE, pagination: { offset: 1n, limit: 1, asc: false } },
      admin(),
    );
    expect(page.applications.map((app) => app.id)).toEqual([project.b]);
    expect(page.pagination).toMatchObject({ totalResult: 3n, appliedLimit: 1n });

    const apiOnly = await apps.listApplications({ projectId: MGMT.project, filters: [nameFilter('list', TextFilterMethod.STARTS_WITH), { filter: { case: 'apiAppOnly', value: true } }] }, admin());
    expect(apiOnly.applications.map((app) => [app.id, app.config.case])).toEqual([[project.api, 'apiConfig']]);
    const oidcOnly = await apps.listApplications({ projectId: MGMT.project, filters: [nameFilter('list', TextFilterMethod.STARTS_WITH), { filter: { case: 'oidcAppOnly', value: true } }] }, admin());
    expect(oidcOnly.applications.map((app) => app.id).sort()).toEqual([project.a, project.b].sort());
    for (const filter of [{ case: 'samlAppOnly' as const, value: true }, { case: 'stateFilter' as const, value: AppState.INACTIVE }]) {
      const none = await apps.listApplications({ projectId: MGMT.project, filters: [{ filter }] }, admin());
      expect([none.applications, none.pagination?.totalResult]).toEqual([[], 0n]);
    }
    const active = await apps.listApplications({ projectId: MGMT.project, filters: [{ filter: { case: 'stateFilter', value: AppState.ACTIVE } }] }, admin());
    expect(names(active.applications)).toEqual(expect.arrayContaining(['portal-api', 'list alpha']));
  });

  it('shows the applications of the bootstrap file', async () => {
    const listed = await appsAs().listApplications({ projectId: MGMT.project, filters: [nameFilter('portal-api', TextFilterMethod.EQUALS)] }, admin());
    expect(listed.applications).toHaveLength(1);
    expect(listed.applications[0]!.config).toEqual({ case: 'apiConfig', value: expect.objectContaining({ clientId: 'portal-api', authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC }) });
  });

  it('an ORG_OWNER sees its organizations\' applications only, and the total counts those', async () => {
    const apps = appsAs();
    const own = await apps.listApplications({ pagination: { limit: 1000 } }, withToken(tokens.orgAdmin));
    expect(own.applications.map((app) => app.id)).not.toContain(REMOTE_APP);
    expect(own.applications.map((app) => app.id)).toEqual(expect.arrayContaining([project.a, project.api]));
    expect(own.pagination?.totalResult).toBe(BigInt(own.applications.length));
    const all = await apps.listApplications({ pagination: { limit: 1000 } }, admin());
    expect(all.applications.map((app) => app.id)).toContain(REMOTE_APP);
    const other = await apps.listApplications({ projectId: MGMT.project }, withToken(tokens.otherAdmin));
    expect([other.applications, other.pagination?.totalResult]).toEqual([[], 0n]);
    expect((await failure(apps.listApplications({}, withToken(tokens.plain)))).code).toBe(Code.PermissionDenied);
  });

  it.each([
    ['a page larger than 1000', { pagination: { limit: 1001 } }, 'pagination.limit'],
    ['an unknown sorting column', { sortingColumn: 42 }, 'sortingColumn'],
    ['an unknown text method', { filters: [{ filter: { case: 'nameFilter', value: { name: 'x', method: 42 } } }] }, 'filters[0].nameFilter.method'],
  ])('%s is InvalidArgument naming the field', async (_case, query, field) => {
    const refused = await failure(appsAs().listApplications(query as never, admin()));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message.startsWith(`${field}:`)).toBe(true);
  });
});

describe('permissions', () => {
  it('an ORG_OWNER manages the applications of its own projects only', async () => {
    const mine = await createOidc('org owned', {}, 'orgAdmin');
    const apps = appsAs();
    const owner = withToken(tokens.orgAdmin);
    expect((await apps.getApplication({ id: mine.appId }, owner)).app?.name).toBe('org owned');
    await apps.updateApplication({ id: mine.appId, name: 'org owned too' }, owner);
    const key = await failure(apps.createApplicationKey({ appId: mine.appId }, owner));
    expect(key.code).toBe(Code.FailedPrecondition);
    const refusals: Array<Promise<unknown>> = [
      createOidc('intruder', {}, 'orgAdmin', MGMT.otherProject),
      apps.getApplication({ id: REMOTE_APP }, owner),
      apps.updateApplication({ id: REMOTE_APP, name: 'taken over' }, owner),
      apps.regenerateClientSecret({ applicationId: REMOTE_APP }, owner),
      apps.deleteApplication({ id: REMOTE_APP }, owner),
      apps.createApplicationKey({ appId: REMOTE_APP }, owner),
      apps.getApplication({ id: mine.appId }, withToken(tokens.otherAdmin)),
      apps.getApplication({ id: mine.appId }, withToken(tokens.plain)),
      apps.listApplicationKeys({}, withToken(tokens.plain)),
    ];
    for (const call of refusals) expect((await failure(call)).code).toBe(Code.PermissionDenied);
    expectInvalidClient(await introspectWithSecret('remote-api', 'wrong'));
    expect((await introspectWithSecret('remote-api', 'remote-api-secret')).status).toBe(200);
    await apps.deleteApplication({ id: mine.appId, projectId: MGMT.project }, owner);
  });

  it('a missing application, project or key is NotFound for an IAM_OWNER and PermissionDenied for an ORG_OWNER, like a foreign one', async () => {
    const apps = appsAs();
    const missing = '999999999999999999';
    const calls = (token: { headers: { authorization: string } }) => [
      apps.getApplication({ id: missing }, token),
      apps.deleteApplication({ id: missing }, token),
      apps.regenerateClientSecret({ applicationId: missing }, token),
      appsAs().createApplication({ projectId: missing, name: 'orphan', creationRequestType: { case: 'apiRequest', value: {} } }, token),
      apps.deleteApplicationKey({ id: missing }, token),
    ];
    for (const call of calls(admin())) expect((await failure(call)).code).toBe(Code.NotFound);
    for (const call of calls(withToken(tokens.orgAdmin))) expect((await failure(call)).code).toBe(Code.PermissionDenied);
    const foreign = await failure(apps.getApplication({ id: REMOTE_APP }, withToken(tokens.orgAdmin)));
    const absent = await failure(apps.getApplication({ id: missing }, withToken(tokens.orgAdmin)));
    expect(foreign.message).toBe(absent.message);
  });

  it('keys: listed for the organizations the caller manages; expired dates refused; foreign keys not deleted', async () => {
    const api = await createApi('keys api', APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT);
    const apps = appsAs();
    const expiring = new Date(Date.now() + 86_400_000);
    const key = await apps.createApplicationKey({ appId: api.appId, projectId: MGMT.project, expirationDate: timestampFromDate(expiring) }, withToken(tokens.orgAdmin));
    const listed = await apps.listApplicationKeys({ resourceId: { case: 'projectId', value: MGMT.project } }, withToken(tokens.orgAdmin));
    expect(listed.keys.find((k) => k.id === key.id)?.expirationDate?.seconds).toBe(BigInt(Math.floor(expiring.getTime() / 1000)));
    const foreign = await apps.listApplicationKeys({ resourceId: { case: 'organizationId', value: MGMT.org } }, withToken(tokens.otherAdmin));
    expect([foreign.keys, foreign.pagination?.totalResult]).toEqual([[], 0n]);
    expect((await failure(apps.deleteApplicationKey({ id: key.id }, withToken(tokens.otherAdmin)))).code).toBe(Code.PermissionDenied);
    expect((await failure(apps.deleteApplicationKey({ id: key.id, applicationId: 'another' }, admin()))).code).toBe(Code.NotFound);
    const past = await failure(apps.createApplicationKey({ appId: api.appId, expirationDate: timestampFromDate(new Date(Date.now() - 1000)) }, admin()));
    expect([past.code, past.message.startsWith('expirationDate:')]).toEqual([Code.InvalidArgument, true]);
    await apps.deleteApplication({ id: api.appId }, admin());
    expect((await failure(apps.deleteApplicationKey({ id: key.id }, admin()))).code).toBe(Code.NotFound);
  });
});

describe('REST', () => {
  it('creates, reads, updates, lists, renews the secret of and deletes an application on the proto paths', async () => {
    const token = tokens.iamAdmin;
    const created = await rest(server, 'POST', '/v2beta/applications', token, {
      projectId: MGMT.project,
      name: 'rest web',
      oidcRequest: {
        redirectUris: [CALLBACK],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST',
        accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
      },
    });
    expect(created.status).toBe(200);
    const appId = String(created.json['appId']);
    const { clientId, clientSecret } = created.json['oidcResponse'] as { clientId: string; clientSecret: string };
    expect(clientId).toBe(`${appId}@portal`);

    const got = await rest(server, 'GET', `/v2beta/applications/${appId}`, token);
    expect(got.status).toBe(200);
    expect(got.json['app']).toMatchObject({
      id: appId,
      name: 'rest web',
      state: 'APP_STATE_ACTIVE',
      oidcConfig: { clientId, redirectUris: [CALLBACK], authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST', accessTokenType: 'OIDC_TOKEN_TYPE_JWT' },
    });

    const patched = await rest(server, 'PATCH', `/v2beta/applications/${appId}`, token, { projectId: MGMT.project, name: 'rest web 2', oidcConfigurationRequest: { devMode: true } });
    expect(patched.status).toBe(200);
    expect(patched.json['changeDate']).toEqual(expect.any(String));

    const searched = await rest(server, 'POST', '/v2beta/applications/search', token, {
      projectId: MGMT.project,
      filters: [{ nameFilter: { name: 'rest web 2', method: 'TEXT_FILTER_METHOD_EQUALS' } }],
    });
    expect(searched.status).toBe(200);
    expect(searched.json).toMatchObject({ applications: [{ id: appId, oidcConfig: { devMode: true } }], pagination: { totalResult: '1', appliedLimit: '100' } });

    const renewed = await rest(server, 'POST', `/v2beta/applications/${appId}/generate_client_secret`, token, { projectId: MGMT.project, isOidc: true });
    expect(renewed.status).toBe(200);
    const newSecret = String(renewed.json['clientSecret']);
    // client_secret_post at the token endpoint: the old secret is invalid_client, the new one authenticates.
    const refresh = (secret: string) =>
      postForm(`${server.url}/oauth/v2/token`, { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: clientId, client_secret: secret });
    expectInvalidClient(await refresh(clientSecret));
    expect((await refresh(newSecret)).json['error']).toBe('unauthorized_client');

    const deleted = await rest(server, 'DELETE', `/v2beta/applications/${appId}?projectId=${MGMT.project}`, token);
    expect(deleted.status).toBe(200);
    expect(deleted.json['deletionDate']).toEqual(expect.any(String));
    expectInvalidClient(await refresh(newSecret));
    const gone = await rest(server, 'GET', `/v2beta/applications/${appId}`, token);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({ code: 5, details: [expect.objectContaining({ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail', id: 'APP-NotFound' })] });
  });

  it('creates, lists and deletes application keys', async () => {
    const token = tokens.iamAdmin;
    const app = await rest(server, 'POST', '/v2beta/applications', token, { projectId: MGMT.project, name: 'rest keyed', apiRequest: { authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' } });
    const appId = String(app.json['appId']);
    const created = await rest(server, 'POST', '/v2beta/application_keys', token, { appId, projectId: MGMT.project, expirationDate: '2999-01-01T00:00:00Z' });
    expect(created.status).toBe(200);
    const file = JSON.parse(Buffer.from(String(created.json['keyDetails']), 'base64').toString('utf8')) as Record<string, string>;
    expect(file).toMatchObject({ type: 'application', keyId: created.json['id'], appId });
    expect((await introspectWithKey({ keyId: file['keyId']!, key: file['key']!, clientId: file['clientId']! })).status).toBe(200);
    const listed = await rest(server, 'POST', '/v2beta/application_keys/search', token, { applicationId: appId });
    expect(listed.json).toMatchObject({ keys: [{ id: created.json['id'], applicationId: appId, expirationDate: '2999-01-01T00:00:00Z' }], pagination: { totalResult: '1' } });
    expect(JSON.stringify(listed.json)).not.toContain('PRIVATE KEY');
    const deleted = await rest(server, 'DELETE', `/v2beta/application_keys/${String(created.json['id'])}?applicationId=${appId}`, token);
    expect(deleted.status).toBe(200);
    expectInvalidClient(await introspectWithKey({ keyId: file['keyId']!, key: file['key']!, clientId: file['clientId']! }));
  });

  it.each([
    ['a name of the wrong type', { projectId: MGMT.project, name: 5, apiRequest: {} }],
    ['an unknown enum name', { projectId: MGMT.project, name: 'bad enum', oidcRequest: { redirectUris: [CALLBACK], authMethodType: 'OIDC_AUTH_METHOD_TYPE_MAGIC' } }],
    ['a huge name', { projectId: MGMT.project, name: 'n'.repeat(100_000), apiRequest: {} }],
    ['a huge redirect URI', { projectId: MGMT.project, name: 'huge uri', oidcRequest: { redirectUris: [`https://app.example/${'u'.repeat(100_000)}`] } }],
    ['redirect URIs of the wrong type', { projectId: MGMT.project, name: 'wrong uris', oidcRequest: { redirectUris: 'https://app.example/cb' } }],
  ])('%s is a 4xx, never a 500', async (_case, body) => {
    const reply = await rest(server, 'POST', '/v2beta/applications', tokens.iamAdmin, body);
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
  });
});
