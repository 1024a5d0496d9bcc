/**
 * The identity API under the attacks of the outside review (rules in docs/security.md), through the
 * real server with real tokens from the token endpoint: REST with plain fetch, and gRPC / Connect
 * where the protocol matters. Each test names the rule it covers; each failed on the code before
 * the fix.
 */
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { UserService } from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';
import { codeFor, wrongCode } from '../support/totp.ts';

const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const OTP_PATH = '/auth/v1/users/me/auth_factors/otp';
const WITH_OTP = ['pwd', 'otp', 'mfa'];
const USERS = { root: '200000000000000021', dora: '200000000000000022', eve: '200000000000000023' } as const;

interface App {
  clientId: string;
  secret: string;
  redirectUri: string;
}
const WEB: App = { clientId: 'shop-web', secret: SECRETS.web, redirectUri: 'http://localhost:3000/callback' };
const POST: App = { clientId: 'shop-post', secret: SECRETS.post, redirectUri: 'http://localhost:3000/post-callback' }; // opaque tokens
const EXCHANGE: App = { clientId: 'shop-exchange', secret: 'shop-exchange-secret', redirectUri: 'http://localhost:3000/exchange-callback' };
const OTHER_WEB: App = { clientId: 'other-web', secret: 'other-web-secret', redirectUri: 'http://localhost:5000/callback' }; // another organization's relying party

let server: TestServer;

function document(): Record<string, unknown> {
  const doc = structuredClone(fixture().document) as { orgs: Array<{ users?: unknown[]; projects?: Array<{ apps: unknown[] }> }> };
  const [acme, other] = doc.orgs;
  const human = (id: string, userName: string, extra: Record<string, unknown>) => ({ id, userName, password: 'Correct-Horse-9', ...extra });
  acme!.users!.push(
    human(IDS.bob, 'bob', { email: 'bob@acme.test', emailVerified: false }),
    human(USERS.root, 'root', { email: 'root@acme.test', emailVerified: true, roles: ['IAM_OWNER'] }),
    human(USERS.dora, 'dora', { email: 'dora@acme.test', emailVerified: false }),
    human(USERS.eve, 'eve', { email: 'eve@acme.test', emailVerified: false }),
  );
  const app = (a: App, grantTypes: string[]) => ({
    name: a.clientId,
    clientId: a.clientId,
    clientSecret: a.secret,
    authMethod: 'client_secret_basic',
    redirectUris: [a.redirectUri],
    responseTypes: ['code'],
    grantTypes,
    accessTokenType: 'jwt',
  });
  acme!.projects![0]!.apps.push(app(EXCHANGE, ['authorization_code', TOKEN_EXCHANGE]));
  other!.projects![0]!.apps.push(app(OTHER_WEB, ['authorization_code']));
  return { ...doc, features: { oidcTokenExchange: true } };
}

/** An application whose client id is the issuer URL, which is also the API audience (set in beforeAll). */
const ISSUER_NAMED: App = { clientId: '', secret: 'issuer-named-secret', redirectUri: 'http://localhost:3000/issuer-named' };

beforeAll(async () => {
  const port = await freePort();
  ISSUER_NAMED.clientId = `http://127.0.0.1:${port}`;
  const doc = document() as { orgs: Array<{ projects: Array<{ apps: unknown[] }> }> };
  doc.orgs[0]!.projects[0]!.apps.push({
    name: 'issuer-named', clientId: ISSUER_NAMED.clientId, clientSecret: ISSUER_NAMED.secret, authMethod: 'client_secret_basic',
    redirectUris: [ISSUER_NAMED.redirectUri], responseTypes: ['code'], grantTypes: ['authorization_code'], accessTokenType: 'jwt', devMode: true,
  });
  server = await startTestServer(doc, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: ISSUER_NAMED.clientId });
});
afterAll(() => server.stop());

