/**
 * The second outside review's attacks of one organization on another (docs/security.md
 * 10.16, 10.18, 10.20, 10.24), replayed against the real server as the review made them: Beta's
 * owner frank and ACME's owner alice with tokens from the token endpoint, REST as the review's
 * client spoke it, gRPC and Connect where the call has no REST path or the protocol is the point.
 * Each describe keeps the review's finding id in a comment. Every test of an attack failed on the
 * code before its fix; the tests that say "still" hold the positive side, and passed before too.
 */
import { Code, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { ProjectService } from '@zitadel/proto/zitadel/project/v2beta/project_service_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { decodeJwt } from 'jose';
import { stringify } from 'yaml';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { testKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { postForm } from '../support/http.ts';
import { failure, rest, transports, withToken } from '../support/management.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_TYPE } from '../support/token-exchange.ts';
import {
  ACME,
  ALICE,
  BETA,
  CALLBACK,
  CRM,
  CRM_WEB,
  exchange,
  FRANK,
  GUSTAV,
  human,
  introspect,
  machineToken,
  PASSWORD,
  REPORTER,
  reviewDocument,
  ROLES_SCOPE,
  SHOP,
  signIn,
  userApiToken,
  userinfo,
  WEB,
  WORKER,
} from './review-instance.ts';

/** ACME users of this suite besides alice and dave. */
const USERS = {
  bob: '200000000000000002',
  carol: '200000000000000003',
  orgImpersonator: '200000000000000012',
  /** Holds shop-admin in ACME's project shop (the review's fsixuser). */
  shopAdmin: '200000000000000018',
  /** Made an admin of Gamma by AddOrganization (the review's 200000000000000025). */
  gammaOwner: '200000000000000025',
  deltaOwner: '200000000000000026',
  epsilonOwner: '200000000000000027',
  /** ACME machine users with a key each; the first is made an admin of Eta. */
  etaBot: '300000000000000011',
  acmeBot: '300000000000000012',
  /** Beta users besides frank and gustav. */
  hilda: '200000000000000033',
  ida: '200000000000000034',
  jakob: '200000000000000035',
} as const;

/** Made once: the file re-applied later must name the same keys. */
const KEYS = { eta: testKey('400000000000000011'), acme: testKey('400000000000000012') };

const document = (): Record<string, unknown> =>
  reviewDocument({
    acmeUsers: [
      human(USERS.bob, 'bob', 'acme.test', { emailVerified: false }),
      human(USERS.carol, 'carol', 'acme.test'),
      human(USERS.orgImpersonator, 'org-imp', 'acme.test', { roles: ['ORG_ADMIN_IMPERSONATOR'] }),
      human(USERS.shopAdmin, 'fsixuser', 'acme.test', { authorizations: [{ project: 'shop', roles: ['shop-admin'] }] }),
      human(USERS.gammaOwner, 'gamma-owner', 'acme.test'),
      human(USERS.deltaOwner, 'delta-owner', 'acme.test'),
      human(USERS.epsilonOwner, 'epsilon-owner', 'acme.test'),
    ],
    acmeMachines: [
      { id: USERS.etaBot, userName: 'eta-bot', accessTokenType: 'jwt', publicKeys: [{ keyId: KEYS.eta.id, pem: KEYS.eta.publicPem }] },
      { id: USERS.acmeBot, userName: 'acme-bot', accessTokenType: 'jwt', publicKeys: [{ keyId: KEYS.acme.id, pem: KEYS.acme.publicPem }] },
    ],
    betaUsers: [human(USERS.hilda, 'hilda', 'beta.test'), human(USERS.ida, 'ida', 'beta.test'), human(USERS.jakob, 'jakob', 'beta.test')],
    // an application whose client id has the generated shape {appId}@{project}
    acmeShopApps: [{ name: 'reports', clientId: 'reports@shop', clientSecret: 'reports-secret', type: 'api', authMethod: 'client_secret_basic' }],
  });

let server: TestServer;
/** API tokens of alice (ACME's ORG_OWNER, at `web`), frank (Beta's ORG_OWNER, at `crm-web`) and the IAM_OWNER machine. */
let alice: string;
let frank: string;
let iam: string;

beforeAll(async () => {
  server = await startTestServer(document());
  const reporter = await machineToken(server, REPORTER);
  [alice, frank] = await Promise.all([userApiToken(server, ALICE), userApiToken(server, FRANK, CRM_WEB)]);
  iam = String(reporter.json['access_token']);
});
afterAll(() => server.stop());

/** Projects frank made in Beta, by name, made once whichever test asks first. */
const betaProjects = new Map<string, Promise<string>>();
function betaProject(name: string): Promise<string> {
  let id = betaProjects.get(name);
  if (id === undefined) {
    id = rest(server, 'POST', '/v2beta/projects', frank, { organizationId: BETA, name, projectRoleAssertion: true }).then((reply) => {
      if (reply.status !== 200) throw new Error(`project ${name}: ${reply.status} ${JSON.stringify(reply.json)}`);
      return String(reply.json['id']);
    });
    betaProjects.set(name, id);
  }
  return id;
}

const oidcRequest = {
  redirectUris: ['http://localhost:6666/cb'],
  responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
  grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
  authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
  accessTokenRoleAssertion: true,
};

/** The one answer to a taken id of a project or an application. */
const ID_TAKEN = { code: Code.AlreadyExists, message: 'id: the id is taken' };

/** Every key of a JSON answer, nested, without the values: the shape a caller sees. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value !== 'object' || value === null) return typeof value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shapeOf(inner)]).sort(([a], [b]) => String(a).localeCompare(String(b))));
}

async function emailOf(userId: string): Promise<{ email: string | null; email_verified: boolean }> {
  return server.running.gh.db.selectFrom('users').select(['email', 'email_verified']).where('id', '=', userId).executeTakeFirstOrThrow();
}

// F15
describe('one namespace for audiences', () => {
  it("a Beta application cannot take ACME's project id as its id: the answer is the same whatever holds the value", async () => {
    const bang = await betaProject('!!!');
    const evil = (id: string) => rest(server, 'POST', '/v2beta/applications', frank, { projectId: bang, id, name: 'evil', oidcRequest });
    const byProject = await evil(SHOP);
    expect(byProject.status).toBe(409);
    expect(byProject.json).toMatchObject(ID_TAKEN);
    // an ACME client id in another letter case, Beta's own project, a user id: one answer
    for (const holder of ['WEB', 'Shop-Api', CRM, ALICE]) {
      const reply = await evil(holder);
      expect([holder, reply.status]).toEqual([holder, 409]);
      expect(reply.json).toEqual(byProject.json);
    }
    const listed = await rest(server, 'POST', '/v2beta/applications/search', frank, { projectId: bang });
    expect((listed.json['applications'] as unknown[] | undefined) ?? []).toEqual([]);
    // ACME's resource server still takes only ACME's tokens: a Beta user's token at crm-web is not active there
    const gustav = await signIn(server, GUSTAV, CRM_WEB, ['openid']);
    expect(await introspect(server, gustav.accessToken)).toEqual({ active: false });
  });

  it("a Beta project cannot take ACME's API client id as its id, in any letter case", async () => {
    for (const id of ['shop-api', 'SHOP-API', 'Shop-Api', 'web', 'worker', CRM]) {
      const reply = await rest(server, 'POST', '/v2beta/projects', frank, { organizationId: BETA, id, name: 'shopapi-clone' });
      expect([id, reply.status]).toEqual([id, 409]);
      expect(reply.json).toMatchObject(ID_TAKEN);
    }
    const listed = await rest(server, 'POST', '/v2beta/projects/search', frank, {});
    expect((listed.json['projects'] as Array<{ name: string }>).map((p) => p.name)).not.toContain('shopapi-clone');
  });

  it.each(transports(() => server))('a taken project id is AlreadyExists over %s', async (_name, transport) => {
    const projects = createClient(ProjectService, transport());
    const refused = await failure(projects.createProject({ organizationId: BETA, id: 'SHOP-API', name: 'shopapi-clone' }, withToken(frank)));
    expect(refused).toEqual(ID_TAKEN);
  });

  it('a client id made of the application id and the project name is checked too, case-insensitively', async () => {
    // Beta's project "Shop" gives the client id REPORTS@shop: ACME's reports@shop in other letters
    const shop = await betaProject('Shop');
    const reply = await rest(server, 'POST', '/v2beta/applications', frank, { projectId: shop, id: 'REPORTS', name: 'reports clone', apiRequest: { authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } });
    expect(reply.status).toBe(409);
    expect(reply.json).toMatchObject(ID_TAKEN);
    const free = await rest(server, 'POST', '/v2beta/applications', frank, { projectId: shop, id: 'beta-reports', name: 'beta reports', apiRequest: { authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } });
    expect(free.status).toBe(200);
    expect(free.json['apiResponse']).toMatchObject({ clientId: 'beta-reports@shop' });
  });

  it("a project id in aud counts only for tokens of that project's organization (an application that predates the namespace)", async () => {
    // A Beta application whose client id is ACME's project id, as the review made it, written to the
    // database directly: data from before the namespace existed, which the migration could not part.
    const { db, instanceId, directory } = server.running.gh;
    const now = new Date();
    await db
      .insertInto('apps')
      .values({
        id: '913754446965178516', instance_id: instanceId, org_id: BETA, project_id: CRM, name: 'evil from before', client_id: SHOP, secret_hash: null,
        auth_method: 'none', redirect_uris: [CALLBACK], post_logout_redirect_uris: [], response_types: ['code'], grant_types: ['authorization_code'],
        access_token_type: 'jwt', access_token_role_assertion: true, created_at: now, changed_at: now,
      })
      .execute();
    directory.clear();
    // an ACME user with shop-admin signs in at it; Beta redeems the code
    const issued = await signedInCode(server, { clientId: SHOP, redirectUri: CALLBACK, scopes: ['openid', ROLES_SCOPE], userId: USERS.shopAdmin, pkce: true });
    const redeemed = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK, client_id: SHOP, code_verifier: issued.verifier! });
    expect(redeemed.status).toBe(200);
    const token = String(redeemed.json['access_token']);
    const claims = decodeJwt(token);
    expect(claims.aud).toEqual([SHOP, CRM]);
    expect(claims[`urn:gatehouse:iam:org:project:${SHOP}:roles`]).toBeUndefined();
    // ACME's resource server does not take it as its own, and ACME's client cannot exchange it
    expect(await introspect(server, token)).toEqual({ active: false });
    const exchanged = await exchange(server, WEB, { subject_token: token, subject_token_type: TOKEN_TYPE.access, scope: 'openid' });
    expect(exchanged.status).toBe(400);
    expect(exchanged.json).toEqual({ error: 'invalid_request', error_description: 'subject_token is invalid, expired, revoked or not meant for this client' });
    const info = await userinfo(server, token);
    expect(info.status).toBe(200);
    expect(Object.keys(info.json).filter((claim) => claim.includes(':roles'))).toEqual([]);
    // the same user's token of ACME's own client still carries the role and is ACME's
    const own = await signIn(server, USERS.shopAdmin, WEB, ['openid', ROLES_SCOPE]);
    expect(await introspect(server, own.accessToken)).toMatchObject({ active: true, [`urn:gatehouse:iam:org:project:${SHOP}:roles`]: { 'shop-admin': { [ACME]: 'acme.test' } } });
  });

  it('the bootstrap file re-applies as it is; a file giving a Beta project the id of an ACME client is refused', async () => {
    const { db } = server.running.gh;
    const again = await applyBootstrap(db, parseBootstrap(stringify(document()), 'again.yaml'));
    expect([again.created, again.byKind.project.created, again.byKind.app.created, again.byKind.machine.created]).toEqual([0, 0, 0, 0]);
    const taking = document() as { orgs: Array<{ projects: unknown[] }> };
    taking.orgs[1]!.projects.push({ id: 'SHOP-API', name: 'shopapi-clone' });
    await expect(applyBootstrap(db, parseBootstrap(stringify(taking), 'taking.yaml'))).rejects.toThrow('"SHOP-API" is taken');
    const cloned = await db.selectFrom('projects').select('id').where('name', '=', 'shopapi-clone').execute();
    expect(cloned).toEqual([]);
  });
});

// F18
describe('machine user names share the namespace of client ids', () => {
  it("a Beta application named like ACME's machine user is refused, and the machine keeps client_credentials", async () => {
    expect((await machineToken(server, WORKER, 'openid')).status).toBe(200);
    const bang = await betaProject('!!!');
    for (const id of ['worker', 'WORKER']) {
      const reply = await rest(server, 'POST', '/v2beta/applications', frank, { projectId: bang, id, name: `w ${id}`, apiRequest: { authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' } });
      expect([id, reply.status]).toEqual([id, 409]);
      expect(reply.json).toMatchObject(ID_TAKEN);
    }
    const after = await machineToken(server, WORKER, 'openid');
    expect(after.status).toBe(200);
    expect(decodeJwt(String(after.json['access_token']))).toMatchObject({ sub: WORKER.id, client_id: 'worker' });
  });

  it('a machine user cannot take a client id or a project id as its name (gRPC)', async () => {
    const users = createClient(UserService, createGrpcTransport({ baseUrl: server.url }));
    const taken = { code: Code.AlreadyExists, message: 'username: the user name is taken in the instance (client_credentials names a machine by its user name alone)' };
    for (const username of ['crm-web', 'Web', CRM, 'SHOP-API']) {
      const refused = await failure(users.createUser({ organizationId: ACME, username, userType: { case: 'machine', value: { name: 'Clone' } } }, withToken(alice)));
      expect([username, refused]).toEqual([username, taken]);
    }
    const free = await users.createUser({ organizationId: ACME, username: 'acme-batch', userType: { case: 'machine', value: { name: 'Batch' } } }, withToken(alice));
    expect(free.id).toMatch(/^\d+$/);
  });
});

// F24 (a), I16
describe('ids are never given again', () => {
  const reused = '777000000000000001';
  const newcomer = (org: string, userId: string) => ({
    userId,
    username: 'newcomer',
    organization: { orgId: org },
    profile: { givenName: 'New', familyName: 'Comer' },
    email: { email: `newcomer@${org === ACME ? 'acme' : 'beta'}.test`, isVerified: true },
    password: { password: PASSWORD },
  });

  it("a deleted user's id is not given to another organization's user, and the deleted user's JWTs stay dead", async () => {
    expect((await rest(server, 'POST', '/v2/users/human', alice, newcomer(ACME, reused))).status).toBe(200);
    const jwt = await userApiToken(server, reused);
    expect((await userinfo(server, jwt)).status).toBe(200);
    expect((await rest(server, 'DELETE', `/v2/users/${reused}`, alice)).status).toBe(200);
    expect((await userinfo(server, jwt)).status).toBe(401);

    const taken = await rest(server, 'POST', '/v2/users/human', frank, newcomer(BETA, reused));
    expect(taken.status).toBe(409);
    expect(taken.json).toMatchObject({ code: Code.AlreadyExists, message: 'userId: the id is taken' });
    // its own organization cannot have it back either; a living user's id, a machine name, a client id: one answer
    expect((await rest(server, 'POST', '/v2/users/human', alice, newcomer(ACME, reused))).json).toEqual(taken.json);
    for (const holder of [ALICE, 'worker', 'SHOP-API']) {
      const reply = await rest(server, 'POST', '/v2/users/human', frank, newcomer(BETA, holder));
      expect([holder, reply.status]).toEqual([holder, 409]);
      expect(reply.json).toEqual(taken.json);
    }

    expect((await userinfo(server, jwt)).status).toBe(401);
    expect((await rest(server, 'GET', `/v2/users/${reused}`, jwt)).status).toBe(401);
    expect(await introspect(server, jwt)).toEqual({ active: false });
  });

  it('a token issued before its subject existed is refused (an id freed behind the namespace, as a restored old database could)', async () => {
    const freed = '777000000000000002';
    expect((await rest(server, 'POST', '/v2/users/human', alice, newcomer(ACME, freed))).status).toBe(200);
    const jwt = await userApiToken(server, freed);
    expect((await rest(server, 'DELETE', `/v2/users/${freed}`, alice)).status).toBe(200);
    await server.running.gh.db.deleteFrom('identifiers').where('key', '=', freed).execute();
    // `iat` counts in seconds: the new user is created in a later second than the old token
    await new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() % 1000)));
    const created = await rest(server, 'POST', '/v2/users/human', frank, newcomer(BETA, freed));
    expect(created.status).toBe(200);
    expect((await userinfo(server, jwt)).status).toBe(401);
    expect((await rest(server, 'GET', `/v2/users/${freed}`, jwt)).status).toBe(401);
    expect(await introspect(server, jwt)).toEqual({ active: false });
    // the new user's own tokens work
    const own = await signIn(server, freed, CRM_WEB, ['openid', 'email']);
    expect((await userinfo(server, own.accessToken)).json).toMatchObject({ sub: freed, email: 'newcomer@beta.test' });
  });

  it("a deleted application's id and client id are not given again, to its organization or another", async () => {
    const created = await rest(server, 'POST', '/v2beta/applications', alice, { projectId: SHOP, id: 'retired', name: 'retired', oidcRequest });
    expect(created.status).toBe(200);
    expect(created.json['oidcResponse']).toMatchObject({ clientId: 'retired@shop' });
    expect((await rest(server, 'DELETE', `/v2beta/applications/retired?projectId=${SHOP}`, alice)).status).toBe(200);
    const again = await rest(server, 'POST', '/v2beta/applications', alice, { projectId: SHOP, id: 'retired', name: 'retired again', oidcRequest });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject(ID_TAKEN);
    // Beta's project "Shop" would derive retired@shop again from another application id in other letters
    const shop = await betaProject('Shop');
    const beta = await rest(server, 'POST', '/v2beta/applications', frank, { projectId: shop, id: 'RETIRED', name: 'retired clone', oidcRequest });
    expect(beta.status).toBe(409);
    expect(beta.json).toEqual(again.json);
  });
});

// F17
describe('administrative boundaries across organizations', () => {
  async function addOrganization(name: string, admins: string[]): Promise<string> {
    const reply = await rest(server, 'POST', '/v2/organizations', iam, { name, admins: admins.map((userId) => ({ userId })) });
    expect(reply.status).toBe(200);
    return String(reply.json['organizationId']);
  }

  const passwordHash = async (userId: string) =>
    (await server.running.gh.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow()).password_hash;

  it('an ORG_OWNER cannot reset the password of, vouch for, or list a user of its organization who owns another organization', async () => {
    await addOrganization('Gamma', [USERS.gammaOwner]);
    const before = await passwordHash(USERS.gammaOwner);
    const reset = await rest(server, 'POST', `/v2/users/${USERS.gammaOwner}/password`, alice, { newPassword: { password: 'Alice-Owns-You-1!' } });
    expect(reset.status).toBe(403);
    expect(reset.json).toMatchObject({ code: Code.PermissionDenied });
    // the answer for another organization's user: nothing tells them apart
    expect((await rest(server, 'POST', `/v2/users/${GUSTAV}/password`, alice, { newPassword: { password: 'Alice-Owns-You-1!' } })).json).toEqual(reset.json);
    // nor any other way in or out: a reset code returned, a password or email through UpdateHumanUser,
    // an authenticator app, the lifecycle, the v3alpha contact email
    for (const [method, path, body] of [
      ['POST', '/email', { email: 'mallory@evil.test', isVerified: true }],
      ['POST', '/password_reset', { returnCode: {} }],
      ['POST', '/totp', {}],
      ['POST', '/deactivate', {}],
      ['POST', '/lock', {}],
      ['DELETE', '', undefined],
      ['GET', '', undefined],
    ] as const) {
      const reply = await rest(server, method, `/v2/users/${USERS.gammaOwner}${path}`, alice, body);
      expect([method, path, reply.status, reply.json]).toEqual([method, path, 403, reset.json]);
    }
    const update = await rest(server, 'PUT', `/v2/users/human/${USERS.gammaOwner}`, alice, { password: { password: { password: 'Alice-Owns-You-1!' } } });
    expect([update.status, update.json]).toEqual([403, reset.json]);
    const contact = await rest(server, 'PUT', `/v3alpha/users/${USERS.gammaOwner}/email`, alice, { email: { address: 'mallory@evil.test', isVerified: true } });
    expect(contact.status).toBe(403);
    expect(await passwordHash(USERS.gammaOwner)).toBe(before);
    expect(await emailOf(USERS.gammaOwner)).toEqual({ email: 'gamma-owner@acme.test', email_verified: true });

    const listed = await rest(server, 'POST', '/v2/users', alice, {});
    expect(listed.status).toBe(200);
    const ids = (listed.json['result'] as Array<{ userId: string }>).map((user) => user.userId);
    expect(ids).toContain(USERS.carol);
    expect(ids).not.toContain(USERS.gammaOwner);
    // the instance owner still manages it
    expect((await rest(server, 'POST', `/v2/users/${USERS.gammaOwner}/password`, iam, { newPassword: { password: 'Iam-Resets-You-1!' } })).status).toBe(200);
  });

  it("an ORG_OWNER's machine key list leaves out a machine user of its organization who owns another organization, and it gets no secret (Connect)", async () => {
    const users = createClient(UserService, transports(() => server)[2]![1]());
    const owners = async () => (await users.listKeys({}, withToken(alice))).result.map((key) => key.userId);
    expect(await owners()).toEqual(expect.arrayContaining([USERS.etaBot, USERS.acmeBot]));
    await addOrganization('Eta', [USERS.etaBot]);
    // a secret of its own would make alice the machine, and the machine Eta's owner
    expect(await failure(users.addSecret({ userId: USERS.etaBot }, withToken(alice)))).toEqual({ code: Code.PermissionDenied, message: 'no permission' });
    const listed = await owners();
    expect(listed).toContain(USERS.acmeBot);
    expect(listed).not.toContain(USERS.etaBot);
    expect((await users.listKeys({}, withToken(iam))).result.map((key) => key.userId)).toContain(USERS.etaBot);
  });

  it('an ORG_OWNER still manages its users with no role elsewhere, and a user of two organizations it owns both of', async () => {
    expect((await rest(server, 'POST', `/v2/users/${USERS.carol}/password`, alice, { newPassword: { password: 'Carol-New-Pass-1!' } })).status).toBe(200);
    await addOrganization('Epsilon', [USERS.epsilonOwner, ALICE]);
    expect((await rest(server, 'POST', `/v2/users/${USERS.epsilonOwner}/password`, alice, { newPassword: { password: 'Alice-Owns-Both-1!' } })).status).toBe(200);
  });

  it('an ORG_ADMIN_IMPERSONATOR cannot act as a user of its organization who owns another organization', async () => {
    await addOrganization('Delta', [USERS.deltaOwner]);
    const actor = await signIn(server, USERS.orgImpersonator, WEB, ['openid']);
    const impersonate = (subject: string) =>
      exchange(server, WEB, { subject_token: subject, subject_token_type: TOKEN_TYPE.userId, actor_token: actor.accessToken, actor_token_type: TOKEN_TYPE.access, scope: 'openid' });
    const refused = await impersonate(USERS.deltaOwner);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: 'invalid_request', error_description: 'the actor may not impersonate this subject' });
    const allowed = await impersonate(USERS.carol);
    expect(allowed.status).toBe(200);
    expect(await introspect(server, String(allowed.json['access_token']), WEB)).toMatchObject({ active: true, sub: USERS.carol, act: { sub: USERS.orgImpersonator } });
  });
});

// F20
describe('vouching for an address', () => {
  const twinOf = (username: string, email: string) => ({
    username,
    organization: { orgId: BETA },
    profile: { givenName: 'Alice', familyName: 'Test' },
    email: { email, isVerified: true },
    password: { password: 'Twin-Pass-123!' },
  });

  it("a Beta owner vouching for ACME alice's address gets a vouch's answer; the address stays unverified and a code is mailed", async () => {
    const twin = await rest(server, 'POST', '/v2/users/human', frank, twinOf('twin', 'alice@acme.test'));
    const real = await rest(server, 'POST', '/v2/users/human', frank, twinOf('twin-real', 'twin-real@beta.test'));
    expect([twin.status, real.status]).toEqual([200, 200]);
    expect(shapeOf(twin.json)).toEqual(shapeOf(real.json));
    expect(twin.json['emailCode']).toBeUndefined();
    const twinId = String(twin.json['userId']);
    const got = await rest(server, 'GET', `/v2/users/${twinId}`, frank);
    expect(got.status).toBe(200);
    const email = (got.json['user'] as { human: { email: { email: string; isVerified?: boolean } } }).human.email;
    expect([email.email, email.isVerified ?? false]).toEqual(['alice@acme.test', false]);
    const realEmail = (await rest(server, 'GET', `/v2/users/${String(real.json['userId'])}`, frank)).json['user'] as { human: { email: { isVerified?: boolean } } };
    expect(realEmail.human.email.isVerified).toBe(true);

    // ACME's own client hears email_verified false for the Beta user
    const signedIn = await signIn(server, twinId, WEB, ['openid', 'email']);
    const info = await userinfo(server, signedIn.accessToken);
    expect(info.json).toMatchObject({ sub: twinId, email: 'alice@acme.test', email_verified: false });
    const mailed = await server.running.gh.db.selectFrom('outbox').select('recipient').where('user_id', '=', twinId).execute();
    expect(mailed).toEqual([{ recipient: 'alice@acme.test' }]);
  });

  it("an address another organization's user holds unverified counts too, through SetEmail (v2, v3alpha), UpdateHumanUser and CreateUser, in any letter case", async () => {
    const v2 = await rest(server, 'POST', `/v2/users/${GUSTAV}/email`, frank, { email: 'BOB@acme.test', isVerified: true });
    expect(v2.status).toBe(200);
    expect(v2.json['verificationCode']).toBeUndefined();
    expect(await emailOf(GUSTAV)).toEqual({ email: 'BOB@acme.test', email_verified: false });
    const v3 = await rest(server, 'PUT', `/v3alpha/users/${USERS.hilda}/email`, frank, { email: { address: 'Carol@ACME.test', isVerified: true } });
    expect(v3.status).toBe(200);
    expect(await emailOf(USERS.hilda)).toEqual({ email: 'Carol@ACME.test', email_verified: false });
    const updated = await rest(server, 'PUT', `/v2/users/human/${USERS.ida}`, frank, { email: { email: 'dave@acme.test', isVerified: true } });
    expect(updated.status).toBe(200);
    expect(await emailOf(USERS.ida)).toEqual({ email: 'dave@acme.test', email_verified: false });
    // CreateUser (gRPC only) takes the same rule
    const users = createClient(UserService, createGrpcTransport({ baseUrl: server.url }));
    const created = await users.createUser(
      { organizationId: BETA, username: 'twin-grpc', userType: { case: 'human', value: { profile: { givenName: 'Dave', familyName: 'Test' }, email: { email: 'dave@acme.test', verification: { case: 'isVerified', value: true } } } } },
      withToken(frank),
    );
    expect(await emailOf(created.id)).toEqual({ email: 'dave@acme.test', email_verified: false });
    // an address no user outside Beta has is vouched for
    expect((await rest(server, 'POST', `/v2/users/${GUSTAV}/email`, frank, { email: 'gustav.new@beta.test', isVerified: true })).status).toBe(200);
    expect(await emailOf(GUSTAV)).toEqual({ email: 'gustav.new@beta.test', email_verified: true });
  });

  // returnCode is a vouch by other means: the owner would verify the code it was handed. For an
  // address held outside its organizations the code is mailed to the address instead, and the owner
  // gets a code of the same shape that verifies nothing (SetEmail, and ResendEmailCode alike).
  it("a Beta owner cannot get ACME alice's address verified through a returned code either", async () => {
    const set = await rest(server, 'POST', `/v2/users/${USERS.jakob}/email`, frank, { email: 'alice@acme.test', returnCode: {} });
    expect(set.status).toBe(200);
    expect(set.json['verificationCode']).toMatch(/^[A-Z0-9]{6}$/);
    const verify = await rest(server, 'POST', `/v2/users/${USERS.jakob}/email/verify`, frank, { verificationCode: set.json['verificationCode'] });
    expect(verify.status).toBe(400);
    const resent = await rest(server, 'POST', `/v2/users/${USERS.jakob}/email/resend`, frank, { returnCode: {} });
    expect(resent.status).toBe(200);
    expect(resent.json['verificationCode']).toMatch(/^[A-Z0-9]{6}$/);
    expect((await rest(server, 'POST', `/v2/users/${USERS.jakob}/email/verify`, frank, { verificationCode: resent.json['verificationCode'] })).status).toBe(400);
    const signedIn = await signIn(server, USERS.jakob, WEB, ['openid', 'email']);
    const info = (await userinfo(server, signedIn.accessToken)).json;
    expect([info['email'], info['email_verified']]).not.toEqual(['alice@acme.test', true]);
  });

  it('the instance owner may still vouch for any address', async () => {
    const vouched = await rest(server, 'POST', '/v2/users/human', iam, twinOf('iam-twin', 'alice@acme.test'));
    expect(vouched.status).toBe(200);
    expect(await emailOf(String(vouched.json['userId']))).toEqual({ email: 'alice@acme.test', email_verified: true });
  });
});
