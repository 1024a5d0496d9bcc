/**
 * AuthService OTP calls (docs/endpoints.md#authservice-the-authenticator-app) against the real
 * server with real user tokens (a code from a browser sign-in, exchanged at the token endpoint):
 * REST with plain fetch, gRPC (h2c), gRPC-web and Connect. Codes are computed with `otpauth` from
 * the returned secret. Every token carries the API audience (docs/security.md 10.5); removing a
 * ready factor takes a token from a sign-in with the OTP step (docs/security.md 10.4).
 */
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { checkOtpCode } from '../../src/domain/credentials/otp.ts';
import { LOCKOUT_THRESHOLD } from '../../src/domain/sign-in/lockout.ts';
import { addHuman } from '../login/support.ts';
import { codeFor, wrongCode } from '../support/totp.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';

const REDIRECT_URI = 'http://localhost:3000/callback';
const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
/** The amr of a sign-in with password and authenticator app. */
const WITH_OTP = ['pwd', 'otp', 'mfa'];
const OTP_PATH = '/auth/v1/users/me/auth_factors/otp';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(fixture().document);
});
afterAll(() => server.stop());

/** A user access token: sign-in through the domain, then the code exchanged by shop-web. */
async function userToken(userId: string, scopes = ['openid', API_SCOPE], amr?: string[]): Promise<string> {
  const issued = await signedInCode(server, { clientId: 'shop-web', redirectUri: REDIRECT_URI, scopes, userId, ...(amr ? { amr } : {}) });
  const reply = await postForm(
    `${server.url}/oauth/v2/token`,
    { grant_type: 'authorization_code', code: issued.code, redirect_uri: REDIRECT_URI },
    { authorization: basic('shop-web', SECRETS.web) },
  );
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

async function machineToken(scope: string): Promise<string> {
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic('reporter', SECRETS.reporter) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

function rest(method: string, path: string, token: string, body?: unknown): Promise<Reply> {
  return request(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}



function factorRows(userId: string) {
  return server.running.gh.db.selectFrom('otp_factors').selectAll().where('user_id', '=', userId).execute();
}

function withToken(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

async function codeOf(promise: Promise<unknown>): Promise<Code | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

describe('over REST', () => {
  let token: string;
  let secret: string;

  beforeAll(async () => {
    token = await userToken(IDS.alice);
  });

  it('adds an unverified factor: otpauth URL exactly, base32 secret, details', async () => {
    const reply = await rest('POST', OTP_PATH, token, {});
    expect(reply.status).toBe(200);
    secret = String(reply.json['secret']);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 20 bytes, base32, no padding
    const issuer = encodeURIComponent(server.config.issuerName);
    expect(reply.json['url']).toBe(
      `otpauth://totp/${issuer}:${encodeURIComponent('alice@acme.test')}?algorithm=SHA1&digits=6&issuer=${issuer}&period=30&secret=${secret}`,
    );
    const details = reply.json['details'] as Record<string, unknown>;
    expect(details).toEqual({
      sequence: expect.stringMatching(/^[1-9]\d*$/),
      creationDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      changeDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      resourceOwner: IDS.org,
    });
    const event = await server.running.gh.db.selectFrom('events').selectAll().where('sequence', '=', String(details['sequence'])).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ event_type: 'user.human.mfa.otp.added', aggregate_id: IDS.alice, resource_owner: IDS.org });
    const rows = await factorRows(IDS.alice);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toBe('unverified');
    expect(rows[0]!.secret).not.toContain(secret); // sealed at rest
    expect(server.running.gh.masterKey.decrypt(rows[0]!.secret)).toBe(secret);
  });

  it('replaces an unverified factor when added again', async () => {
    const reply = await rest('POST', OTP_PATH, token, {});
    expect(reply.status).toBe(200);
    expect(reply.json['secret']).not.toBe(secret);
    secret = String(reply.json['secret']);
    const rows = await factorRows(IDS.alice);
    expect(rows).toHaveLength(1);
    expect(server.running.gh.masterKey.decrypt(rows[0]!.secret)).toBe(secret);
  });

  it('refuses a wrong code with 400 InvalidArgument, counted towards the lockout', async () => {
    const reply = await rest('POST', `${OTP_PATH}/_verify`, token, { code: wrongCode(secret) });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 3, message: expect.any(String), details: [{ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail' }] });
    const user = await server.running.gh.db.selectFrom('users').select('failed_attempts').where('id', '=', IDS.alice).executeTakeFirstOrThrow();
    expect(user.failed_attempts).toBe(1);
  });

  it('verifies with a current code; the accepted code cannot be used again', async () => {
    const code = codeFor(secret);
    const reply = await rest('POST', `${OTP_PATH}/_verify`, token, { code });
    expect(reply.status).toBe(200);
    expect(reply.json['details']).toEqual({ sequence: expect.stringMatching(/^\d+$/), changeDate: expect.any(String), resourceOwner: IDS.org });
    expect((await factorRows(IDS.alice))[0]!.state).toBe('ready');
    // docs/security.md 10.3: a right code here resets no failure count (only a complete sign-in does)
    const user = await server.running.gh.db.selectFrom('users').select('failed_attempts').where('id', '=', IDS.alice).executeTakeFirstOrThrow();
    expect(user.failed_attempts).toBe(1);
    // replay: the step already accepted is refused, the next one is not
    const check = (c: string) => checkOtpCode(server.running.gh, IDS.alice, c, new Date(), async () => 'refused').then((r) => r.kind);
    expect(await check(code)).toBe('refused');
    // one code of the next step, computed once: computed twice, the two could fall on both sides of a step boundary
    const next = codeFor(secret, Date.now() + 30_000);
    expect(await check(next)).toBe('valid');
    expect(await check(next)).toBe('refused');
  });

  it('verifying a ready factor again is FailedPrecondition', async () => {
    const reply = await rest('POST', `${OTP_PATH}/_verify`, token, { code: codeFor(secret) });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 9 });
  });

  it('adding while a ready factor exists is 409 AlreadyExists (code 6)', async () => {
    const reply = await rest('POST', OTP_PATH, token, {});
    expect(reply.status).toBe(409);
    expect(reply.json).toMatchObject({ code: 6, details: [{ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail', id: 'AUTH-OTP-Exists' }] });
  });

  it('does not remove the ready factor with a token from a sign-in without it (403)', async () => {
    const refused = await rest('DELETE', OTP_PATH, token);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: 7, details: [{ id: 'AUTH-OTP-SignInAgain' }] });
    expect(await factorRows(IDS.alice)).toHaveLength(1);
  });

  it('removes the factor with a token from a sign-in with it; then remove and verify are 404 NotFound', async () => {
    token = await userToken(IDS.alice, undefined, WITH_OTP);
    const removed = await rest('DELETE', OTP_PATH, token);
    expect(removed.status).toBe(200);
    expect(removed.json['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), resourceOwner: IDS.org });
    expect(await factorRows(IDS.alice)).toHaveLength(0);
    const again = await rest('DELETE', OTP_PATH, token);
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ code: 5 });
    const verify = await rest('POST', `${OTP_PATH}/_verify`, token, { code: '123456' });
    expect(verify.status).toBe(404);
    expect(verify.json).toMatchObject({ code: 5 });
  });

  it('refuses a machine user with 400 FailedPrecondition', async () => {
    const reply = await rest('POST', OTP_PATH, await machineToken(`openid ${API_SCOPE}`), {});
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 9 });
  });

  it('refuses a token without the openid scope with 403 PermissionDenied', async () => {
    const reply = await rest('POST', OTP_PATH, await userToken(IDS.alice, ['profile', API_SCOPE]), {});
    expect(reply.status).toBe(403);
    expect(reply.json).toMatchObject({ code: 7 });
  });

  it('concurrent adds for one user leave exactly one factor', async () => {
    const userId = await addHuman(server.running.gh, { userName: 'carol', password: 'Carol-pass-1' });
    const carol = await userToken(userId);
    const replies = await Promise.all(Array.from({ length: 8 }, () => rest('POST', OTP_PATH, carol, {})));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    const rows = await factorRows(userId);
    expect(rows).toHaveLength(1);
    expect(replies.map((r) => r.json['secret'])).toContain(server.running.gh.masterKey.decrypt(rows[0]!.secret));
    // concurrent adds racing with a verify: once ready, further adds are refused, still one factor
    const secret = server.running.gh.masterKey.decrypt(rows[0]!.secret);
    expect((await rest('POST', `${OTP_PATH}/_verify`, carol, { code: codeFor(secret) })).status).toBe(200);
    const after = await Promise.all(Array.from({ length: 4 }, () => rest('POST', OTP_PATH, carol, {})));
    expect(after.map((r) => r.status)).toEqual(Array(4).fill(409));
    expect(await factorRows(userId)).toHaveLength(1);
  });

  it(`locks the user after ${LOCKOUT_THRESHOLD} wrong codes (ResourceExhausted, 429)`, async () => {
    const userId = await addHuman(server.running.gh, { userName: 'dave', password: 'Dave-pass-1' });
    const dave = await userToken(userId);
    const secret = String((await rest('POST', OTP_PATH, dave, {})).json['secret']);
    const wrong = wrongCode(secret);
    for (let i = 1; i < LOCKOUT_THRESHOLD; i++) {
      expect((await rest('POST', `${OTP_PATH}/_verify`, dave, { code: wrong })).json).toMatchObject({ code: 3 });
    }
    const locking = await rest('POST', `${OTP_PATH}/_verify`, dave, { code: wrong });
    expect(locking.status).toBe(429);
    expect(locking.json).toMatchObject({ code: 8 });
    const user = await server.running.gh.db.selectFrom('users').select('locked_until').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(user.locked_until!.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
    // while locked, even the right code is not checked
    expect((await rest('POST', `${OTP_PATH}/_verify`, dave, { code: codeFor(secret) })).status).toBe(429);
    expect((await factorRows(userId))[0]!.state).toBe('unverified');
  });
});

const transports: Array<[string, () => Transport]> = [
  ['gRPC over h2c', () => createGrpcTransport({ baseUrl: server.url })],
  ['gRPC-web over HTTP/1.1', () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: '1.1' })],
  ['Connect JSON over HTTP/1.1', () => createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: false })],
  ['Connect binary over h2c', () => createConnectTransport({ baseUrl: server.url, httpVersion: '2', useBinaryFormat: true })],
];