/** An access token of `userId` signed in to `app` (through the domain) with `scopes` and `amr`. */
async function tokenOf(userId: string, scopes: string[], app: App = WEB, amr?: string[]): Promise<string> {
  const issued = await signedInCode(server, { clientId: app.clientId, redirectUri: app.redirectUri, scopes, userId, ...(amr ? { amr } : {}) });
  const form = { grant_type: 'authorization_code', code: issued.code, redirect_uri: app.redirectUri };
  const reply = app === POST
    ? await postForm(`${server.url}/oauth/v2/token`, { ...form, client_id: app.clientId, client_secret: app.secret })
    : await postForm(`${server.url}/oauth/v2/token`, form, { authorization: basic(app.clientId, app.secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

const apiToken = (userId: string, app?: App, amr?: string[]) => tokenOf(userId, ['openid', 'email', API_SCOPE], app, amr);

function rest(method: string, path: string, token: string, body?: unknown): Promise<Reply> {
  return request(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function user(userId: string) {
  return server.running.gh.db.selectFrom('users').select(['email', 'email_verified', 'failed_attempts']).where('id', '=', userId).executeTakeFirstOrThrow();
}

function factorOf(userId: string) {
  return server.running.gh.db.selectFrom('otp_factors').select('state').where('user_id', '=', userId).executeTakeFirst();
}

/** A ready authenticator app for the user, set up through the API; returns its secret. */
async function readyFactor(userId: string): Promise<string> {
  const token = await apiToken(userId);
  const secret = String((await rest('POST', OTP_PATH, token, {})).json['secret']);
  expect((await rest('POST', `${OTP_PATH}/_verify`, token, { code: codeFor(secret) })).status).toBe(200);
  return secret;
}

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error('expected the call to fail');
}

describe('email ownership (docs/security.md 10.1)', () => {
  // docs/security.md 10.1: the attack as reported, step by step
  it('a user cannot make an address it does not own verified: returnCode for itself is PermissionDenied', async () => {
    const bob = await apiToken(IDS.bob);
    const set = await rest('PUT', `/v3alpha/users/${IDS.bob}/email`, bob, { email: { address: 'ceo@bank.test', returnCode: {} } });
    expect(set.status).toBe(403);
    expect(set.json).toMatchObject({ code: Code.PermissionDenied, details: [{ id: 'EMAIL-ReturnCodeSelf' }] });
    expect(set.json['verificationCode']).toBeUndefined();
    const resend = await rest('POST', `/v3alpha/users/${IDS.bob}/email/resend`, bob, { returnCode: {} });
    expect(resend.status).toBe(403);
    expect(resend.json['verificationCode']).toBeUndefined();
    // nothing changed, nothing pending, and what relying parties are told is unchanged
    expect(await user(IDS.bob)).toMatchObject({ email: 'bob@acme.test', email_verified: false });
    expect(await server.running.gh.db.selectFrom('email_codes').selectAll().where('user_id', '=', IDS.bob).execute()).toEqual([]);
    const info = await request(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${bob}` } });
    expect(info.json).toMatchObject({ email: 'bob@acme.test', email_verified: false });
  });

  // docs/security.md 10.1: acting on itself is acting on itself, whatever the roles
  it('an IAM_OWNER acting on itself gets PermissionDenied for isVerified and returnCode, over gRPC too', async () => {
    const root = await apiToken(USERS.root);
    const setVerified = await rest('PUT', `/v3alpha/users/${USERS.root}/email`, root, { email: { address: 'root@elsewhere.test', isVerified: true } });
    expect(setVerified.status).toBe(403);
    expect(setVerified.json).toMatchObject({ details: [{ id: 'EMAIL-VerifyPermission' }] });
    const users = createClient(UserService, createGrpcTransport({ baseUrl: server.url }));
    const options = { headers: { authorization: `Bearer ${root}` } };
    const set = await failure(users.setContactEmail({ userId: USERS.root, email: { address: 'root@elsewhere.test', verification: { case: 'returnCode', value: {} } } }, options));
    expect(set.code).toBe(Code.PermissionDenied);
    const resend = await failure(users.resendContactEmailCode({ userId: USERS.root, verification: { case: 'returnCode', value: {} } }, options));
    expect(resend.code).toBe(Code.PermissionDenied);
    expect(await user(USERS.root)).toMatchObject({ email: 'root@acme.test', email_verified: true });
  });

  it('an administrator acting on another user still gets the code returned (and the user mail otherwise)', async () => {
    const root = await apiToken(USERS.root);
    const set = await rest('PUT', `/v3alpha/users/${USERS.eve}/email`, root, { email: { address: 'eve.new@acme.test', returnCode: {} } });
    expect(set.status).toBe(200);
    const code = String(set.json['verificationCode']);
    expect(code).toMatch(/^[A-Z0-9]{6}$/);
    expect((await rest('POST', `/v3alpha/users/${USERS.eve}/email/verify`, root, { verificationCode: code })).status).toBe(200);
    expect(await user(USERS.eve)).toMatchObject({ email: 'eve.new@acme.test', email_verified: true });
  });
});

describe('administrative boundaries (docs/security.md 10.13)', () => {
  // docs/security.md 10.13: the org owner alice and the instance owner root are in one org
  it('an ORG_OWNER cannot rewrite the verified email of an instance owner of its organization', async () => {
    const alice = await apiToken(IDS.alice);
    const takeover = await rest('PUT', `/v3alpha/users/${USERS.root}/email`, alice, { email: { address: 'mallory@evil.test', isVerified: true } });
    expect(takeover.status).toBe(403);
    const resend = await rest('POST', `/v3alpha/users/${USERS.root}/email/resend`, alice, { returnCode: {} });
    const verify = await rest('POST', `/v3alpha/users/${USERS.root}/email/verify`, alice, { verificationCode: 'AAAAAA' });
    // the same answer as for a user of another organization: nothing tells the roles apart
    const foreign = await rest('POST', `/v3alpha/users/${USERS.root}0/email/resend`, alice, { returnCode: {} });
    expect(foreign.status).toBe(403);
    for (const reply of [takeover, resend, verify]) {
      expect(reply.status).toBe(403);
      expect(reply.json).toEqual(foreign.json);
    }
    expect(await user(USERS.root)).toMatchObject({ email: 'root@acme.test', email_verified: true });
  });

  it('an ORG_OWNER still manages the other users of its organization', async () => {
    const alice = await apiToken(IDS.alice);
    const reply = await rest('PUT', `/v3alpha/users/${USERS.dora}/email`, alice, { email: { address: 'dora@acme.test', isVerified: true } });
    expect(reply.status).toBe(200);
    expect(await user(USERS.dora)).toMatchObject({ email_verified: true });
  });
});

describe('the API audience (docs/security.md 10.5)', () => {
  // docs/security.md 10.5: a token another organization's relying party got with `openid`
  it('refuses a token issued to another application with openid alone: 401 invalid audience, no factor added', async () => {
    const foreign = await tokenOf(USERS.eve, ['openid'], OTHER_WEB);
    const reply = await rest('POST', OTP_PATH, foreign, {});
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(reply.json).toMatchObject({ code: Code.Unauthenticated, message: 'invalid audience', details: [{ id: 'AUTH-Audience', message: 'invalid audience' }] });
    expect(await factorOf(USERS.eve)).toBeUndefined();
    const grpc = await failure(createClient(AuthService, createGrpcTransport({ baseUrl: server.url })).addMyAuthFactorOTP({}, { headers: { authorization: `Bearer ${foreign}` } }));
    expect(grpc.code).toBe(Code.Unauthenticated);
    expect(grpc.rawMessage).toBe('invalid audience');
  });

  // docs/security.md 10.5: a client id equal to the API audience does not stand in for it
  it('refuses a token of an application whose client id is the API audience, asked with openid alone', async () => {
    const token = await tokenOf(USERS.eve, ['openid'], ISSUER_NAMED);
    const reply = await rest('POST', OTP_PATH, token, {});
    expect(reply.status).toBe(401);
    expect(reply.json).toMatchObject({ message: 'invalid audience' });
    expect(await factorOf(USERS.eve)).toBeUndefined();
  });

  // docs/security.md 10.4, 10.5: a foreign token removes no factor, whatever its sign-in
  it('refuses a foreign token to remove a factor, even one from a sign-in with the authenticator app', async () => {
    await readyFactor(USERS.dora);
    const foreign = await tokenOf(USERS.dora, ['openid'], OTHER_WEB, WITH_OTP);
    expect((await rest('DELETE', OTP_PATH, foreign)).status).toBe(401);
    expect(await factorOf(USERS.dora)).toEqual({ state: 'ready' });
  });

  // docs/security.md 10.5: the API scope without the API audience is not enough
  it('refuses a token whose audience a token exchange narrowed away, on every service', async () => {
    const subject = await tokenOf(USERS.eve, ['openid', API_SCOPE], EXCHANGE);
    const exchanged = await postForm(
      `${server.url}/oauth/v2/token`,
      { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: TOKEN_TYPE.access, scope: `openid ${API_SCOPE}`, audience: EXCHANGE.clientId },
      { authorization: basic(EXCHANGE.clientId, EXCHANGE.secret) },
    );
    expect(exchanged.status).toBe(200);
    const narrowed = String(exchanged.json['access_token']);
    expect(exchanged.json['scope']).toBe(`openid ${API_SCOPE}`);
    for (const [method, path, body] of [
      ['POST', OTP_PATH, {}],
      ['POST', `/v3alpha/users/${USERS.eve}/email/resend`, {}],
      ['GET', '/v2/features/instance', undefined],
    ] as const) {
      const reply = await rest(method, path, narrowed, body);
      expect(reply.status).toBe(401);
      expect(reply.json).toMatchObject({ message: 'invalid audience' });
    }
    // the token it came from, which has the audience, is accepted
    expect((await rest('POST', OTP_PATH, subject, {})).status).toBe(200);
  });
});

describe('removing the authenticator app (docs/security.md 10.4)', () => {
  // docs/security.md 10.4: a token from a sign-in before the factor (password only) removes nothing
  it('needs a token from a sign-in that used the factor: a password-only token gets PermissionDenied', async () => {
    const old = await apiToken(IDS.bob); // signed in with the password, before the factor existed
    await readyFactor(IDS.bob);
    const reply = await rest('DELETE', OTP_PATH, old);
    expect(reply.status).toBe(403);
    expect(reply.json).toMatchObject({
      code: Code.PermissionDenied,
      details: [{ id: 'AUTH-OTP-SignInAgain', message: 'removing the OTP factor needs a sign-in that used it: sign in again with the authenticator app' }],
    });
    const connect = await failure(createClient(AuthService, createConnectTransport({ baseUrl: server.url, httpVersion: '1.1' })).removeMyAuthFactorOTP({}, { headers: { authorization: `Bearer ${old}` } }));
    expect(connect.code).toBe(Code.PermissionDenied);
    expect(await factorOf(IDS.bob)).toEqual({ state: 'ready' });
  });

  it('a JWT or an opaque token from a sign-in with the authenticator app removes it', async () => {
    const jwt = await apiToken(IDS.bob, WEB, WITH_OTP);
    expect((await rest('DELETE', OTP_PATH, jwt)).status).toBe(200);
    expect(await factorOf(IDS.bob)).toBeUndefined();
    await readyFactor(IDS.bob);
    const opaque = await apiToken(IDS.bob, POST, WITH_OTP);
    expect(opaque).not.toContain('.');
    expect((await rest('DELETE', OTP_PATH, await apiToken(IDS.bob, POST))).status).toBe(403);
    expect((await rest('DELETE', OTP_PATH, opaque)).status).toBe(200);
    expect(await factorOf(IDS.bob)).toBeUndefined();
  });
});

describe('second-factor failures (docs/security.md 10.3)', () => {
  // docs/security.md 10.3: codes tried through the API must not wipe the failures counted towards the lockout
  it('a right code through VerifyMyAuthFactorOTP does not reset the failure count', async () => {
    const token = await apiToken(USERS.eve);
    await server.running.gh.db.deleteFrom('otp_factors').where('user_id', '=', USERS.eve).execute();
    const secret = String((await rest('POST', OTP_PATH, token, {})).json['secret']);
    for (let i = 0; i < 3; i++) expect((await rest('POST', `${OTP_PATH}/_verify`, token, { code: wrongCode(secret) })).status).toBe(400);
    expect((await user(USERS.eve)).failed_attempts).toBe(3);
    expect((await rest('POST', `${OTP_PATH}/_verify`, token, { code: codeFor(secret) })).status).toBe(200);
    expect((await user(USERS.eve)).failed_attempts).toBe(3);
  });
});
