/**
 * Adding a sign-in credential for oneself needs a recent sign-in that used every factor
 * (docs/security.md 10.17, docs/passkeys.md; the second outside review's F16), replayed against a
 * real server through real protocol clients: REST on ZITADEL's paths as the report used it, gRPC
 * with ZITADEL's own descriptors, openid-client for the sign-ins and the token exchange, and a
 * software authenticator (support/webauthn.ts) in the browser's place.
 *
 * The rule: RegisterPasskey / VerifyPasskeyRegistration without a registration code, AddMyAuthFactorOTP /
 * VerifyMyAuthFactorOTP and RegisterTOTP / VerifyTOTPRegistration for oneself need a sign-in of the user
 * itself (no `act`) within the last 10 minutes whose `amr` covers every factor the user has (`otp` once
 * an authenticator app is ready; a passkey sign-in, `mfa`, counts for all); otherwise PermissionDenied
 * "... sign in again". Calls that would add nothing keep their answers, and an administrator acting on
 * another user is not asked. The sign-ins are made with support/sign-in.ts, which sets `amr` and
 * `auth_time` as the login UI would have recorded them; the codes are exchanged at the real token
 * endpoint.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, createClient } from '@connectrpc/connect';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { finishPasskeySignIn, startPasskeySignIn } from '../../src/domain/passkeys/passkey-sign-in.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, failure, managementDocument, rest, transports, withToken } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';
import { codeFor } from '../support/totp.ts';
import { SoftAuthenticator } from '../support/webauthn.ts';

const PASSWORD = 'Correct-Horse-9';
const CALLBACK = 'http://localhost:3000/callback';
const APP = { clientId: 'fresh-web', secret: 'fresh-web-secret' };
const API_AUDIENCE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const OTP_PATH = '/auth/v1/users/me/auth_factors/otp';
const SIGN_IN_AGAIN = /sign in again/;
/** `amr` of a sign-in with the password and the authenticator app, and of a passkey sign-in. */
const PASSWORD_AND_OTP = ['pwd', 'otp', 'mfa'];
const PASSWORD_ONLY = ['pwd'];

const USERS = {
  /** The report's user: no authenticator app at first. */
  replay: '216000000000000001',
  /** Has a passkey and no authenticator app. */
  keyholder: '216000000000000002',
  /** Sets up its authenticator app over REST (AuthService). */
  otpSelf: '216000000000000003',
  /** Sets up its authenticator app over gRPC (UserService RegisterTOTP). */
  totpSelf: '216000000000000004',
  /** IAM_ADMIN_IMPERSONATOR. */
  impersonator: '216000000000000005',
  /** A human ORG_OWNER of the organization. */
  owner: '216000000000000006',
  /** Gets credentials from administrators. */
  managed: '216000000000000007',
} as const;

let server: TestServer;
let origin: string;
let config: client.Configuration;
/** IAM_OWNER (machine, client_credentials). */
let admin: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://localhost:${port}`;
  const human = (id: string, userName: string, roles: string[] = []) => ({
    id,
    userName,
    password: PASSWORD,
    email: `${userName}@managed.test`,
    emailVerified: true,
    givenName: userName,
    ...(roles.length > 0 ? { roles } : {}),
  });
  const document = managementDocument({
    users: [
      human(USERS.replay, 'fsixteen'),
      human(USERS.keyholder, 'keyholder'),
      human(USERS.otpSelf, 'otp-self'),
      human(USERS.totpSelf, 'totp-self'),
      human(USERS.impersonator, 'impersonator', ['IAM_ADMIN_IMPERSONATOR']),
      human(USERS.owner, 'owner-human', ['ORG_OWNER']),
      human(USERS.managed, 'managed'),
    ],
    projects: [
      {
        name: 'fresh',
        apps: [
          {
            name: 'fresh-web',
            clientId: APP.clientId,
            clientSecret: APP.secret,
            authMethod: 'client_secret_basic',
            redirectUris: [CALLBACK],
            responseTypes: ['code'],
            grantTypes: ['authorization_code', TOKEN_EXCHANGE],
            accessTokenType: 'jwt',
          },
        ],
      },
    ],
  });
  // passkeys need a relying party id: the external URL is on localhost
  server = await startTestServer(
    { ...document, features: { oidcTokenExchange: true }, security: { enableImpersonation: true } },
    { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin },
  );
  config = await client.discovery(new URL(origin), APP.clientId, undefined, client.ClientSecretBasic(APP.secret), { execute: [client.allowInsecureRequests] });
  admin = await apiToken(server, 'iamAdmin');
});
afterAll(() => server?.stop());

