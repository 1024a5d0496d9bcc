/**
 * The second outside review's attacks on revocation (docs/security.md 10.19,
 * 10.24, 10.25): refresh tokens that outlive the project's access rules, an impersonator's tokens
 * revived by its reactivation, password resets that evict nobody, and registration and reset codes
 * that outlive a deactivation or lock. Replayed against the real server as the review made them:
 * tokens from the token endpoint, `prompt=none` from the signed-in browser, userinfo, introspection
 * by ACME's `shop-api`, the API over REST, and Connect where the call takes a browser's credential.
 * The external URL is http://localhost:PORT so that passkeys are on, as in the review. Each
 * describe keeps the review's finding id in a comment; every test failed on the code before its fix.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, createClient } from '@connectrpc/connect';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { failure, rest, transports, withToken } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { TOKEN_TYPE } from '../support/token-exchange.ts';
import { SoftAuthenticator } from '../support/webauthn.ts';
import {
  ALICE,
  API_SCOPE,
  CRM_WEB,
  exchange,
  FRANK,
  GUSTAV,
  human,
  introspect,
  machineToken,
  PASSWORD,
  refresh,
  REPORTER,
  reviewDocument,
  signIn,
  silentSignIn,
  userApiToken,
  userinfo,
  WEB,
  webApp,
  type Client,
  type SignedIn,
} from './review-instance.ts';

/** ACME users of this suite besides alice and dave. */
const USERS = {
  /** Given the role `member` of project req by an authorization. */
  erin: '200000000000000041',
  /** Of ACME, no roles: signs in at project switch. */
  fiona: '200000000000000042',
  orgImpersonator: '200000000000000012',
  impersonated: '200000000000000043',
  resetByAdmin: '200000000000000051',
  resetWithCode: '200000000000000052',
  updatedByAdmin: '200000000000000053',
  selfChange: '200000000000000054',
  linked: '200000000000000061',
  pending: '200000000000000062',
  resetCodeHolder: '200000000000000063',
} as const;

const REQ = '520000000000000001';
const SWITCH = '520000000000000002';
const REQ_WEB: Client = { clientId: 'reqweb', secret: 'reqweb-secret' };
const SWITCH_WEB: Client = { clientId: 'switchweb', secret: 'switchweb-secret' };
const OFFLINE = ['openid', 'offline_access'];
const WITH_API = ['openid', API_SCOPE, 'offline_access'];

let server: TestServer;
let origin: string;
/** API tokens of alice (ACME's ORG_OWNER), frank (Beta's ORG_OWNER, no right on ACME's users) and the IAM_OWNER machine. */
let alice: string;
let frank: string;
let iam: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://localhost:${port}`;
  const document = reviewDocument({
    acmeUsers: [
      human(USERS.erin, 'erin', 'acme.test'),
      human(USERS.fiona, 'fiona', 'acme.test'),
      human(USERS.orgImpersonator, 'org-imp', 'acme.test', { roles: ['ORG_ADMIN_IMPERSONATOR'] }),
      human(USERS.impersonated, 'impersonated', 'acme.test'),
      human(USERS.resetByAdmin, 'reset-by-admin', 'acme.test'),
      human(USERS.resetWithCode, 'reset-with-code', 'acme.test'),
      human(USERS.updatedByAdmin, 'updated-by-admin', 'acme.test'),
      human(USERS.selfChange, 'self-change', 'acme.test'),
      human(USERS.linked, 'linked', 'acme.test'),
      human(USERS.pending, 'pending', 'acme.test'),
      human(USERS.resetCodeHolder, 'reset-code-holder', 'acme.test'),
    ],
    acmeProjects: [
      { id: REQ, name: 'req', authorizationRequired: true, projectAccessRequired: true, roles: [{ key: 'member' }], apps: [webApp(REQ_WEB, 'jwt')] },
      { id: SWITCH, name: 'switch', roles: [{ key: 'member' }], apps: [webApp(SWITCH_WEB, 'jwt')] },
    ],
  });
  server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin });
  const reporter = await machineToken(server, REPORTER);
  [alice, frank] = await Promise.all([userApiToken(server, ALICE), userApiToken(server, FRANK, CRM_WEB)]);
  iam = String(reporter.json['access_token']);
});
afterAll(() => server.stop());

