/**
 * zitadel.user.v2 passkey calls (docs/passkeys.md#the-api; docs/security.md 10.1, 10.13) end to
 * end: a real server whose external URL is http://localhost:PORT (a valid relying party), clients
 * built from ZITADEL's own descriptors over gRPC, gRPC-web and Connect, REST on ZITADEL's paths,
 * and a software authenticator (support/webauthn.ts) in the browser's place. A passkey registered
 * through the API signs in through the domain functions the login UI calls; removed, it no longer
 * does. A second server on an IP-address URL answers every passkey call FailedPrecondition.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, createClient } from '@connectrpc/connect';
import { PasskeyAuthenticator } from '@zitadel/proto/zitadel/user/v2/auth_pb.js';
import { AuthFactorState } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { AuthenticationMethodType, UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { finishPasskeySignIn, startPasskeySignIn } from '../../src/domain/passkeys/passkey-sign-in.ts';
import { Mailbox, nthMailTo, partOf } from '../mail/mailbox.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiToken, apiTokens, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { signedInCode } from '../support/sign-in.ts';
import { SoftAuthenticator } from '../support/webauthn.ts';

const CALLBACK = 'http://localhost:3000/callback';
const WEB = { clientId: 'passkey-web', secret: 'passkey-web-secret' };
const USER_SCOPES = ['openid', 'urn:gatehouse:iam:org:project:id:gatehouse:aud'];
const PASSWORD = 'Correct-Horse-9';
const human = (i: number) => ({ id: `27000000000000000${i}`, userName: `key-${i}`, password: PASSWORD, email: `key-${i}@managed.test`, emailVerified: true, givenName: `Kim${i}` });
const USERS = {
  /** For the user's own calls. */
  self: '271000000000000001',
  /** No password: its last passkey is its only way in. */
  passwordless: '271000000000000002',
  /** Gets a registration link. */
  invited: '271000000000000003',
  /** REST. */
  restHuman: '271000000000000004',
  robot: '271000000000000005',
  unknown: '299999999999999999',
} as const;

let server: TestServer;
let disabled: TestServer;
const mailbox = new Mailbox();
let tokens: Record<Caller, string>;
let origin: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://localhost:${port}`;
  const document = managementDocument({
    users: [
      ...[0, 1, 2, 3].map(human),
      { id: USERS.self, userName: 'key-self', password: PASSWORD, email: 'key-self@managed.test', emailVerified: true },
      { id: USERS.passwordless, userName: 'key-passwordless', email: 'key-passwordless@managed.test', emailVerified: true },
      { id: USERS.invited, userName: 'key-invited', password: PASSWORD, email: 'key-invited@managed.test', emailVerified: true },
      { id: USERS.restHuman, userName: 'key-rest', password: PASSWORD, email: 'key-rest@managed.test', emailVerified: true },
    ],
    machines: [{ id: USERS.robot, userName: 'key-robot', accessTokenType: 'jwt' }],
    projects: [
      {
        name: 'passkeys',
        apps: [
          {
            name: 'passkey-web',
            clientId: WEB.clientId,
            clientSecret: WEB.secret,
            authMethod: 'client_secret_basic',
            redirectUris: [CALLBACK],
            responseTypes: ['code'],
            grantTypes: ['authorization_code'],
            accessTokenType: 'jwt',
          },
        ],
      },
    ],
  });
  // The mail worker empties a message's bodies once it is sent, or logged without SMTP (docs/security.md 10.2), so
  // a test reads the links from the mail as delivered, not from the outbox: that raced the worker.
  await mailbox.start(0);
  [server, disabled] = await Promise.all([
    startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_SMTP_URL: mailbox.url }),
    startTestServer(managementDocument()),
  ]);
  tokens = await apiTokens(server);
});
afterAll(() => Promise.all([server.stop(), disabled.stop(), mailbox.stop()]));