/**
 * The access token of a sign-in of `userId` at fresh-web with the API audience: `amr` as the login UI
 * records it, `minutesAgo` how long ago the user authenticated. The code is redeemed by openid-client.
 */
async function userToken(userId: string, amr: string[], minutesAgo = 0): Promise<string> {
  const issued = await signedInCode(server, {
    clientId: APP.clientId,
    redirectUri: CALLBACK,
    scopes: ['openid', API_AUDIENCE],
    userId,
    pkce: true,
    amr,
    ...(minutesAgo > 0 ? { authTime: new Date(Date.now() - minutesAgo * 60_000) } : {}),
  });
  // the authorization response as the login UI sends it: `iss` is the external URL (the issuer)
  const callback = new URL(issued.callback);
  callback.searchParams.set('iss', origin);
  const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: issued.state, expectedNonce: issued.nonce, pkceCodeVerifier: issued.verifier! });
  const claims = decodeJwt(tokens.access_token);
  expect(claims).toMatchObject({ sub: userId, amr });
  expect(claims.act).toBeUndefined();
  return tokens.access_token;
}

/** The options RegisterPasskey returns, as navigator.credentials.create() takes them. */
function publicKeyOf(options: unknown): Parameters<SoftAuthenticator['create']>[0] {
  const publicKey = (options as { publicKey?: unknown } | undefined)?.publicKey;
  if (typeof publicKey !== 'object' || publicKey === null || Array.isArray(publicKey)) throw new Error('no publicKey options');
  return publicKey as Parameters<SoftAuthenticator['create']>[0];
}

/** POST /v2/users/{id}/passkeys (RegisterPasskey, no code). */
function registerPasskey(userId: string, token: string) {
  return rest(server, 'POST', `/v2/users/${userId}/passkeys`, token, {});
}

/** POST /v2/users/{id}/passkeys/{passkeyId} (VerifyPasskeyRegistration). */
function verifyPasskey(userId: string, passkeyId: string, credential: Record<string, unknown>, token: string, name = 'Key') {
  return rest(server, 'POST', `/v2/users/${userId}/passkeys/${passkeyId}`, token, { publicKeyCredential: credential, passkeyName: name });
}

/** A registration started with `token` and answered by a new credential of `authenticator`. */
async function startedRegistration(userId: string, token: string, authenticator: SoftAuthenticator): Promise<{ passkeyId: string; credential: Record<string, unknown> }> {
  const started = await registerPasskey(userId, token);
  expect(started.status).toBe(200);
  const passkeyId = String(started.json['passkeyId']);
  return { passkeyId, credential: authenticator.create(publicKeyOf(started.json['publicKeyCredentialCreationOptions'])) };
}

/** The user's passkeys as an administrator lists them: [state, name]. */
async function passkeysOf(userId: string): Promise<Array<[unknown, unknown]>> {
  const listed = await rest(server, 'POST', `/v2/users/${userId}/passkeys/_search`, admin, {});
  expect(listed.status).toBe(200);
  return ((listed.json['result'] as Array<Record<string, unknown>> | undefined) ?? []).map((p) => [p['state'], p['name']]);
}