const INVALID_GRANT = 'invalid_grant';

/** Two tries of a refresh token, as the review's client retried: both refused. */
async function expectRefreshRefused(client: Client, refreshToken: string): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const reply = await refresh(server, client, refreshToken);
    expect([i, reply.status, reply.json['error']]).toEqual([i, 400, INVALID_GRANT]);
  }
}

/** Whether a session row of the user is still active. */
async function sessionActive(sessionId: string): Promise<boolean> {
  const row = await server.running.gh.db.selectFrom('user_sessions').select('ended_at').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return row.ended_at === null;
}

/** Everything a signed-in browser and its client hold, refused: as after a deactivation. */
async function expectEverythingEnded(userId: string, signedIn: SignedIn): Promise<void> {
  await expectRefreshRefused(WEB, signedIn.refreshToken!);
  expect(await sessionActive(signedIn.sessionId)).toBe(false);
  expect((await silentSignIn(server, WEB, signedIn.browser)).get('error')).toBe('login_required');
  expect((await userinfo(server, signedIn.accessToken)).status).toBe(401);
  expect(await introspect(server, signedIn.accessToken)).toEqual({ active: false });
  expect((await rest(server, 'GET', `/v2/users/${userId}`, signedIn.accessToken)).status).toBe(401);
}

// F19
describe('access rules are checked at every refresh', () => {
  it("taking away a user's last role of a project with authorization required stops its refresh tokens and token exchange", async () => {
    const granted = await rest(server, 'POST', '/v2beta/authorizations', iam, { userId: USERS.erin, projectId: REQ, roleKeys: ['member'] });
    expect(granted.status).toBe(200);
    const signedIn = await signIn(server, USERS.erin, REQ_WEB, OFFLINE);
    const first = await refresh(server, REQ_WEB, signedIn.refreshToken!);
    expect(first.status).toBe(200);
    const accessToken = String(first.json['access_token']);

    expect((await rest(server, 'DELETE', `/v2beta/authorizations/${String(granted.json['id'])}`, iam)).status).toBe(200);
    expect((await silentSignIn(server, REQ_WEB, signedIn.browser)).get('error')).toBe('access_denied');
    await expectRefreshRefused(REQ_WEB, String(first.json['refresh_token']));
    const exchanged = await exchange(server, REQ_WEB, { subject_token: accessToken, subject_token_type: TOKEN_TYPE.access, scope: 'openid' });
    expect([exchanged.status, exchanged.json['error']]).toEqual([400, INVALID_GRANT]);
  });

  it('turning on a project switch stops the refresh tokens of the users it now keeps out, not of those it lets in', async () => {
    const outsider = await signIn(server, GUSTAV, SWITCH_WEB, OFFLINE); // of Beta
    const insider = await signIn(server, USERS.fiona, SWITCH_WEB, OFFLINE); // of ACME, no role
    expect((await rest(server, 'POST', `/v2beta/projects/${SWITCH}`, iam, { hasProjectCheck: true })).status).toBe(200);
    await expectRefreshRefused(SWITCH_WEB, outsider.refreshToken!);
    const still = await refresh(server, SWITCH_WEB, insider.refreshToken!);
    expect(still.status).toBe(200);
    expect((await rest(server, 'POST', `/v2beta/projects/${SWITCH}`, iam, { projectRoleCheck: true })).status).toBe(200);
    await expectRefreshRefused(SWITCH_WEB, String(still.json['refresh_token']));
  });
});