describe.each(transports)('over %s', (name, transport) => {
  it('adds, refuses a wrong code, verifies, refuses a second add and verify, removes', async () => {
    const userId = await addHuman(server.running.gh, { userName: `user-${name.replace(/\W+/g, '-').toLowerCase()}`, password: 'Some-pass-1' });
    const token = await userToken(userId);
    const client = createClient(AuthService, transport());
    const added = await client.addMyAuthFactorOTP({}, withToken(token));
    expect(added.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(added.url).toMatch(/^otpauth:\/\/totp\/[^?]+\?algorithm=SHA1&digits=6&issuer=[^&]+&period=30&secret=[A-Z2-7]{32}$/);
    expect(added.url.endsWith(`&secret=${added.secret}`)).toBe(true);
    expect(added.details?.sequence).toBeGreaterThan(0n);
    expect(added.details?.resourceOwner).toBe(IDS.org);
    expect(added.details?.creationDate).toBeDefined();
    expect(added.details?.changeDate).toBeDefined();

    expect(await codeOf(client.verifyMyAuthFactorOTP({ code: wrongCode(added.secret) }, withToken(token)))).toBe(Code.InvalidArgument);
    const verified = await client.verifyMyAuthFactorOTP({ code: codeFor(added.secret) }, withToken(token));
    expect(verified.details?.sequence).toBeGreaterThan(added.details!.sequence);
    expect(await codeOf(client.verifyMyAuthFactorOTP({ code: codeFor(added.secret) }, withToken(token)))).toBe(Code.FailedPrecondition);
    expect(await codeOf(client.addMyAuthFactorOTP({}, withToken(token)))).toBe(Code.AlreadyExists);

    // docs/security.md 10.4: the sign-in behind `token` did not use the factor; one that did may remove it
    expect(await codeOf(client.removeMyAuthFactorOTP({}, withToken(token)))).toBe(Code.PermissionDenied);
    const withOtp = await userToken(userId, undefined, WITH_OTP);
    const removed = await client.removeMyAuthFactorOTP({}, withToken(withOtp));
    expect(removed.details?.resourceOwner).toBe(IDS.org);
    expect(await codeOf(client.removeMyAuthFactorOTP({}, withToken(withOtp)))).toBe(Code.NotFound);
    expect(await codeOf(client.verifyMyAuthFactorOTP({ code: '123456' }, withToken(withOtp)))).toBe(Code.NotFound);
  });

  it('refuses a machine user with FailedPrecondition, a token without openid with PermissionDenied, one without the API audience with Unauthenticated', async () => {
    const client = createClient(AuthService, transport());
    expect(await codeOf(client.addMyAuthFactorOTP({}, withToken(await machineToken(`openid ${API_SCOPE}`))))).toBe(Code.FailedPrecondition);
    expect(await codeOf(client.addMyAuthFactorOTP({}, withToken(await userToken(IDS.alice, ['profile', API_SCOPE]))))).toBe(Code.PermissionDenied);
    expect(await codeOf(client.addMyAuthFactorOTP({}, withToken(await userToken(IDS.alice, ['openid']))))).toBe(Code.Unauthenticated);
    expect(await codeOf(client.addMyAuthFactorOTP({}))).toBe(Code.Unauthenticated);
  });
});