/** The REST answer of a refusal for want of a fresh, full sign-in. */
const SIGN_IN_REFUSAL = { status: 403, json: expect.objectContaining({ code: Code.PermissionDenied, message: expect.stringMatching(SIGN_IN_AGAIN) }) };

/** Sets up and verifies an authenticator app over REST with `token`; the secret. */
async function enrolOtp(token: string): Promise<string> {
  const added = await rest(server, 'POST', OTP_PATH, token, {});
  expect(added.status).toBe(200);
  const secret = String(added.json['secret']);
  // the previous step's code: the current one stays unused for a sign-in that follows
  const verified = await rest(server, 'POST', `${OTP_PATH}/_verify`, token, { code: codeFor(secret, Date.now() - 30_000) });
  expect(verified.status).toBe(200);
  return secret;
}

/** A username-less passkey sign-in with the authenticator, through the domain functions the login UI calls. */
async function passkeySignIn(authenticator: SoftAuthenticator) {
  const { gh } = server.running;
  const challenge = await startPasskeySignIn(gh);
  return finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential: authenticator.get(challenge.options) });
}

describe('RegisterPasskey and VerifyPasskeyRegistration for oneself (F16, REST as in the report)', () => {
  it('a password-only token from before the authenticator app cannot add a passkey; a fresh sign-in with the app can', async () => {
    // the report: `old` from a password sign-in, then the authenticator app is set up with another sign-in
    const old = await userToken(USERS.replay, PASSWORD_ONLY);
    const enrolling = await userToken(USERS.replay, PASSWORD_ONLY);
    await enrolOtp(enrolling);

    // docs/security.md 10.4 holds: `old` cannot remove the app
    expect((await rest(server, 'DELETE', OTP_PATH, old)).status).toBe(403);
    // ... and may not add a passkey that would stand in for it
    expect(await registerPasskey(USERS.replay, old)).toEqual(SIGN_IN_REFUSAL);
    // a password-only sign-in made now is no better: it did not use the app
    expect(await registerPasskey(USERS.replay, enrolling)).toEqual(SIGN_IN_REFUSAL);

    // a sign-in with the password and the app starts a registration; only such a sign-in finishes it
    const full = await userToken(USERS.replay, PASSWORD_AND_OTP);
    const authenticator = new SoftAuthenticator(origin);
    const { passkeyId, credential } = await startedRegistration(USERS.replay, full, authenticator);
    expect(await verifyPasskey(USERS.replay, passkeyId, credential, old)).toEqual(SIGN_IN_REFUSAL);
    expect(await verifyPasskey(USERS.replay, passkeyId, credential, enrolling)).toEqual(SIGN_IN_REFUSAL);
    expect(await passkeysOf(USERS.replay)).toEqual([['AUTH_FACTOR_STATE_NOT_READY', undefined]]); // pending, no name yet
    expect(await passkeySignIn(authenticator)).toEqual({ kind: 'refused' });

    const verified = await verifyPasskey(USERS.replay, passkeyId, credential, full, 'Phone');
    expect(verified.status).toBe(200);
    expect(await passkeysOf(USERS.replay)).toEqual([['AUTH_FACTOR_STATE_READY', 'Phone']]);
    expect(await passkeySignIn(authenticator)).toMatchObject({ kind: 'signed_in', userId: USERS.replay, amr: ['user', 'mfa'] });
  });

  it('the sign-in must be within the last 10 minutes', async () => {
    const stale = await userToken(USERS.replay, PASSWORD_AND_OTP, 11);
    expect(await registerPasskey(USERS.replay, stale)).toEqual(SIGN_IN_REFUSAL);
    // a registration started in time is not finished with the stale token either
    const recent = await userToken(USERS.replay, PASSWORD_AND_OTP, 9);
    const { passkeyId, credential } = await startedRegistration(USERS.replay, recent, new SoftAuthenticator(origin));
    expect(await verifyPasskey(USERS.replay, passkeyId, credential, stale)).toEqual(SIGN_IN_REFUSAL);
    expect((await verifyPasskey(USERS.replay, passkeyId, credential, recent, 'Laptop')).status).toBe(200);

    // a new token for the stale one (token exchange, no actor) is no fresher: it keeps the sign-in's auth_time
    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: stale,
      subject_token_type: TOKEN_TYPE.access,
      scope: `openid ${API_AUDIENCE}`,
      requested_token_type: TOKEN_TYPE.jwt,
    });
    const renewed = decodeJwt(exchanged.access_token);
    expect(renewed).toMatchObject({ sub: USERS.replay, amr: PASSWORD_AND_OTP, auth_time: decodeJwt(stale)['auth_time'] });
    expect(renewed.act).toBeUndefined();
    expect(await registerPasskey(USERS.replay, exchanged.access_token)).toEqual(SIGN_IN_REFUSAL);
  });

  it('an impersonation token of the user is refused, over REST and gRPC, whatever the impersonator signed in with', async () => {
    // the impersonator's own sign-in used every factor and is fresh: the token's amr and auth_time are its
    const actor = await userToken(USERS.impersonator, PASSWORD_AND_OTP);
    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: USERS.replay,
      subject_token_type: TOKEN_TYPE.userId,
      actor_token: actor,
      actor_token_type: TOKEN_TYPE.access,
      scope: `openid ${API_AUDIENCE}`,
      requested_token_type: TOKEN_TYPE.jwt,
    });
    const impersonation = exchanged.access_token;
    expect(decodeJwt(impersonation)).toMatchObject({ sub: USERS.replay, act: { sub: USERS.impersonator }, amr: PASSWORD_AND_OTP });

    expect(await registerPasskey(USERS.replay, impersonation)).toEqual(SIGN_IN_REFUSAL);
    const users = createClient(UserService, transports(() => server)[0]![1]());
    expect(await failure(users.registerPasskey({ userId: USERS.replay }, withToken(impersonation)))).toEqual({ code: Code.PermissionDenied, message: expect.stringMatching(SIGN_IN_AGAIN) });
    // nor does it finish a registration the user started
    const full = await userToken(USERS.replay, PASSWORD_AND_OTP);
    const { passkeyId, credential } = await startedRegistration(USERS.replay, full, new SoftAuthenticator(origin));
    const request = { userId: USERS.replay, passkeyId, publicKeyCredential: credential as JsonObject, passkeyName: 'Planted' };
    expect(await failure(users.verifyPasskeyRegistration(request, withToken(impersonation)))).toEqual({ code: Code.PermissionDenied, message: expect.stringMatching(SIGN_IN_AGAIN) });
    expect((await passkeysOf(USERS.replay)).map(([, name]) => name)).not.toContain('Planted');
  });

  it('administrators acting on another user are not asked (what the product does); acting on itself, an administrator is', async () => {
    // IAM_OWNER machine user (client_credentials: no sign-in at all), over gRPC
    const users = createClient(UserService, transports(() => server)[0]![1]());
    const started = await users.registerPasskey({ userId: USERS.managed }, withToken(admin));
    const credential = new SoftAuthenticator(origin).create(publicKeyOf(started.publicKeyCredentialCreationOptions));
    await users.verifyPasskeyRegistration({ userId: USERS.managed, passkeyId: started.passkeyId, publicKeyCredential: credential as JsonObject, passkeyName: 'By IAM' }, withToken(admin));

    // a human ORG_OWNER whose password-only sign-in is 11 minutes old still adds one to a user it manages
    const owner = await userToken(USERS.owner, PASSWORD_ONLY, 11);
    const { passkeyId, credential: second } = await startedRegistration(USERS.managed, owner, new SoftAuthenticator(origin));
    expect((await verifyPasskey(USERS.managed, passkeyId, second, owner, 'By owner')).status).toBe(200);
    expect(await passkeysOf(USERS.managed)).toEqual([
      ['AUTH_FACTOR_STATE_READY', 'By IAM'],
      ['AUTH_FACTOR_STATE_READY', 'By owner'],
    ]);
    // ... but not to itself with that sign-in: for itself it is a user like any other
    expect(await registerPasskey(USERS.owner, owner)).toEqual(SIGN_IN_REFUSAL);
  });
});