// F24 (b)
describe("an actor's revocation applies to the tokens it acts with", () => {
  it("an impersonation token stays refused after its impersonator is deactivated and reactivated", async () => {
    const actor = await signIn(server, USERS.orgImpersonator, WEB, ['openid']);
    const impersonation = await exchange(server, WEB, {
      subject_token: USERS.impersonated,
      subject_token_type: TOKEN_TYPE.userId,
      actor_token: actor.accessToken,
      actor_token_type: TOKEN_TYPE.access,
      requested_token_type: TOKEN_TYPE.jwt,
      scope: 'openid',
    });
    expect(impersonation.status).toBe(200);
    const jwt = String(impersonation.json['access_token']);
    expect(decodeJwt(jwt)).toMatchObject({ sub: USERS.impersonated, act: { sub: USERS.orgImpersonator } });
    expect((await userinfo(server, jwt)).status).toBe(200);

    expect((await rest(server, 'POST', `/v2/users/${USERS.orgImpersonator}/deactivate`, iam, {})).status).toBe(200);
    expect((await userinfo(server, jwt)).status).toBe(401);
    expect((await rest(server, 'POST', `/v2/users/${USERS.orgImpersonator}/reactivate`, iam, {})).status).toBe(200);
    expect((await userinfo(server, jwt)).status).toBe(401);
    expect(await introspect(server, jwt, WEB)).toEqual({ active: false });
    // the subject's own sign-in is not touched, and the reactivated impersonator may impersonate anew
    expect((await userinfo(server, (await signIn(server, USERS.impersonated, WEB, ['openid'])).accessToken)).status).toBe(200);
    const again = await signIn(server, USERS.orgImpersonator, WEB, ['openid']);
    const renewed = await exchange(server, WEB, { subject_token: USERS.impersonated, subject_token_type: TOKEN_TYPE.userId, actor_token: again.accessToken, actor_token_type: TOKEN_TYPE.access, scope: 'openid' });
    expect(renewed.status).toBe(200);
    expect((await userinfo(server, String(renewed.json['access_token']))).status).toBe(200);
  });
});

// F25
describe('password changes end sessions', () => {
  it("an administrator's SetPassword ends the user's browser session, refresh tokens and access tokens", async () => {
    const signedIn = await signIn(server, USERS.resetByAdmin, WEB, WITH_API);
    const opaque = await signIn(server, USERS.resetByAdmin, CRM_WEB, OFFLINE); // Beta's client: opaque tokens
    expect((await silentSignIn(server, WEB, signedIn.browser)).get('code')).not.toBeNull();
    const reset = await rest(server, 'POST', `/v2/users/${USERS.resetByAdmin}/password`, alice, { newPassword: { password: 'Admin-Set-Pass-1!' } });
    expect(reset.status).toBe(200);
    await expectEverythingEnded(USERS.resetByAdmin, signedIn);
    expect((await userinfo(server, opaque.accessToken)).status).toBe(401);
    await expectRefreshRefused(CRM_WEB, opaque.refreshToken!);
    // a new sign-in works
    expect((await userinfo(server, (await signIn(server, USERS.resetByAdmin, WEB, ['openid'])).accessToken)).status).toBe(200);
  });

  it('SetPassword with a reset code ends every token of the user, the one it was set with included', async () => {
    const signedIn = await signIn(server, USERS.resetWithCode, WEB, WITH_API);
    const code = await rest(server, 'POST', `/v2/users/${USERS.resetWithCode}/password_reset`, alice, { returnCode: {} });
    expect(code.status).toBe(200);
    const set = await rest(server, 'POST', `/v2/users/${USERS.resetWithCode}/password`, signedIn.accessToken, {
      newPassword: { password: 'Code-Set-Pass-1!' },
      verificationCode: code.json['verificationCode'],
    });
    expect(set.status).toBe(200);
    await expectEverythingEnded(USERS.resetWithCode, signedIn);
  });

  it("an administrator's UpdateHumanUser with a password ends them too", async () => {
    const signedIn = await signIn(server, USERS.updatedByAdmin, WEB, WITH_API);
    const updated = await rest(server, 'PUT', `/v2/users/human/${USERS.updatedByAdmin}`, alice, { password: { password: { password: 'Updated-Pass-1!' } } });
    expect(updated.status).toBe(200);
    await expectEverythingEnded(USERS.updatedByAdmin, signedIn);
  });

  it('a user changing its own password with the current one ends its other sessions and keeps the one it works in', async () => {
    const working = await signIn(server, USERS.selfChange, WEB, WITH_API);
    const other = await signIn(server, USERS.selfChange, WEB, WITH_API);
    const changed = await rest(server, 'POST', `/v2/users/${USERS.selfChange}/password`, working.accessToken, {
      newPassword: { password: 'Self-Changed-1!' },
      currentPassword: PASSWORD,
    });
    expect(changed.status).toBe(200);
    await expectEverythingEnded(USERS.selfChange, other);
    // the calling session goes on: its tokens, its refresh family and the browser's SSO
    expect((await userinfo(server, working.accessToken)).status).toBe(200);
    expect(await introspect(server, working.accessToken)).toMatchObject({ active: true, sub: USERS.selfChange });
    expect((await rest(server, 'GET', `/v2/users/${USERS.selfChange}`, working.accessToken)).status).toBe(200);
    expect((await refresh(server, WEB, working.refreshToken!)).status).toBe(200);
    expect(await sessionActive(working.sessionId)).toBe(true);
    expect((await silentSignIn(server, WEB, working.browser)).get('code')).not.toBeNull();
  });
});

