/**
 * Project roles and authorizations from the bootstrap file, and the role claims they put in tokens
 * (docs/management-api.md#roles): when each token asserts them, what the role scopes select, and
 * the project's sign-in checks (authorization required, project access required).
 */
import { decodeJwt } from 'jose';
import { stringify } from 'yaml';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { browserHash, newBrowserId, recordAuthentication } from '../../src/domain/sign-in/sessions.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';

const ORG = '110000000000000001';
const OTHER_ORG = '110000000000000002';
const ALICE = '210000000000000001';
const BOB = '210000000000000002';
const CAROL = '210000000000000003';
const SHOP = '510000000000000001';
const LOCKED = '510000000000000002';
const STRICT = '510000000000000003';
const CALLBACK = 'http://localhost:3000/callback';
const ROLES = 'urn:gatehouse:iam:org:project:roles';
const roleScope = (key: string) => `urn:gatehouse:iam:org:project:role:${key}`;
const projectRoles = (projectId: string) => `urn:gatehouse:iam:org:project:${projectId}:roles`;

const app = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  clientId: name,
  clientSecret: `${name}-secret`,
  authMethod: 'client_secret_basic',
  redirectUris: [CALLBACK],
  responseTypes: ['code'],
  grantTypes: ['authorization_code', 'refresh_token'],
  accessTokenType: 'jwt',
  ...extra,
});

const document = {
  orgs: [
    {
      id: ORG,
      name: 'Roles',
      domain: 'roles.test',
      users: [
        { id: ALICE, userName: 'alice', password: 'Correct-Horse-9', authorizations: [{ project: 'shop', roles: ['admin', 'viewer'] }] },
        { id: BOB, userName: 'bob', password: 'Correct-Horse-9' },
      ],
      projects: [
        {
          id: SHOP,
          name: 'shop',
          roles: [{ key: 'admin', displayName: 'Administrator', group: 'staff' }, { key: 'viewer' }, { key: 'auditor' }],
          apps: [
            app('asserting', { idTokenRoleAssertion: true, accessTokenRoleAssertion: true }),
            app('quiet'),
            { name: 'shop-api', clientId: 'shop-api', clientSecret: 'shop-api-secret', type: 'api', authMethod: 'client_secret_basic' },
          ],
        },
        {
          id: LOCKED,
          name: 'locked',
          roleAssertion: true,
          authorizationRequired: true,
          roles: [{ key: 'member' }],
          apps: [app('locked-web')],
        },
      ],
    },
    {
      id: OTHER_ORG,
      name: 'Others',
      domain: 'others.test',
      users: [{ id: CAROL, userName: 'carol', password: 'Correct-Horse-9' }],
      projects: [{ id: STRICT, name: 'strict', projectAccessRequired: true, apps: [app('strict-web')] }],
    },
  ],
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(document);
});
afterAll(() => server.stop());

async function tokensFor(clientId: string, userId: string, scopes: string[]): Promise<{ access_token: string; id_token: string }> {
  const issued = await signedInCode(server, { clientId, redirectUri: CALLBACK, scopes, userId });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, {
    authorization: basic(clientId, `${clientId}-secret`),
  });
  expect(reply.status).toBe(200);
  return reply.json as { access_token: string; id_token: string };
}

async function userinfo(accessToken: string): Promise<Record<string, unknown>> {
  const reply = await request(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  expect(reply.status).toBe(200);
  return reply.json as Record<string, unknown>;
}

async function introspect(token: string): Promise<Record<string, unknown>> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', 'shop-api-secret') });
  expect(reply.status).toBe(200);
  return reply.json as Record<string, unknown>;
}

const both = { admin: { [ORG]: 'roles.test' }, viewer: { [ORG]: 'roles.test' } };

