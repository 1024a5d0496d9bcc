/**
 * zitadel.user.v2.UserService credential calls (docs/management-api.md; docs/security.md 10.1–10.4,
 * 10.13) end to end: a real server, tokens from its token endpoint (administrators by
 * client_credentials, users by a browser sign-in exchanged for tokens), clients built from
 * ZITADEL's own descriptors over gRPC, gRPC-web and Connect, and REST on the paths ZITADEL's protos
 * bind. The story end to end: a machine user gets a key and signs in with the JWT profile grant,
 * gets a secret and uses client_credentials; the secret and the key are removed and stop working at
 * once.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, createClient } from '@connectrpc/connect';
import { TimestampFilterMethod } from '@zitadel/proto/zitadel/filter/v2/filter_pb.js';
import { KeyFieldName } from '@zitadel/proto/zitadel/user/v2/key_pb.js';
import { NotificationType } from '@zitadel/proto/zitadel/user/v2/password_pb.js';
import { AuthenticationMethodType, UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { signAssertion } from '../support/assertions.ts';
import { testKey } from '../support/fixtures.ts';
import { Mailbox, nthMailTo, partOf } from '../mail/mailbox.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiTokens, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';
import { signedInCode } from '../support/sign-in.ts';
import { codeFor } from '../support/totp.ts';

const CALLBACK = 'http://localhost:3000/callback';
const WEB = { clientId: 'cred-web', secret: 'cred-web-secret' };
const USER_SCOPES = ['openid', 'urn:gatehouse:iam:org:project:id:gatehouse:aud'];
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const PASSWORD = 'Correct-Horse-9';

/** One machine user and one human user per transport, so each story starts from the same state. */
const robot = (i: number) => ({ id: `23000000000000000${i}`, userName: `robot-${i}` });
const human = (i: number) => ({ id: `24000000000000000${i}`, userName: `human-${i}`, email: `human-${i}@managed.test` });
const USERS = {
  /** A machine user for the permission rules and listings. */
  robotPerm: '230000000000000009',
  /** Humans for REST, the reset mail, and an unverified address. */
  restHuman: '240000000000000007',
  mailer: '240000000000000008',
  unverified: '240000000000000009',
  unknown: '299999999999999999',
} as const;

let server: TestServer;
let tokens: Record<Caller, string>;
// The mail worker empties a sent (or, without SMTP, logged) message's bodies (docs/security.md 10.2): the test
// reads them from the mail as delivered, since reading the outbox raced the worker.
const mailbox = new Mailbox();