describe('every factor the user has (sessionMeetsFactors)', () => {
  it('a user with a passkey and no authenticator app adds one with a fresh password sign-in; once the app is ready, a passkey sign-in counts for all', async () => {
    // the first passkey comes from an administrator
    const first = new SoftAuthenticator(origin);
    const byAdmin = await startedRegistration(USERS.keyholder, admin, first);
    expect((await verifyPasskey(USERS.keyholder, byAdmin.passkeyId, byAdmin.credential, admin, 'First')).status).toBe(200);

    // every factor is the password (a passkey is another way in, not a second factor it must use)
    const password = await userToken(USERS.keyholder, PASSWORD_ONLY);
    const second = await startedRegistration(USERS.keyholder, password, new SoftAuthenticator(origin));
    expect((await verifyPasskey(USERS.keyholder, second.passkeyId, second.credential, password, 'Second')).status).toBe(200);
    // still within 10 minutes only
    expect(await registerPasskey(USERS.keyholder, await userToken(USERS.keyholder, PASSWORD_ONLY, 11))).toEqual(SIGN_IN_REFUSAL);

    // the authenticator app becomes ready: the password alone is no longer every factor
    await enrolOtp(password);
    expect(await registerPasskey(USERS.keyholder, password)).toEqual(SIGN_IN_REFUSAL);

    // a sign-in with the first passkey (amr user, mfa) counts for the password and the app
    const signedIn = await passkeySignIn(first);
    expect(signedIn).toMatchObject({ kind: 'signed_in', userId: USERS.keyholder, amr: ['user', 'mfa'] });
    if (signedIn.kind !== 'signed_in') throw new Error('no passkey sign-in');
    const withPasskey = await userToken(USERS.keyholder, [...signedIn.amr]);
    const third = await startedRegistration(USERS.keyholder, withPasskey, new SoftAuthenticator(origin));
    expect((await verifyPasskey(USERS.keyholder, third.passkeyId, third.credential, withPasskey, 'Third')).status).toBe(200);
    expect(await passkeysOf(USERS.keyholder)).toEqual([
      ['AUTH_FACTOR_STATE_READY', 'First'],
      ['AUTH_FACTOR_STATE_READY', 'Second'],
      ['AUTH_FACTOR_STATE_READY', 'Third'],
    ]);
  });
});