describe('role claims', () => {
  it('a role scope puts the roles in userinfo, introspection, and the tokens of an application that asserts them', async () => {
    const tokens = await tokensFor('asserting', ALICE, ['openid', ROLES]);
    const idToken = decodeJwt(tokens.id_token);
    expect(idToken[ROLES]).toEqual(both);
    expect(idToken[projectRoles(SHOP)]).toEqual(both);
    expect(decodeJwt(tokens.access_token)[ROLES]).toEqual(both);
    expect((await userinfo(tokens.access_token))[ROLES]).toEqual(both);
    const introspection = await introspect(tokens.access_token);
    expect(introspection['active']).toBe(true);
    expect(introspection[projectRoles(SHOP)]).toEqual(both);
  });

  it('an application without role assertion keeps them out of its tokens, not out of userinfo', async () => {
    const tokens = await tokensFor('quiet', ALICE, ['openid', ROLES]);
    expect(decodeJwt(tokens.id_token)[ROLES]).toBeUndefined();
    expect(decodeJwt(tokens.access_token)[ROLES]).toBeUndefined();
    expect((await userinfo(tokens.access_token))[ROLES]).toEqual(both);
  });

  it('without a role scope and without project role assertion there are none', async () => {
    const tokens = await tokensFor('asserting', ALICE, ['openid']);
    expect(decodeJwt(tokens.id_token)[ROLES]).toBeUndefined();
    expect(decodeJwt(tokens.access_token)[ROLES]).toBeUndefined();
    expect((await userinfo(tokens.access_token))[ROLES]).toBeUndefined();
  });

  it('a role:{key} scope asks for that role only', async () => {
    const tokens = await tokensFor('asserting', ALICE, ['openid', roleScope('viewer')]);
    expect(decodeJwt(tokens.id_token)[ROLES]).toEqual({ viewer: { [ORG]: 'roles.test' } });
    const none = await tokensFor('asserting', ALICE, ['openid', roleScope('auditor')]);
    expect(decodeJwt(none.id_token)[ROLES]).toBeUndefined();
  });

  it('a user without roles gets no role claim', async () => {
    const tokens = await tokensFor('asserting', BOB, ['openid', ROLES]);
    expect(decodeJwt(tokens.id_token)[ROLES]).toBeUndefined();
    expect(Object.keys(await userinfo(tokens.access_token)).filter((claim) => claim.startsWith('urn:'))).toEqual([]);
  });
});

describe("a project's sign-in checks", () => {
  async function authorize(clientId: string, userId: string): Promise<URLSearchParams> {
    const cookie = newBrowserId(server.running.gh.masterKey);
    await recordAuthentication(server.running.gh.db, { instanceId: server.running.gh.instanceId, browser: browserHash(cookie), userId, amr: ['pwd'] });
    const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 'st' });
    const response = await fetch(`${server.url}/oauth/v2/authorize?${query.toString()}`, { redirect: 'manual', headers: { cookie: `gh_browser=${cookie}` } });
    expect(response.status).toBe(303);
    return new URL(response.headers.get('location')!).searchParams;
  }

  it('authorization required: a user without any of the project\'s roles is refused with access_denied', async () => {
    const answer = await authorize('locked-web', BOB);
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('state')).toBe('st');
    expect(answer.get('code')).toBeNull();
  });

  it('project access required: a user of another organization is refused, one of the project\'s organization is not', async () => {
    expect((await authorize('strict-web', ALICE)).get('error')).toBe('access_denied');
    expect((await authorize('strict-web', CAROL)).get('code')).not.toBeNull();
  });
});

describe('the bootstrap file and the roles', () => {
  it('re-applying the same file changes nothing', async () => {
    const summary = await applyBootstrap(server.running.gh.db, parseBootstrap(stringify(document), 'again.yaml'));
    expect(summary.created).toBe(0);
    expect(summary.updated).toBe(0);
    expect(summary.byKind.authorization.unchanged).toBe(1);
  });

  it('refuses an authorization naming a role the project does not define', async () => {
    const broken = structuredClone(document);
    broken.orgs[0]!.users[1] = { id: BOB, userName: 'bob', password: 'Correct-Horse-9', authorizations: [{ project: 'shop', roles: ['owner'] }] };
    await expect(applyBootstrap(server.running.gh.db, parseBootstrap(stringify(broken), 'broken.yaml'))).rejects.toThrow(/defines no role "owner"/);
  });

  it('refuses a role key with spaces and a role defined twice', async () => {
    const broken = structuredClone(document);
    (broken.orgs[0]!.projects[0] as Record<string, unknown>)['roles'] = [{ key: 'two words' }, { key: 'viewer' }, { key: 'viewer' }];
    expect(() => parseBootstrap(stringify(broken), 'broken.yaml')).toThrow(/without spaces[\s\S]*defined twice|defined twice[\s\S]*without spaces/);
  });
});