beforeAll(async () => {
  await mailbox.start(0);
  const humans = [0, 1, 2, 3].map((i) => ({ ...human(i), password: PASSWORD, emailVerified: true }));
  server = await startTestServer(
    managementDocument({
      users: [
        ...humans,
        { id: USERS.restHuman, userName: 'rest-human', password: PASSWORD, email: 'rest-human@managed.test', emailVerified: true },
        { id: USERS.mailer, userName: 'mailer', password: PASSWORD, email: 'mailer@managed.test', emailVerified: true, preferredLanguage: 'de', givenName: 'Mia' },
        { id: USERS.unverified, userName: 'unverified', password: PASSWORD, email: 'unverified@managed.test', emailVerified: false },
      ],
      machines: [...[0, 1, 2, 3].map((i) => ({ ...robot(i), accessTokenType: 'opaque' })), { id: USERS.robotPerm, userName: 'robot-perm', accessTokenType: 'jwt' }],
      projects: [
        {
          name: 'credentials',
          apps: [
            {
              name: 'cred-web',
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
    }),
    // Four transports' stories give wrong secrets, codes and passwords from one address within a
    // minute; the per-address limit they count against has its own tests (test/api/secret-throttles.test.ts).
    { GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' },
  );
  tokens = await apiTokens(server);
});
afterAll(() => Promise.all([server.stop(), mailbox.stop()]));

/** A user's own API token: a browser sign-in (with the authenticator app when amr says so), exchanged by cred-web. */
async function userToken(userId: string, amr?: string[]): Promise<string> {
  const issued = await signedInCode(server, { clientId: WEB.clientId, redirectUri: CALLBACK, scopes: USER_SCOPES, userId, ...(amr ? { amr } : {}) });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, {
    authorization: basic(WEB.clientId, WEB.secret),
  });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

/** The JWT profile grant with an assertion signed by a key file's key. */
function jwtProfile(keyFile: { keyId: string; key: string; userId: string }) {
  return signAssertion({ issuer: keyFile.userId, audience: server.url, key: createPrivateKey(keyFile.key), kid: keyFile.keyId }).then((assertion) =>
    postForm(`${server.url}/oauth/v2/token`, { grant_type: JWT_BEARER, assertion, scope: 'openid' }),
  );
}

function clientCredentials(clientId: string, secret: string) {
  return postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic(clientId, secret) });
}

function eventsOf(userId: string) {
  return server.running.gh.db.selectFrom('events').select(['event_type', 'creator']).where('aggregate_id', '=', userId).orderBy('sequence').execute();
}

describe.each(transports(() => server))('over %s', (name, transport) => {
  const i = transports(() => server).findIndex(([n]) => n === name);
  const machine = robot(i);
  const person = human(i);
  const users = () => createClient(UserService, transport());
  const admin = () => withToken(tokens.iamAdmin);

  it('a machine user gets a key, signs in with the JWT profile grant, and the removed key is refused at once', async () => {
    const added = await users().addKey({ userId: machine.id }, admin());
    expect(added.keyId).toMatch(/^\d+$/);
    expect(added.creationDate).toBeDefined();
    const keyFile = JSON.parse(Buffer.from(added.keyContent).toString('utf8')) as Record<string, string>;
    expect(keyFile).toEqual({
      type: 'serviceaccount',
      keyId: added.keyId,
      key: expect.stringMatching(/^-----BEGIN RSA PRIVATE KEY-----/),
      expirationDate: '9999-12-31T23:59:59Z',
      userId: machine.id,
    });
    const stored = await server.running.gh.db.selectFrom('machine_keys').select('public_key').where('id', '=', added.keyId).executeTakeFirstOrThrow();
    expect(stored.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----/);

    const granted = await jwtProfile({ keyId: keyFile['keyId']!, key: keyFile['key']!, userId: machine.id });
    expect(granted.status).toBe(200);
    expect(granted.json['access_token']).toEqual(expect.any(String));

    // A supplied public key: stored, nothing returned, and it signs in too.
    const own = testKey('unused');
    const expiry = new Date(Date.now() + 24 * 3600 * 1000);
    const supplied = await users().addKey({ userId: machine.id, publicKey: Buffer.from(own.publicPem), expirationDate: timestampFromDate(expiry) }, admin());
    expect(supplied.keyContent).toHaveLength(0);
    const ownPem = own.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect((await jwtProfile({ keyId: supplied.keyId, key: ownPem, userId: machine.id })).status).toBe(200);

    const listed = await users().listKeys({ filters: [{ filter: { case: 'userIdFilter', value: { id: machine.id } } }] }, admin());
    expect(listed.pagination?.totalResult).toBe(2n);
    expect(listed.result.map((key) => key.id).sort()).toEqual([added.keyId, supplied.keyId].sort());
    const withExpiry = listed.result.find((key) => key.id === supplied.keyId);
    expect(withExpiry).toMatchObject({ userId: machine.id, organizationId: MGMT.org });
    expect(withExpiry?.expirationDate?.seconds).toBe(BigInt(Math.floor(expiry.getTime() / 1000)));
    expect(listed.result.find((key) => key.id === added.keyId)?.expirationDate).toBeUndefined();

    const removed = await users().removeKey({ userId: machine.id, keyId: added.keyId }, admin());
    expect(removed.deletionDate).toBeDefined();
    const refused = await jwtProfile({ keyId: keyFile['keyId']!, key: keyFile['key']!, userId: machine.id });
    expect(refused.status).toBe(400);
    expect(refused.json['error']).toBe('invalid_grant');
    expect((await failure(users().removeKey({ userId: machine.id, keyId: added.keyId }, admin()))).code).toBe(Code.NotFound);
  });

  it('a machine user gets a secret for client_credentials (client id: its user name); removed, it is invalid_client at once', async () => {
    const added = await users().addSecret({ userId: machine.id }, admin());
    expect(added.clientSecret.length).toBeGreaterThanOrEqual(32);
    const row = await server.running.gh.db.selectFrom('users').select('secret_hash').where('id', '=', machine.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^\$argon2id\$/);
    expect(row.secret_hash).not.toContain(added.clientSecret);

    const granted = await clientCredentials(machine.userName, added.clientSecret);
    expect(granted.status).toBe(200);
    // A new secret replaces the old one.
    const again = await users().addSecret({ userId: machine.id }, admin());
    expect((await clientCredentials(machine.userName, added.clientSecret)).status).toBe(401);
    expect((await clientCredentials(machine.userName, again.clientSecret)).status).toBe(200);

    const removed = await users().removeSecret({ userId: machine.id }, admin());
    expect(removed.deletionDate).toBeDefined();
    const refused = await clientCredentials(machine.userName, again.clientSecret);
    expect(refused.status).toBe(401);
    expect(refused.json['error']).toBe('invalid_client');
    expect((await failure(users().removeSecret({ userId: machine.id }, admin()))).code).toBe(Code.NotFound);

    const events = await eventsOf(machine.id);
    expect(events.filter((e) => e.event_type.startsWith('user.machine.')).map((e) => [e.event_type, e.creator])).toEqual([
      ['user.machine.added', 'bootstrap'],
      ['user.machine.key.added', MGMT.iamAdmin],
      ['user.machine.key.added', MGMT.iamAdmin],
      ['user.machine.key.removed', MGMT.iamAdmin],
      ['user.machine.secret.set', MGMT.iamAdmin],
      ['user.machine.secret.set', MGMT.iamAdmin],
      ['user.machine.secret.removed', MGMT.iamAdmin],
    ]);
  });

  it('an administrator sets a password, resets it with a returned code, and the user changes it with the current one', async () => {
    const set = await users().setPassword({ userId: person.id, newPassword: { password: 'Fresh-Horse-1' } }, admin());
    expect(set.details).toMatchObject({ resourceOwner: MGMT.org, sequence: expect.any(BigInt) });

    const reset = await users().passwordReset({ userId: person.id, medium: { case: 'returnCode', value: {} } }, admin());
    expect(reset.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
    const stored = await server.running.gh.db.selectFrom('password_reset_codes').select('code_hash').where('user_id', '=', person.id).executeTakeFirstOrThrow();
    expect(stored.code_hash).not.toContain(reset.verificationCode);
    await users().setPassword({ userId: person.id, newPassword: { password: 'Reset-Horse-2' }, verification: { case: 'verificationCode', value: reset.verificationCode! } }, admin());
    const reused = await failure(
      users().setPassword({ userId: person.id, newPassword: { password: 'Reset-Horse-3' }, verification: { case: 'verificationCode', value: reset.verificationCode! } }, admin()),
    );
    expect(reused.code).toBe(Code.FailedPrecondition);

    const own = withToken(await userToken(person.id));
    const wrong = await failure(users().setPassword({ userId: person.id, newPassword: { password: 'Own-Horse-4' }, verification: { case: 'currentPassword', value: 'Fresh-Horse-1' } }, own));
    expect(wrong).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining('currentPassword') });
    await users().setPassword({ userId: person.id, newPassword: { password: 'Own-Horse-4' }, verification: { case: 'currentPassword', value: 'Reset-Horse-2' } }, own);
    // The stored password is the last one set: only it passes as the current password.
    await users().setPassword({ userId: person.id, newPassword: { password: PASSWORD }, verification: { case: 'currentPassword', value: 'Own-Horse-4' } }, own);
    const events = (await eventsOf(person.id)).filter((e) => e.event_type.startsWith('user.human.password'));
    expect(events.map((e) => [e.event_type, e.creator])).toEqual([
      ['user.human.password.changed', MGMT.iamAdmin],
      ['user.human.password.code.added', MGMT.iamAdmin],
      ['user.human.password.changed', MGMT.iamAdmin],
      ['user.human.password.changed', person.id],
      ['user.human.password.changed', person.id],
    ]);
  });

  it('an administrator changes the email with a returned code, resends it and verifies it', async () => {
    const address = `changed-${i}@managed.test`;
    const set = await users().setEmail({ userId: person.id, email: address, verification: { case: 'returnCode', value: {} } }, admin());
    expect(set.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
    const resent = await users().resendEmailCode({ userId: person.id, verification: { case: 'returnCode', value: {} } }, admin());
    expect(resent.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
    expect((await failure(users().verifyEmail({ userId: person.id, verificationCode: resent.verificationCode === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' }, admin()))).code).toBe(Code.InvalidArgument);
    const verified = await users().verifyEmail({ userId: person.id, verificationCode: resent.verificationCode! }, admin());
    expect(verified.details?.resourceOwner).toBe(MGMT.org);
    const row = await server.running.gh.db.selectFrom('users').select(['email', 'email_verified']).where('id', '=', person.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: address, email_verified: true });
    expect((await failure(users().resendEmailCode({ userId: person.id, verification: { case: 'returnCode', value: {} } }, admin()))).code).toBe(Code.FailedPrecondition);
    // An administrator may vouch for an address of another user.
    await users().setEmail({ userId: person.id, email: person.email, verification: { case: 'isVerified', value: true } }, admin());
  });

  it('the user registers an authenticator app, verifies it, and an administrator removes it', async () => {
    const own = withToken(await userToken(person.id));
    const registered = await users().registerTOTP({ userId: person.id }, own);
    expect(registered.uri).toMatch(new RegExp(`^otpauth://totp/.+:${person.userName}%40managed\\.test\\?`));
    expect(registered.secret).toMatch(/^[A-Z2-7]+$/);
    const factor = await server.running.gh.db.selectFrom('otp_factors').select('secret').where('user_id', '=', person.id).executeTakeFirstOrThrow();
    expect(factor.secret.startsWith('v1.')).toBe(true);
    expect(factor.secret).not.toContain(registered.secret);

    expect((await failure(users().verifyTOTPRegistration({ userId: person.id, code: '000000' === codeFor(registered.secret) ? '111111' : '000000' }, own))).code).toBe(Code.InvalidArgument);
    await users().verifyTOTPRegistration({ userId: person.id, code: codeFor(registered.secret) }, own);
    expect((await failure(users().registerTOTP({ userId: person.id }, own))).code).toBe(Code.AlreadyExists);
    const methods = await users().listAuthenticationMethodTypes({ userId: person.id }, own);
    expect(methods.authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD, AuthenticationMethodType.TOTP]);
    expect(methods.details?.totalResult).toBe(2n);

    // docs/security.md 10.4: the user itself needs a sign-in that used the factor; an administrator does not.
    expect((await failure(users().removeTOTP({ userId: person.id }, own))).code).toBe(Code.PermissionDenied);
    await users().removeTOTP({ userId: person.id }, admin());
    expect((await users().listAuthenticationMethodTypes({ userId: person.id }, admin())).authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD]);
    expect((await failure(users().removeTOTP({ userId: person.id }, admin()))).code).toBe(Code.NotFound);
  });
});

describe('the user itself', () => {
  const users = () => createClient(UserService, transports(() => server)[0]![1]());

  it('gets its reset code by mail only, with a link where the template leads, and sets its password with it', async () => {
    const own = withToken(await userToken(USERS.mailer));
    expect((await failure(users().passwordReset({ userId: USERS.mailer, medium: { case: 'returnCode', value: {} } }, own))).code).toBe(Code.PermissionDenied);
    const outside = await failure(
      users().passwordReset({ userId: USERS.mailer, medium: { case: 'sendLink', value: { notificationType: NotificationType.Email, urlTemplate: 'https://evil.test/?c={{.Code}}' } } }, own),
    );
    expect(outside).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining('sendLink.urlTemplate') });

    const template = `${server.url}/reset?user={{.UserID}}&code={{.Code}}`;
    const sent = await users().passwordReset({ userId: USERS.mailer, medium: { case: 'sendLink', value: { notificationType: NotificationType.Email, urlTemplate: template } } }, own);
    expect(sent.verificationCode).toBeUndefined();
    const text = partOf((await nthMailTo(mailbox, 'mailer@managed.test', 1)).raw, 'text/plain') ?? '';
    const row = await server.running.gh.db.selectFrom('outbox').select('subject').where('recipient', '=', 'mailer@managed.test').executeTakeFirstOrThrow();
    expect(row.subject).toBe('Setze dein Passwort zurück');
    expect(text).toContain('Hallo Mia,');
    const code = /Code zum Zurücksetzen: ([A-Z0-9]{6})/.exec(text)?.[1];
    expect(code).toBeDefined();
    expect(text).toContain(`${server.url}/reset?user=${USERS.mailer}&code=${code}`);

    const withoutProof = await failure(users().setPassword({ userId: USERS.mailer, newPassword: { password: 'Mailed-Horse-5' } }, own));
    expect(withoutProof.code).toBe(Code.PermissionDenied);
    await users().setPassword({ userId: USERS.mailer, newPassword: { password: 'Mailed-Horse-5' }, verification: { case: 'verificationCode', value: code!.toLowerCase() } }, own);
  });

  it('may not vouch for its own address nor take a code, and gets no mail at an unverified address', async () => {
    const own = withToken(await userToken(USERS.unverified));
    const vouched = await failure(users().setEmail({ userId: USERS.unverified, email: 'me@managed.test', verification: { case: 'isVerified', value: true } }, own));
    expect(vouched.code).toBe(Code.PermissionDenied);
    const returned = await failure(users().resendEmailCode({ userId: USERS.unverified, verification: { case: 'returnCode', value: {} } }, own));
    expect(returned.code).toBe(Code.PermissionDenied);
    const reset = await failure(users().passwordReset({ userId: USERS.unverified, medium: { case: 'sendLink', value: { notificationType: NotificationType.Email } } }, own));
    expect(reset.code).toBe(Code.FailedPrecondition);
    // A wrong current password counts towards the lockout (docs/security.md 10.11).
    await failure(users().setPassword({ userId: USERS.unverified, newPassword: { password: 'Other-Horse-6' }, verification: { case: 'currentPassword', value: 'wrong' } }, own));
    const row = await server.running.gh.db.selectFrom('users').select('failed_attempts').where('id', '=', USERS.unverified).executeTakeFirstOrThrow();
    expect(row.failed_attempts).toBe(1);
  });

  it('removes its ready authenticator app only with a token from a sign-in that used it', async () => {
    const own = withToken(await userToken(USERS.restHuman));
    const registered = await users().registerTOTP({ userId: USERS.restHuman }, own);
    await users().verifyTOTPRegistration({ userId: USERS.restHuman, code: codeFor(registered.secret) }, own);
    const withOtp = withToken(await userToken(USERS.restHuman, ['pwd', 'otp', 'mfa']));
    await users().removeTOTP({ userId: USERS.restHuman }, withOtp);
    expect((await users().listAuthenticationMethodTypes({ userId: USERS.restHuman }, own)).authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD]);
  });
});

describe('permissions', () => {
  const users = () => createClient(UserService, transports(() => server)[2]![1]());
  const as = (caller: Caller) => withToken(tokens[caller]);

  it('an ORG_OWNER manages its own organization\'s users, but not a holder of an instance-wide role nor other organizations', async () => {
    const newPassword = { password: 'Owner-Set-7' };
    await users().setPassword({ userId: MGMT.alice, newPassword }, as('orgAdmin'));
    expect((await failure(users().setPassword({ userId: MGMT.instanceOwner, newPassword }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().setPassword({ userId: MGMT.alice, newPassword }, as('otherAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().setPassword({ userId: MGMT.alice, newPassword }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().registerTOTP({ userId: MGMT.alice }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().listAuthenticationMethodTypes({ userId: MGMT.instanceOwner }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    // A missing user: NotFound for an IAM_OWNER, the same PermissionDenied as a foreign user for others.
    expect((await failure(users().setPassword({ userId: USERS.unknown, newPassword }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(users().setPassword({ userId: USERS.unknown, newPassword }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    const code = await users().passwordReset({ userId: MGMT.alice, medium: { case: 'returnCode', value: {} } }, as('orgAdmin'));
    expect(code.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
  });

  it('keys and secrets are for administrators of machine users only', async () => {
    await users().addSecret({ userId: USERS.robotPerm }, as('orgAdmin'));
    await users().removeSecret({ userId: USERS.robotPerm }, as('orgAdmin'));
    expect((await failure(users().addSecret({ userId: MGMT.iamAdmin }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().addSecret({ userId: USERS.robotPerm }, as('otherAdmin')))).code).toBe(Code.PermissionDenied);
    // No self-service for machine users.
    expect((await failure(users().addSecret({ userId: MGMT.plain }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().addKey({ userId: MGMT.plain }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users().addKey({ userId: MGMT.alice }, as('iamAdmin')))).code).toBe(Code.FailedPrecondition);
    expect((await failure(users().addSecret({ userId: MGMT.alice }, as('iamAdmin')))).code).toBe(Code.FailedPrecondition);
    expect((await failure(users().registerTOTP({ userId: USERS.robotPerm }, as('iamAdmin')))).code).toBe(Code.FailedPrecondition);
    expect((await failure(users().setPassword({ userId: USERS.robotPerm, newPassword: { password: 'Robot-Horse-8' } }, as('iamAdmin')))).code).toBe(Code.FailedPrecondition);
  });

  it('lists keys a caller manages, with filters, sorting and paging', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const key = testKey('unused');
      ids.push((await users().addKey({ userId: USERS.robotPerm, publicKey: Buffer.from(key.publicPem) }, as('orgAdmin'))).keyId);
    }
    const adminKey = await users().addKey({ userId: MGMT.iamAdmin, publicKey: Buffer.from(testKey('unused').publicPem) }, as('iamAdmin'));
    const byUser = { filter: { case: 'userIdFilter' as const, value: { id: USERS.robotPerm } } };

    const page = await users().listKeys({ filters: [byUser], pagination: { offset: 0n, limit: 2, asc: true }, sortingColumn: KeyFieldName.ID }, as('orgAdmin'));
    expect(page.pagination).toMatchObject({ totalResult: 3n, appliedLimit: 2n });
    expect(page.result.map((key) => key.id)).toEqual([...ids].sort().slice(0, 2));
    const rest = await users().listKeys({ filters: [byUser], pagination: { offset: 2n, limit: 2, asc: true }, sortingColumn: KeyFieldName.ID }, as('orgAdmin'));
    expect(rest.result.map((key) => key.id)).toEqual([...ids].sort().slice(2));
    const descending = await users().listKeys({ filters: [byUser], pagination: { offset: 0n, limit: 1, asc: false }, sortingColumn: KeyFieldName.ID }, as('orgAdmin'));
    expect(descending.result.map((key) => key.id)).toEqual([...ids].sort().slice(2));

    // An ORG_OWNER does not see the keys of a user holding an instance-wide role; an IAM_OWNER does.
    const mine = await users().listKeys({ filters: [{ filter: { case: 'organizationIdFilter', value: { id: MGMT.org } } }] }, as('orgAdmin'));
    expect(mine.result.map((key) => key.id)).not.toContain(adminKey.keyId);
    const all = await users().listKeys({ filters: [{ filter: { case: 'keyIdFilter', value: { id: adminKey.keyId } } }] }, as('iamAdmin'));
    expect(all.result.map((key) => key.id)).toEqual([adminKey.keyId]);
    expect((await users().listKeys({ filters: [byUser] }, as('otherAdmin'))).pagination?.totalResult).toBe(0n);
    expect((await failure(users().listKeys({}, as('plain')))).code).toBe(Code.PermissionDenied);

    const created = { filter: { case: 'createdDateFilter' as const, value: { timestamp: timestampFromDate(new Date(Date.now() + 3600_000)), method: TimestampFilterMethod.BEFORE } } };
    expect((await users().listKeys({ filters: [byUser, created] }, as('orgAdmin'))).pagination?.totalResult).toBe(3n);
    const expiring = { filter: { case: 'expirationDateFilter' as const, value: { timestamp: timestampFromDate(new Date()), method: TimestampFilterMethod.BEFORE } } };
    expect((await users().listKeys({ filters: [byUser, expiring] }, as('orgAdmin'))).pagination?.totalResult).toBe(0n);
  });
});

describe('bad input', () => {
  const users = () => createClient(UserService, transports(() => server)[3]![1]());
  const admin = () => withToken(tokens.iamAdmin);

  it('answers InvalidArgument naming the field', async () => {
    // A pending reset code, so that a wrong one is refused as wrong.
    await users().passwordReset({ userId: MGMT.alice, medium: { case: 'returnCode', value: {} } }, admin());
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => users().setPassword({ userId: MGMT.alice, newPassword: { password: 'short' } }, admin()), 'newPassword.password'],
      [() => users().setPassword({ userId: MGMT.alice, newPassword: { password: 'x'.repeat(300) } }, admin()), 'newPassword.password'],
      [() => users().setPassword({ userId: MGMT.alice }, admin()), 'newPassword'],
      [() => users().setPassword({ userId: MGMT.alice, newPassword: { password: 'Fine-Horse-9', changeRequired: true } }, admin()), 'newPassword.changeRequired'],
      [() => users().setPassword({ userId: MGMT.alice, newPassword: { password: 'Fine-Horse-9' }, verification: { case: 'verificationCode', value: 'WRONG1' } }, admin()), 'verificationCode'],
      [() => users().passwordReset({ userId: MGMT.alice, medium: { case: 'sendLink', value: { notificationType: NotificationType.SMS } } }, admin()), 'sendLink.notificationType'],
      [() => users().passwordReset({ userId: MGMT.alice, medium: { case: 'sendLink', value: { notificationType: 7 as NotificationType } } }, admin()), 'sendLink.notificationType'],
      [() => users().passwordReset({ userId: MGMT.alice, medium: { case: 'sendLink', value: { notificationType: NotificationType.Email, urlTemplate: 'ftp://x/{{.Code}}' } } }, admin()), 'sendLink.urlTemplate'],
      [() => users().setEmail({ userId: MGMT.alice, email: 'not an address' }, admin()), 'email'],
      [() => users().setEmail({ userId: MGMT.alice, email: 'a@managed.test', verification: { case: 'sendCode', value: { urlTemplate: 'http://x/{{.Nope}}' } } }, admin()), 'sendCode.urlTemplate'],
      [() => users().verifyEmail({ userId: MGMT.alice, verificationCode: ' ' }, admin()), 'verificationCode'],
      [() => users().verifyTOTPRegistration({ userId: MGMT.alice, code: '' }, admin()), 'code'],
      [() => users().addKey({ userId: USERS.robotPerm, publicKey: Buffer.from('not a key') }, admin()), 'publicKey'],
      [() => users().addKey({ userId: USERS.robotPerm, publicKey: Buffer.from(rsaPem(1024)) }, admin()), 'publicKey'],
      [() => users().addKey({ userId: USERS.robotPerm, publicKey: Buffer.from(privatePem()) }, admin()), 'publicKey'],
      [() => users().addKey({ userId: USERS.robotPerm, publicKey: new Uint8Array(10_000).fill(65) }, admin()), 'publicKey'],
      [() => users().addKey({ userId: USERS.robotPerm, expirationDate: timestampFromDate(new Date(Date.now() - 1000)) }, admin()), 'expirationDate'],
      [() => users().addKey({ userId: USERS.robotPerm, expirationDate: { seconds: 1n << 50n, nanos: 0 } }, admin()), 'expirationDate'],
      [() => users().removeKey({ userId: USERS.robotPerm, keyId: '' }, admin()), 'keyId'],
      [() => users().listKeys({ sortingColumn: 99 as KeyFieldName }, admin()), 'sortingColumn'],
      [() => users().listKeys({ filters: [{ filter: { case: 'createdDateFilter', value: { method: TimestampFilterMethod.AFTER } } }] }, admin()), 'filters[0].createdDateFilter.timestamp'],
      [() => users().listKeys({ filters: [{ filter: { case: undefined } }] }, admin()), 'filters[0]'],
      [() => users().listKeys({ pagination: { offset: 0n, limit: 5000, asc: true } }, admin()), 'pagination.limit'],
    ];
    for (const [call, field] of cases) {
      const outcome = await failure(call());
      expect({ field, code: outcome.code, message: outcome.message.startsWith(field) }).toEqual({ field, code: Code.InvalidArgument, message: true });
    }
  });
});

describe('over REST', () => {
  const path = (suffix: string) => `/v2/users/${USERS.restHuman}${suffix}`;

  it('serves every credential call ZITADEL binds to a path', async () => {
    const admin = tokens.iamAdmin;
    const set = await rest(server, 'POST', path('/password'), admin, { newPassword: { password: 'Rest-Horse-1' } });
    expect(set.status).toBe(200);
    expect(set.json['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), resourceOwner: MGMT.org });
    const reset = await rest(server, 'POST', path('/password_reset'), admin, { returnCode: {} });
    expect(reset.json['verificationCode']).toMatch(/^[A-Z0-9]{6}$/);
    const own = await userToken(USERS.restHuman);
    expect((await rest(server, 'POST', path('/password'), own, { newPassword: { password: 'Rest-Horse-2' }, verificationCode: reset.json['verificationCode'] })).status).toBe(200);
    // a password set with a reset code ends every token of the user, the one it was set with included
    expect((await rest(server, 'POST', path('/password'), own, { newPassword: { password: 'Rest-Horse-3' }, currentPassword: 'Rest-Horse-2' })).status).toBe(401);
    const again = await userToken(USERS.restHuman);
    expect((await rest(server, 'POST', path('/password'), again, { newPassword: { password: 'Rest-Horse-3' }, currentPassword: 'Rest-Horse-2' })).status).toBe(200);

    const email = await rest(server, 'POST', path('/email'), admin, { email: 'rest@managed.test', returnCode: {} });
    expect(email.status).toBe(200);
    const resent = await rest(server, 'POST', path('/email/resend'), admin, { returnCode: {} });
    expect(resent.json['verificationCode']).toMatch(/^[A-Z0-9]{6}$/);
    expect((await rest(server, 'POST', path('/email/verify'), admin, { verificationCode: resent.json['verificationCode'] })).status).toBe(200);

    const totp = await rest(server, 'POST', path('/totp'), again, {});
    expect(totp.status).toBe(200);
    expect(totp.json['uri']).toMatch(/^otpauth:\/\/totp\//);
    expect((await rest(server, 'POST', path('/totp/verify'), again, { code: codeFor(String(totp.json['secret'])) })).status).toBe(200);
    const methods = await rest(server, 'GET', path('/authentication_methods'), again);
    expect(methods.json['authMethodTypes']).toEqual(['AUTHENTICATION_METHOD_TYPE_PASSWORD', 'AUTHENTICATION_METHOD_TYPE_TOTP']);
    expect(methods.json['details']).toMatchObject({ totalResult: '2' });
    const removed = await rest(server, 'DELETE', path('/totp'), admin);
    expect(removed.status).toBe(200);
    expect(removed.json['details']).toMatchObject({ resourceOwner: MGMT.org });
  });

  it('answers 4xx, never 500, for bad bodies, and the REST status of each refusal', async () => {
    const admin = tokens.iamAdmin;
    const statuses = await Promise.all([
      rest(server, 'POST', path('/password'), admin, { newPassword: 'Rest-Horse-1' }),
      rest(server, 'POST', path('/password'), admin, { newPassword: { password: 12 } }),
      rest(server, 'POST', path('/password'), admin, { newPassword: { password: 'A'.repeat(60_000) } }),
      rest(server, 'POST', path('/password_reset'), admin, { sendLink: { notificationType: 'NOTIFICATION_TYPE_FAX' } }),
      rest(server, 'POST', path('/totp/verify'), admin, { code: ['123456'] }),
      rest(server, 'POST', path('/email'), admin, { email: { address: 'x@managed.test' } }),
      rest(server, 'POST', path('/password'), tokens.plain, { newPassword: { password: 'Rest-Horse-1' } }),
      rest(server, 'GET', `/v2/users/${USERS.unknown}/authentication_methods`, admin),
      rest(server, 'POST', `/v2/users/${USERS.robotPerm}/totp`, admin, {}),
    ]);
    expect(statuses.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 400, 400, 403, 404, 400]);
    for (const reply of statuses) expect(reply.json).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  });
});

function rsaPem(bits: number): string {
  return generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

function privatePem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