// I12
describe('registration and reset codes die with a deactivation or lock', () => {
  const users = () => createClient(UserService, transports(() => server)[2]![1]());

  it('a passkey registration code issued before a deactivation registers nothing, during it or after the reactivation', async () => {
    const link = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys/registration_link`, alice, { returnCode: {} });
    expect(link.status).toBe(200);
    const code = link.json['code'] as { id: string; code: string };
    expect((await rest(server, 'POST', `/v2/users/${USERS.linked}/deactivate`, alice, {})).status).toBe(200);
    const during = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys`, frank, { code });
    expect(during.status).toBe(400);
    expect((await rest(server, 'POST', `/v2/users/${USERS.linked}/reactivate`, alice, {})).status).toBe(200);
    const after = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys`, frank, { code });
    expect(after.status).toBe(400);
    expect(after.json).toMatchObject({ code: Code.InvalidArgument, message: 'code: is invalid' });
    // a link made now works for the holder of its code
    const fresh = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys/registration_link`, alice, { returnCode: {} });
    const started = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys`, frank, { code: fresh.json['code'] });
    expect(started.status).toBe(200);
  });

  it('a pending passkey registration cannot be finished after a lock and unlock', async () => {
    const registered = await users().registerPasskey({ userId: USERS.pending }, withToken(alice));
    const publicKey = registered.publicKeyCredentialCreationOptions?.['publicKey'] as unknown as Parameters<SoftAuthenticator['create']>[0];
    const credential = new SoftAuthenticator(origin).create(publicKey) as JsonObject;
    expect((await rest(server, 'POST', `/v2/users/${USERS.pending}/lock`, alice, {})).status).toBe(200);
    expect((await rest(server, 'POST', `/v2/users/${USERS.pending}/unlock`, alice, {})).status).toBe(200);
    const refused = await failure(users().verifyPasskeyRegistration({ userId: USERS.pending, passkeyId: registered.passkeyId, publicKeyCredential: credential, passkeyName: 'Late' }, withToken(alice)));
    expect(refused.code).toBe(Code.NotFound);
    expect((await users().listPasskeys({ userId: USERS.pending }, withToken(alice))).result).toEqual([]);
  });

  it('a password reset code issued before a lock sets no password after the unlock', async () => {
    const code = await rest(server, 'POST', `/v2/users/${USERS.resetCodeHolder}/password_reset`, alice, { returnCode: {} });
    expect(code.status).toBe(200);
    expect((await rest(server, 'POST', `/v2/users/${USERS.resetCodeHolder}/lock`, alice, {})).status).toBe(200);
    expect((await rest(server, 'POST', `/v2/users/${USERS.resetCodeHolder}/unlock`, alice, {})).status).toBe(200);
    const own = await userApiToken(server, USERS.resetCodeHolder);
    const set = await rest(server, 'POST', `/v2/users/${USERS.resetCodeHolder}/password`, own, { newPassword: { password: 'Late-Code-Pass-1!' }, verificationCode: code.json['verificationCode'] });
    expect(set.status).toBe(400);
    expect(set.json).toMatchObject({ code: Code.FailedPrecondition, message: 'verificationCode: no password reset code is pending' });
  });
});