describe('setting up an authenticator app for oneself', () => {
  it('AuthService over REST: AddMyAuthFactorOTP and VerifyMyAuthFactorOTP need a fresh sign-in; one that would add nothing keeps its answer', async () => {
    const stale = await userToken(USERS.otpSelf, PASSWORD_ONLY, 11);
    expect(await rest(server, 'POST', OTP_PATH, stale, {})).toEqual(SIGN_IN_REFUSAL);

    const fresh = await userToken(USERS.otpSelf, PASSWORD_ONLY);
    const added = await rest(server, 'POST', OTP_PATH, fresh, {});
    expect(added.status).toBe(200);
    const secret = String(added.json['secret']);
    // the pending factor is not made ready by the stale sign-in (and its code stays unused)
    expect(await rest(server, 'POST', `${OTP_PATH}/_verify`, stale, { code: codeFor(secret) })).toEqual(SIGN_IN_REFUSAL);
    // nor replaced by it
    expect(await rest(server, 'POST', OTP_PATH, stale, {})).toEqual(SIGN_IN_REFUSAL);
    expect((await rest(server, 'POST', `${OTP_PATH}/_verify`, fresh, { code: codeFor(secret) })).status).toBe(200);

    // nothing to add: the answers of before, even with the stale token
    expect(await rest(server, 'POST', OTP_PATH, stale, {})).toEqual({ status: 409, json: expect.objectContaining({ code: Code.AlreadyExists }) });
    expect(await rest(server, 'POST', `${OTP_PATH}/_verify`, stale, { code: codeFor(secret) })).toEqual({
      status: 400,
      json: expect.objectContaining({ code: Code.FailedPrecondition, message: expect.stringContaining('already verified') }),
    });
  });

  it('UserService RegisterTOTP and VerifyTOTPRegistration over gRPC: the same for oneself; an administrator is not asked', async () => {
    const users = createClient(UserService, transports(() => server)[0]![1]());
    const stale = withToken(await userToken(USERS.totpSelf, PASSWORD_ONLY, 11));
    const refusal = { code: Code.PermissionDenied, message: expect.stringMatching(SIGN_IN_AGAIN) };
    expect(await failure(users.registerTOTP({ userId: USERS.totpSelf }, stale))).toEqual(refusal);

    const fresh = withToken(await userToken(USERS.totpSelf, PASSWORD_ONLY));
    const { secret } = await users.registerTOTP({ userId: USERS.totpSelf }, fresh);
    expect(await failure(users.verifyTOTPRegistration({ userId: USERS.totpSelf, code: codeFor(secret) }, stale))).toEqual(refusal);
    await users.verifyTOTPRegistration({ userId: USERS.totpSelf, code: codeFor(secret) }, fresh);
    expect((await users.listAuthenticationMethodTypes({ userId: USERS.totpSelf }, fresh)).authMethodTypes).toHaveLength(2); // password, TOTP

    expect((await failure(users.registerTOTP({ userId: USERS.totpSelf }, stale))).code).toBe(Code.AlreadyExists);
    expect((await failure(users.verifyTOTPRegistration({ userId: USERS.totpSelf, code: codeFor(secret) }, stale))).code).toBe(Code.FailedPrecondition);
    // once the app is ready, a fresh password-only sign-in no longer adds a passkey either
    expect(await failure(users.registerPasskey({ userId: USERS.totpSelf }, fresh))).toEqual(refusal);

    // an administrator sets one up for a user it manages, with no sign-in of the user at all
    const byAdmin = await users.registerTOTP({ userId: USERS.managed }, withToken(admin));
    await users.verifyTOTPRegistration({ userId: USERS.managed, code: codeFor(byAdmin.secret) }, withToken(admin));
    const owner = await userToken(USERS.owner, PASSWORD_ONLY, 11);
    expect((await failure(users.registerTOTP({ userId: USERS.managed }, withToken(owner)))).code).toBe(Code.AlreadyExists);
    expect(await failure(users.registerTOTP({ userId: USERS.owner }, withToken(owner)))).toEqual(refusal);
  });
});

describe('a registration link for oneself is adding a credential too', () => {
  // A stale token could otherwise set its own address, verify it from the mail, and mail itself a
  // passkey link whose code needs no sign-in: a passkey that skips the authenticator app.
  it('CreatePasskeyRegistrationLink for oneself needs the fresh, full sign-in; an administrator asking for another user does not', async () => {
    const path = `/v2/users/${USERS.replay}/passkeys/registration_link`;
    const stale = await userToken(USERS.replay, PASSWORD_AND_OTP, 11);
    const refused = await rest(server, 'POST', path, stale, { sendLink: {} });
    expect(refused.status).toBe(403);
    expect(String(refused.json['message'])).toMatch(SIGN_IN_AGAIN);
    const fresh = await userToken(USERS.replay, PASSWORD_AND_OTP);
    expect((await rest(server, 'POST', path, fresh, { sendLink: {} })).status).toBe(200);
    const returned = await rest(server, 'POST', `/v2/users/${USERS.managed}/passkeys/registration_link`, admin, { returnCode: {} });
    expect(returned.status).toBe(200);
    expect(returned.json['code']).toMatchObject({ id: expect.any(String), code: expect.any(String) });
  });
});