/** A user's own API token: a browser sign-in exchanged by passkey-web. */
async function userToken(userId: string): Promise<string> {
  const issued = await signedInCode(server, { clientId: WEB.clientId, redirectUri: CALLBACK, scopes: USER_SCOPES, userId });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, {
    authorization: basic(WEB.clientId, WEB.secret),
  });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

/** A username-less sign-in with the authenticator, through the domain functions the login UI calls. */
async function signIn(authenticator: SoftAuthenticator) {
  const { gh } = server.running;
  const challenge = await startPasskeySignIn(gh);
  return finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential: authenticator.get(challenge.options) });
}

/** The options RegisterPasskey returns, as navigator.credentials.create() takes them. */
function publicKeyOf(options: JsonObject | undefined): Parameters<SoftAuthenticator['create']>[0] {
  const publicKey = options?.['publicKey'];
  if (typeof publicKey !== 'object' || publicKey === null || Array.isArray(publicKey)) throw new Error('no publicKey options');
  return publicKey as unknown as Parameters<SoftAuthenticator['create']>[0];
}

const asJson = (credential: Record<string, unknown>) => credential as JsonObject;

function eventsOf(userId: string) {
  return server.running.gh.db
    .selectFrom('events')
    .select(['event_type', 'creator'])
    .where('aggregate_id', '=', userId)
    .where('event_type', 'like', 'user.human.passwordless%')
    .orderBy('sequence')
    .execute();
}

describe.each(transports(() => server))('over %s', (name, transport) => {
  const i = transports(() => server).findIndex(([n]) => n === name);
  const person = human(i);
  const users = () => createClient(UserService, transport());
  const admin = () => withToken(tokens.iamAdmin);

  it('an administrator registers a passkey from a page of Gatehouse\'s origin; it signs in until it is removed', async () => {
    const registered = await users().registerPasskey({ userId: person.id, authenticator: PasskeyAuthenticator.PLATFORM }, admin());
    expect(registered.passkeyId).toMatch(/^\d+$/);
    expect(registered.details?.resourceOwner).toBe(MGMT.org);
    expect(registered.publicKeyCredentialCreationOptions).toEqual({
      publicKey: expect.objectContaining({
        challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        rp: { id: 'localhost', name: 'Managed' },
        user: { id: Buffer.from(person.id).toString('base64url'), name: `${person.userName}@managed.test`, displayName: person.givenName },
        pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -8, type: 'public-key' }, { alg: -257, type: 'public-key' }],
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required', authenticatorAttachment: 'platform' },
        attestation: 'none',
      }),
    });
    const pending = await users().listPasskeys({ userId: person.id }, admin());
    expect(pending.result.map((p) => [p.id, p.state])).toEqual([[registered.passkeyId, AuthFactorState.NOT_READY]]);

    const authenticator = new SoftAuthenticator(origin);
    const credential = authenticator.create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    const verified = await users().verifyPasskeyRegistration({ userId: person.id, passkeyId: registered.passkeyId, publicKeyCredential: asJson(credential), passkeyName: 'Work laptop' }, admin());
    expect(verified.details?.sequence).toBeGreaterThan(registered.details!.sequence);
    const listed = await users().listPasskeys({ userId: person.id }, admin());
    expect(listed.result.map((p) => ({ id: p.id, state: p.state, name: p.name }))).toEqual([{ id: registered.passkeyId, state: AuthFactorState.READY, name: 'Work laptop' }]);
    expect(listed.details?.totalResult).toBe(1n);
    expect((await users().listAuthenticationMethodTypes({ userId: person.id }, admin())).authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD, AuthenticationMethodType.PASSKEY]);
    const elsewhere = await users().listAuthenticationMethodTypes({ userId: person.id, domainQuery: { domain: 'example.com', includeWithoutDomain: false } }, admin());
    expect(elsewhere.authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD]);

    expect(await signIn(authenticator)).toMatchObject({ kind: 'signed_in', userId: person.id, amr: ['user', 'mfa'] });

    await users().removePasskey({ userId: person.id, passkeyId: registered.passkeyId }, admin());
    expect((await users().listPasskeys({ userId: person.id }, admin())).result).toEqual([]);
    expect(await signIn(authenticator)).toEqual({ kind: 'refused' });
    expect((await failure(users().removePasskey({ userId: person.id, passkeyId: registered.passkeyId }, admin()))).code).toBe(Code.NotFound);
    expect(await eventsOf(person.id)).toEqual([
      { event_type: 'user.human.passwordless.token.added', creator: MGMT.iamAdmin },
      { event_type: 'user.human.passwordless.token.verified', creator: MGMT.iamAdmin },
      { event_type: 'user.human.passwordless.token.removed', creator: MGMT.iamAdmin },
    ]);
  });
});

describe('the user itself', () => {
  const users = () => createClient(UserService, transports(() => server)[0]![1]());

  it('registers, lists and removes its own passkeys, and gets a registration link by mail only', async () => {
    const own = withToken(await userToken(USERS.self));
    const registered = await users().registerPasskey({ userId: USERS.self }, own);
    const authenticator = new SoftAuthenticator(origin);
    const credential = authenticator.create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    await users().verifyPasskeyRegistration({ userId: USERS.self, passkeyId: registered.passkeyId, publicKeyCredential: asJson(credential), passkeyName: 'Phone' }, own);
    expect((await users().listPasskeys({ userId: USERS.self }, own)).result).toHaveLength(1);
    expect((await signIn(authenticator)).kind).toBe('signed_in');
    await users().removePasskey({ userId: USERS.self, passkeyId: registered.passkeyId }, own);

    expect((await failure(users().createPasskeyRegistrationLink({ userId: USERS.self, medium: { case: 'returnCode', value: {} } }, own))).code).toBe(Code.PermissionDenied);
    const mailed = await users().createPasskeyRegistrationLink({ userId: USERS.self }, own);
    expect(mailed.code).toBeUndefined();
    const mail = await nthMailTo(mailbox, 'key-self@managed.test', 1);
    expect(mail.headers.get('subject')).toBe('Add a passkey to your account');
    expect(partOf(mail.raw, 'text/plain')).toMatch(new RegExp(`${origin}/ui/login/passkeys\\?userID=${USERS.self}&orgID=${MGMT.org}&codeID=\\d+&code=[A-Za-z0-9]{12}`));
  });

  it('may not remove its last passkey when it has no password; an administrator may', async () => {
    const own = withToken(await userToken(USERS.passwordless));
    const registered = await users().registerPasskey({ userId: USERS.passwordless }, own);
    const credential = new SoftAuthenticator(origin).create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    await users().verifyPasskeyRegistration({ userId: USERS.passwordless, passkeyId: registered.passkeyId, publicKeyCredential: asJson(credential), passkeyName: 'Key' }, own);
    const refused = await failure(users().removePasskey({ userId: USERS.passwordless, passkeyId: registered.passkeyId }, own));
    expect(refused).toEqual({ code: Code.FailedPrecondition, message: expect.stringContaining('last passkey') });
    await users().removePasskey({ userId: USERS.passwordless, passkeyId: registered.passkeyId }, withToken(tokens.orgAdmin));
  });
});

describe('registration links', () => {
  const users = () => createClient(UserService, transports(() => server)[2]![1]());
  const as = (caller: Caller) => withToken(tokens[caller]);

  it('a returned code lets a caller without rights on the user register one passkey, and finish only its own registration', async () => {
    const link = await users().createPasskeyRegistrationLink({ userId: USERS.invited, medium: { case: 'returnCode', value: {} } }, as('iamAdmin'));
    expect(link.code).toEqual(expect.objectContaining({ id: expect.stringMatching(/^\d+$/), code: expect.stringMatching(/^[A-Za-z0-9]{12}$/) }));
    const code = { id: link.code!.id, code: link.code!.code };
    expect((await failure(users().registerPasskey({ userId: USERS.invited }, as('plain')))).code).toBe(Code.PermissionDenied);
    const wrong = await failure(users().registerPasskey({ userId: USERS.invited, code: { ...code, code: 'x'.repeat(12) } }, as('plain')));
    expect(wrong).toEqual({ code: Code.InvalidArgument, message: 'code: is invalid' });
    expect(await failure(users().registerPasskey({ userId: USERS.unknown, code }, as('plain')))).toEqual(wrong);

    const registered = await users().registerPasskey({ userId: USERS.invited, code }, as('plain'));
    expect(await failure(users().registerPasskey({ userId: USERS.invited, code }, as('plain')))).toEqual(wrong); // used once
    const credential = new SoftAuthenticator(origin).create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    const request = { userId: USERS.invited, passkeyId: registered.passkeyId, publicKeyCredential: asJson(credential), passkeyName: 'Invited' };
    expect((await failure(users().verifyPasskeyRegistration(request, as('otherAdmin')))).code).toBe(Code.PermissionDenied);
    await users().verifyPasskeyRegistration(request, as('plain'));
    expect((await failure(users().listPasskeys({ userId: USERS.invited }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await users().listPasskeys({ userId: USERS.invited }, as('orgAdmin'))).result.map((p) => p.name)).toEqual(['Invited']);
    expect((await eventsOf(USERS.invited)).map((e) => [e.event_type, e.creator])).toEqual([
      ['user.human.passwordless.initialization.code.added', MGMT.iamAdmin],
      ['user.human.passwordless.token.added', MGMT.plain],
      ['user.human.passwordless.token.verified', MGMT.plain],
    ]);
  });

  it('mails a link where the template leads, within docs/security.md 10.2', async () => {
    const template = `${origin}/register?user={{.UserID}}&id={{.CodeID}}&code={{.Code}}`;
    await users().createPasskeyRegistrationLink({ userId: MGMT.alice, medium: { case: 'sendLink', value: { urlTemplate: template } } }, as('orgAdmin'));
    expect(partOf((await nthMailTo(mailbox, 'alice@managed.test', 1)).raw, 'text/plain')).toMatch(new RegExp(`${origin}/register\\?user=${MGMT.alice}&id=\\d+&code=[A-Za-z0-9]{12}`));
    const outside = await failure(users().createPasskeyRegistrationLink({ userId: MGMT.alice, medium: { case: 'sendLink', value: { urlTemplate: 'https://evil.example/{{.Code}}' } } }, as('orgAdmin')));
    expect(outside).toEqual({ code: Code.InvalidArgument, message: expect.stringContaining('sendLink.urlTemplate') });
    const unsupported = await failure(users().createPasskeyRegistrationLink({ userId: MGMT.alice, medium: { case: 'sendLink', value: { urlTemplate: `${origin}/{{.Secret}}` } } }, as('orgAdmin')));
    expect(unsupported).toEqual({ code: Code.InvalidArgument, message: expect.stringContaining('sendLink.urlTemplate') });
  });
});

describe('permissions and bad input', () => {
  const users = () => createClient(UserService, transports(() => server)[1]![1]());
  const as = (caller: Caller) => withToken(tokens[caller]);

  it('the user itself or an administrator of it (docs/security.md 10.13); NotFound only for who may see', async () => {
    expect((await failure(users().registerPasskey({ userId: MGMT.alice }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().registerPasskey({ userId: MGMT.alice }, as('otherAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().listPasskeys({ userId: MGMT.instanceOwner }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().createPasskeyRegistrationLink({ userId: MGMT.instanceOwner, medium: { case: 'returnCode', value: {} } }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().listPasskeys({ userId: USERS.unknown }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(users().listPasskeys({ userId: USERS.unknown }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().registerPasskey({ userId: USERS.robot }, as('iamAdmin')))).code).toBe(Code.FailedPrecondition);
    expect((await users().listPasskeys({ userId: MGMT.alice }, as('orgAdmin'))).result).toEqual([]);
    // docs/management-api.md#who-may-do-what: a token without the API scope and audience is refused before anything is looked at.
    const openidOnly = await apiToken(server, 'iamAdmin', 'openid');
    expect((await failure(users().listPasskeys({ userId: MGMT.alice }, withToken(openidOnly)))).code).toBe(Code.PermissionDenied);
  });

  it('answers InvalidArgument naming the field, and the state of a registration', async () => {
    const admin = as('iamAdmin');
    const fields = await Promise.all([
      failure(users().registerPasskey({ userId: MGMT.alice, authenticator: 7 as PasskeyAuthenticator }, admin)),
      failure(users().registerPasskey({ userId: MGMT.alice, domain: 'example.com' }, admin)),
      failure(users().registerPasskey({ userId: MGMT.alice, code: { id: '', code: 'abc' } }, admin)),
      failure(users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: '1', passkeyName: '', publicKeyCredential: {} }, admin)),
      failure(users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: '1', passkeyName: 'x'.repeat(201), publicKeyCredential: {} }, admin)),
      failure(users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: '1', passkeyName: 'x' }, admin)),
      failure(users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: '', passkeyName: 'x', publicKeyCredential: {} }, admin)),
    ]);
    expect(fields.map((f) => [f.code, f.message.split(':')[0]])).toEqual([
      [Code.InvalidArgument, 'authenticator'],
      [Code.InvalidArgument, 'domain'],
      [Code.InvalidArgument, 'code.id'],
      [Code.InvalidArgument, 'passkeyName'],
      [Code.InvalidArgument, 'passkeyName'],
      [Code.InvalidArgument, 'publicKeyCredential'],
      [Code.InvalidArgument, 'passkeyId'],
    ]);
    expect((await users().registerPasskey({ userId: MGMT.alice, domain: 'LOCALHOST' }, admin)).passkeyId).toMatch(/^\d+$/);

    const registered = await users().registerPasskey({ userId: MGMT.alice }, admin);
    const request = (publicKeyCredential: JsonObject) => ({ userId: MGMT.alice, passkeyId: registered.passkeyId, publicKeyCredential, passkeyName: 'x' });
    expect(await failure(users().verifyPasskeyRegistration(request({ id: 'garbage' }), admin))).toEqual({ code: Code.InvalidArgument, message: expect.stringMatching(/^publicKeyCredential: /) });
    const evil = new SoftAuthenticator('https://evil.example').create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    expect((await failure(users().verifyPasskeyRegistration(request(asJson(evil)), admin))).code).toBe(Code.InvalidArgument);
    expect((await failure(users().verifyPasskeyRegistration({ ...request({}), passkeyId: '1' }, admin))).code).toBe(Code.NotFound);

    // A registration not verified within 5 minutes lapses.
    const good = new SoftAuthenticator(origin).create(publicKeyOf(registered.publicKeyCredentialCreationOptions));
    await server.running.gh.db.updateTable('passkeys').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', registered.passkeyId).execute();
    expect(await failure(users().verifyPasskeyRegistration(request(asJson(good)), admin))).toEqual({ code: Code.FailedPrecondition, message: expect.stringContaining('5 minutes') });

    const again = await users().registerPasskey({ userId: MGMT.alice }, admin);
    const credential = asJson(new SoftAuthenticator(origin).create(publicKeyOf(again.publicKeyCredentialCreationOptions)));
    await users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: again.passkeyId, publicKeyCredential: credential, passkeyName: 'A' }, admin);
    expect((await failure(users().verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: again.passkeyId, publicKeyCredential: credential, passkeyName: 'A' }, admin))).code).toBe(
      Code.FailedPrecondition,
    );
  });
});

describe('over REST', () => {
  const base = `/v2/users/${USERS.restHuman}/passkeys`;

  it('serves the five calls on ZITADEL\'s paths', async () => {
    const admin = tokens.iamAdmin;
    const registered = await rest(server, 'POST', base, admin, { authenticator: 'PASSKEY_AUTHENTICATOR_CROSS_PLATFORM' });
    expect(registered.status).toBe(200);
    const passkeyId = String(registered.json['passkeyId']);
    const options = registered.json['publicKeyCredentialCreationOptions'] as JsonObject;
    expect(options['publicKey']).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { authenticatorAttachment: 'cross-platform' } });
    const credential = new SoftAuthenticator(origin).create(publicKeyOf(options));
    const verified = await rest(server, 'POST', `${base}/${passkeyId}`, admin, { publicKeyCredential: credential, passkeyName: 'Security key' });
    expect(verified.status).toBe(200);
    expect(verified.json['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), resourceOwner: MGMT.org });
    const listed = await rest(server, 'POST', `${base}/_search`, admin, {});
    expect(listed.json['result']).toEqual([{ id: passkeyId, state: 'AUTH_FACTOR_STATE_READY', name: 'Security key' }]);
    const methods = await rest(server, 'GET', `/v2/users/${USERS.restHuman}/authentication_methods`, admin);
    expect(methods.json['authMethodTypes']).toEqual(['AUTHENTICATION_METHOD_TYPE_PASSWORD', 'AUTHENTICATION_METHOD_TYPE_PASSKEY']);
    const link = await rest(server, 'POST', `${base}/registration_link`, admin, { returnCode: {} });
    expect(link.json['code']).toMatchObject({ id: expect.stringMatching(/^\d+$/), code: expect.any(String) });
    expect((await rest(server, 'DELETE', `${base}/${passkeyId}`, admin)).status).toBe(200);
    expect((await rest(server, 'DELETE', `${base}/${passkeyId}`, admin)).status).toBe(404);
  });

  it('answers 4xx, never 500, for bad bodies and each refusal', async () => {
    const admin = tokens.iamAdmin;
    const replies = await Promise.all([
      rest(server, 'POST', base, admin, { authenticator: 'PASSKEY_AUTHENTICATOR_QUANTUM' }),
      rest(server, 'POST', base, admin, { code: 'abc' }),
      rest(server, 'POST', `${base}/1`, admin, { publicKeyCredential: ['x'], passkeyName: 'x' }),
      rest(server, 'POST', `${base}/1`, admin, { publicKeyCredential: { id: 'x' }, passkeyName: 'x' }),
      rest(server, 'POST', `${base}/registration_link`, admin, { sendLink: { urlTemplate: 'ftp://x' } }),
      rest(server, 'POST', `${base}/_search`, tokens.plain, {}),
      rest(server, 'POST', `/v2/users/${USERS.unknown}/passkeys/_search`, admin, {}),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 400, 404, 400, 403, 404]);
    for (const reply of replies) expect(reply.json).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  });
});

describe('on a server whose external URL is an IP address', () => {
  it('answers every passkey call FailedPrecondition, saying why', async () => {
    const users = createClient(UserService, transports(() => disabled)[2]![1]());
    const admin = withToken(await apiToken(disabled, 'iamAdmin'));
    const calls = [
      users.registerPasskey({ userId: MGMT.alice }, admin),
      users.verifyPasskeyRegistration({ userId: MGMT.alice, passkeyId: '1', passkeyName: 'x', publicKeyCredential: {} }, admin),
      users.listPasskeys({ userId: MGMT.alice }, admin),
      users.removePasskey({ userId: MGMT.alice, passkeyId: '1' }, admin),
      users.createPasskeyRegistrationLink({ userId: MGMT.alice }, admin),
    ];
    for (const answer of await Promise.all(calls.map(failure))) {
      expect(answer).toEqual({ code: Code.FailedPrecondition, message: expect.stringMatching(/^passkeys are disabled: .*IP address/) });
    }
    const reply = await rest(disabled, 'POST', `/v2/users/${MGMT.alice}/passkeys`, await apiToken(disabled, 'iamAdmin'), {});
    expect(reply.status).toBe(400);
  });
});
