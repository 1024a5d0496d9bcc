/**
 * Token exchange with a second party (RFC 8693 §1.1, §4.1; docs/token-exchange.md): impersonation,
 * where the actor names the subject (a user id, or a JWT the client signed) and needs the
 * instance's impersonation switch and an impersonation role over the subject; delegation, where the
 * subject's own token proves its authority and no role is needed; and the `act` claim every issued
 * token then carries (JWT access token, ID token, introspection, userinfo), nested for a chain of
 * actors. The exchanged tokens rest on the actor's browser session and the actor's account: ending
 * either ends them. An impersonation token reaches the API as the subject (its changes are recorded
 * as made by the actor), and every exchange is an audited event.
 *
 * Two real servers on real PostgreSQL: one with impersonation enabled, one without. openid-client is
 * the relying party; sign-ins are made through the domain functions (support/sign-in.ts), refusals
 * are checked as exact status and body with plain HTTP.
 */
import * as client from 'openid-client';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { createLocalJWKSet, decodeJwt, jwtVerify, SignJWT } from 'jose';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { sha256 } from '../../src/domain/kernel/crypto.ts';
import { newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { signAssertion } from '../support/assertions.ts';
import { cryptoKey, fixture, IDS, testKey, type TestKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';
import { codeFor } from '../support/totp.ts';

const TYPE = TOKEN_TYPE;
const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';

const EXCHANGE_APP = 'shop-exchange';
const EXCHANGE_SECRET = 'shop-exchange-secret';
const EXCHANGE_CALLBACK = 'http://localhost:3000/exchange-callback';
const SIGNER_APP = 'shop-signer';

/** The users of this suite, besides alice (ORG_OWNER) of the fixture. */
const USERS = {
  iamImpersonator: '200000000000000011',
  orgImpersonator: '200000000000000012',
  plain: '200000000000000013',
  iamOwner: '200000000000000014',
  retiring: '200000000000000015',
  carol: '200000000000000016',
  dormant: '200000000000000017',
  demoted: '200000000000000018',
  firstActor: '200000000000000019',
  outsider: '200000000000000021',
} as const;
const UNKNOWN_USER = '299999999999999999';

const FORBIDDEN = { error: 'invalid_request', error_description: 'the actor may not impersonate this subject' };
const SWITCHED_OFF = { error: 'invalid_request', error_description: 'impersonation is not enabled on this instance' };

interface Human {
  id: string;
  userName: string;
  password: string;
  email: string;
  emailVerified: boolean;
  givenName: string;
  familyName: string;
  roles?: string[];
  state?: 'active' | 'inactive';
}

function human(id: string, userName: string, domain: string, roles: string[] = [], state?: 'inactive'): Human {
  const name = userName.replace(/-/g, '');
  return {
    id,
    userName,
    password: 'Correct-Horse-9',
    email: `${userName}@${domain}`,
    emailVerified: true,
    givenName: name.charAt(0).toUpperCase() + name.slice(1),
    familyName: 'Example',
    ...(roles.length > 0 ? { roles } : {}),
    ...(state ? { state } : {}),
  };
}

interface OrgDocument {
  id: string;
  users?: unknown[];
  projects?: Array<{ apps: unknown[] }>;
}

let server: TestServer;
/** The same directory, with the instance's impersonation switch off. */
let offServer: TestServer;
let signerKey: TestKey;

function bootstrapDocument(enableImpersonation: boolean): Record<string, unknown> {
  const document = structuredClone(fixture().document) as { orgs: OrgDocument[] } & Record<string, unknown>;
  const [acme, other] = document.orgs;
  acme!.users!.push(
    human(IDS.bob, 'bob', 'acme.test'),
    human(USERS.iamImpersonator, 'iam-imp', 'acme.test', ['IAM_ADMIN_IMPERSONATOR']),
    human(USERS.orgImpersonator, 'org-imp', 'acme.test', ['ORG_ADMIN_IMPERSONATOR']),
    human(USERS.plain, 'plain', 'acme.test'),
    human(USERS.iamOwner, 'iam-owner', 'acme.test', ['IAM_OWNER']),
    human(USERS.retiring, 'retiring', 'acme.test', ['IAM_ADMIN_IMPERSONATOR']),
    human(USERS.carol, 'carol', 'acme.test'),
    human(USERS.dormant, 'dormant', 'acme.test', [], 'inactive'),
    human(USERS.demoted, 'demoted', 'acme.test', ['IAM_ADMIN_IMPERSONATOR']),
    human(USERS.firstActor, 'first-actor', 'acme.test', ['IAM_ADMIN_IMPERSONATOR']),
  );
  other!.users = [human(USERS.outsider, 'outsider', 'other.test')];
  acme!.projects![0]!.apps.push(
    {
      name: 'exchange',
      clientId: EXCHANGE_APP,
      clientSecret: EXCHANGE_SECRET,
      authMethod: 'client_secret_basic',
      redirectUris: [EXCHANGE_CALLBACK],
      responseTypes: ['code'],
      grantTypes: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
      accessTokenType: 'jwt',
    },
    {
      name: 'signer',
      clientId: SIGNER_APP,
      authMethod: 'private_key_jwt',
      publicKeys: [{ keyId: signerKey.id, pem: signerKey.publicPem }],
      grantTypes: [TOKEN_EXCHANGE],
      accessTokenType: 'jwt',
    },
  );
  return { ...document, features: { oidcTokenExchange: true }, security: { enableImpersonation } };
}

beforeAll(async () => {
  signerKey = testKey('600000000000000011');
  [server, offServer] = await Promise.all([startTestServer(bootstrapDocument(true)), startTestServer(bootstrapDocument(false))]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), offServer?.stop()]);
});

// ---------------------------------------------------------------------------------------------
// helpers

function discover(srv: TestServer, clientId: string, auth: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(srv.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

const exchangeConfig = (srv: TestServer = server) => discover(srv, EXCHANGE_APP, client.ClientSecretBasic(EXCHANGE_SECRET));
const signerConfig = async () => discover(server, SIGNER_APP, client.PrivateKeyJwt({ key: await cryptoKey(signerKey), kid: signerKey.id }));

interface SignedIn {
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
  /** The gh_browser cookie value of the browser the user signed in with. */
  browser: string;
  sessionId: string;
}

/** The user signs in to shop-exchange in a browser; openid-client exchanges the code. */
async function signIn(userId: string, scopes: string[], srv: TestServer = server): Promise<SignedIn> {
  const browser = newBrowserId(srv.running.gh.masterKey);
  const issued = await signedInCode(srv, { clientId: EXCHANGE_APP, redirectUri: EXCHANGE_CALLBACK, scopes, userId, browserCookie: browser, pkce: true });
  const tokens = await client.authorizationCodeGrant(await exchangeConfig(srv), issued.callback, {
    expectedState: issued.state,
    expectedNonce: issued.nonce,
    pkceCodeVerifier: issued.verifier!,
    idTokenExpected: true,
  });
  return { tokens, browser, sessionId: issued.sessionId };
}

/** The access token of a fresh sign-in. */
async function accessTokenOf(userId: string, scopes: string[] = ['openid'], srv: TestServer = server): Promise<string> {
  return (await signIn(userId, scopes, srv)).tokens.access_token;
}

/** Parameters of an impersonation by user id, with an access token as actor. */
function byUserId(subjectId: string, actorToken: string, scope: string, extra: Record<string, string> = {}): Record<string, string> {
  return { subject_token: subjectId, subject_token_type: TYPE.userId, actor_token: actorToken, actor_token_type: TYPE.access, scope, ...extra };
}

/** A token exchange by shop-exchange through openid-client (strict ID-token validation included). */
async function exchange(params: Record<string, string>, srv: TestServer = server) {
  return client.genericGrantRequest(await exchangeConfig(srv), TOKEN_EXCHANGE, params);
}

/** The same request as plain HTTP, for exact statuses and bodies. */
function exchangeRaw(params: Record<string, string>, srv: TestServer = server): Promise<Reply> {
  return postForm(`${srv.url}/oauth/v2/token`, { grant_type: TOKEN_EXCHANGE, ...params }, { authorization: basic(EXCHANGE_APP, EXCHANGE_SECRET) });
}

async function introspect(token: string, srv: TestServer = server): Promise<Record<string, unknown>> {
  const reply = await postForm(`${srv.url}/oauth/v2/introspect`, { token }, { authorization: basic(EXCHANGE_APP, EXCHANGE_SECRET) });
  expect(reply.status).toBe(200);
  return reply.json;
}

function userinfo(token: string, srv: TestServer = server): Promise<Reply> {
  return request(`${srv.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
}

async function jwks(srv: TestServer = server) {
  const response = await fetch(`${srv.url}/oauth/v2/keys`);
  return createLocalJWKSet((await response.json()) as Parameters<typeof createLocalJWKSet>[0]);
}

async function verifiedAccessToken(token: string, srv: TestServer = server) {
  return (await jwtVerify(token, await jwks(srv), { issuer: srv.url, typ: 'at+jwt' })).payload;
}

/** The act claim of a token whose actor is `actorId` (RFC 8693 §4.1), issued here. */
const actOf = (actorId: string, prior?: Record<string, unknown>, srv: TestServer = server): Record<string, unknown> => ({
  iss: srv.url,
  sub: actorId,
  ...(prior ? { act: prior } : {}),
});

// ---------------------------------------------------------------------------------------------

describe('impersonation by user id (urn:gatehouse:params:oauth:token-type:user_id)', () => {
  let iamActor: string;
  let orgActor: string;

  beforeAll(async () => {
    iamActor = await accessTokenOf(USERS.iamImpersonator);
    orgActor = await accessTokenOf(USERS.orgImpersonator);
  });

  it.each([
    ['a plain user of its org', USERS.plain],
    ['a user of the other org', USERS.outsider],
    ['a user of its org who holds IAM_OWNER', USERS.iamOwner],
  ])('IAM_ADMIN_IMPERSONATOR may impersonate %s', async (_name, subjectId) => {
    const tokens = await exchange(byUserId(subjectId, iamActor, 'openid'));
    expect(tokens.issued_token_type).toBe(TYPE.access);
    expect(tokens.claims()).toMatchObject({ sub: subjectId, azp: EXCHANGE_APP, act: actOf(USERS.iamImpersonator) });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: subjectId, client_id: EXCHANGE_APP, act: actOf(USERS.iamImpersonator) });
  });

  it.each([
    ['a plain user of its org', USERS.plain],
    ['a user of its org who holds only an org role (ORG_OWNER)', IDS.alice],
  ])('ORG_ADMIN_IMPERSONATOR may impersonate %s', async (_name, subjectId) => {
    const tokens = await exchange(byUserId(subjectId, orgActor, 'openid'));
    expect(tokens.claims()).toMatchObject({ sub: subjectId, act: actOf(USERS.orgImpersonator) });
  });

  it.each([
    ['a user of the other org', USERS.outsider],
    ['a user of its org who holds IAM_OWNER', USERS.iamOwner],
  ])('ORG_ADMIN_IMPERSONATOR may not impersonate %s: invalid_request', async (_name, subjectId) => {
    const reply = await exchangeRaw(byUserId(subjectId, orgActor, 'openid'));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(FORBIDDEN);
  });

  it.each([
    ['a plain user', USERS.plain, IDS.bob],
    ['a user with IAM_OWNER only', USERS.iamOwner, USERS.plain],
  ])('%s may not impersonate anyone: invalid_request', async (_name, actorId, subjectId) => {
    const reply = await exchangeRaw(byUserId(subjectId, await accessTokenOf(actorId), 'openid'));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(FORBIDDEN);
  });

  it('an unknown or inactive user id is refused with the same answer as a forbidden one (no enumeration)', async () => {
    const forbidden = await exchangeRaw(byUserId(USERS.outsider, orgActor, 'openid'));
    const unknown = await exchangeRaw(byUserId(UNKNOWN_USER, iamActor, 'openid'));
    const inactive = await exchangeRaw(byUserId(USERS.dormant, iamActor, 'openid'));
    for (const reply of [forbidden, unknown, inactive]) {
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual(FORBIDDEN);
    }
    expect(unknown.text).toBe(forbidden.text);
    expect(inactive.text).toBe(forbidden.text);
  });

  it('a user may name itself without any role; it is then its own actor', async () => {
    const self = await accessTokenOf(USERS.plain);
    const tokens = await exchange(byUserId(USERS.plain, self, 'openid'));
    expect(tokens.claims()).toMatchObject({ sub: USERS.plain, act: actOf(USERS.plain) });
  });

  it('naming itself needs no impersonation switch either', async () => {
    const self = await accessTokenOf(USERS.plain, ['openid'], offServer);
    const tokens = await exchange(byUserId(USERS.plain, self, 'openid'), offServer);
    expect(tokens.claims()).toMatchObject({ sub: USERS.plain, act: actOf(USERS.plain, undefined, offServer) });
  });

  it('with the impersonation switch off, even IAM_ADMIN_IMPERSONATOR is refused: invalid_request', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid'], offServer);
    const reply = await exchangeRaw(byUserId(USERS.plain, actor, 'openid'), offServer);
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(SWITCHED_OFF);
  });
});

describe('impersonation by a JWT the client signed (urn:ietf:params:oauth:token-type:jwt)', () => {
  let actor: string;

  beforeAll(async () => {
    actor = await accessTokenOf(USERS.iamImpersonator);
  });

  interface SubjectJwt {
    key?: TestKey;
    issuer?: string;
    audience?: string;
    iat?: number;
    /** null: no exp claim. */
    expiresIn?: number | null;
  }

  /** A JWT about `subjectId` as shop-signer signs it: iss = client id, aud = us, iat now, exp +5 min. */
  function subjectJwt(subjectId: string, options: SubjectJwt = {}): Promise<string> {
    const now = options.iat ?? Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: signerKey.id })
      .setIssuer(options.issuer ?? SIGNER_APP)
      .setSubject(subjectId)
      .setAudience(options.audience ?? server.url)
      .setIssuedAt(now);
    if (options.expiresIn !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + (options.expiresIn ?? 300));
    return jwt.sign((options.key ?? signerKey).privateKey);
  }

  const byJwt = (subjectToken: string, extra: Record<string, string> = {}): Record<string, string> => ({
    subject_token: subjectToken,
    subject_token_type: TYPE.jwt,
    actor_token: actor,
    actor_token_type: TYPE.access,
    requested_token_type: TYPE.jwt,
    scope: 'openid',
    ...extra,
  });

  /** shop-signer at the token endpoint as plain HTTP, authenticated with its key (private_key_jwt). */
  async function signerRaw(params: Record<string, string>): Promise<Reply> {
    const assertion = await signAssertion({ issuer: SIGNER_APP, audience: server.url, key: signerKey.privateKey, kid: signerKey.id });
    return postForm(`${server.url}/oauth/v2/token`, {
      grant_type: TOKEN_EXCHANGE,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      ...params,
    });
  }

  it('a JWT signed with the client’s registered key, with an actor token, impersonates its sub', async () => {
    const tokens = await client.genericGrantRequest(await signerConfig(), TOKEN_EXCHANGE, byJwt(await subjectJwt(USERS.plain)));
    expect(tokens.issued_token_type).toBe(TYPE.jwt);
    expect(tokens.claims()).toMatchObject({ sub: USERS.plain, azp: SIGNER_APP, act: actOf(USERS.iamImpersonator) });
    const access = await verifiedAccessToken(tokens.access_token);
    expect(access).toMatchObject({ sub: USERS.plain, client_id: SIGNER_APP, act: actOf(USERS.iamImpersonator) });
  });

  it('the token endpoint URL is an accepted audience of the JWT too', async () => {
    const subject = await subjectJwt(USERS.outsider, { audience: `${server.url}/oauth/v2/token` });
    const reply = await signerRaw(byJwt(subject));
    expect(reply.status).toBe(200);
    expect(decodeJwt(String(reply.json['access_token']))).toMatchObject({ sub: USERS.outsider, act: actOf(USERS.iamImpersonator) });
  });

  it('the impersonation rules apply to the sub of the JWT: invalid_request', async () => {
    const orgActor = await accessTokenOf(USERS.orgImpersonator);
    const reply = await signerRaw({ ...byJwt(await subjectJwt(USERS.outsider)), actor_token: orgActor });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(FORBIDDEN);
  });

  it.each<[string, () => Promise<string>]>([
    ['signed with another key (same kid)', () => subjectJwt(USERS.plain, { key: testKey(signerKey.id) })],
    ['issued by another party than the client', () => subjectJwt(USERS.plain, { issuer: EXCHANGE_APP })],
    ['without exp', () => subjectJwt(USERS.plain, { expiresIn: null })],
    ['issued more than an hour ago', () => subjectJwt(USERS.plain, { iat: Math.floor(Date.now() / 1000) - 3700 })],
    ['meant for another audience', () => subjectJwt(USERS.plain, { audience: 'https://elsewhere.example' })],
  ])('a JWT %s is refused: invalid_request', async (_name, token) => {
    const reply = await signerRaw(byJwt(await token()));
    expect(reply.status).toBe(400);
    expect(reply.json['error']).toBe('invalid_request');
    expect(String(reply.json['error_description'])).toMatch(/^subject_token /);
    expect(reply.json['access_token']).toBeUndefined();
  });

  it('a JWT without an actor token is refused: invalid_request', async () => {
    const { actor_token: _actor, actor_token_type: _type, ...alone } = byJwt(await subjectJwt(USERS.plain));
    const reply = await signerRaw(alone);
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: `subject_token_type ${TYPE.jwt} is only accepted with an actor_token` });
  });
});

describe('the act claim', () => {
  let actor: string;

  beforeAll(async () => {
    actor = await accessTokenOf(USERS.iamImpersonator, ['openid', 'profile', 'email']);
  });

  it('is in the JWT access token, the ID token, introspection and userinfo', async () => {
    const tokens = await exchange(byUserId(USERS.carol, actor, 'openid profile email', { requested_token_type: TYPE.jwt }));
    const act = actOf(USERS.iamImpersonator);
    expect(tokens.issued_token_type).toBe(TYPE.jwt);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('openid profile email');

    const access = await verifiedAccessToken(tokens.access_token);
    expect(access).toMatchObject({ sub: USERS.carol, client_id: EXCHANGE_APP, scope: 'openid profile email', act });

    const id = await jwtVerify(tokens.id_token!, await jwks(), { issuer: server.url, audience: EXCHANGE_APP });
    expect(id.payload).toMatchObject({ sub: USERS.carol, azp: EXCHANGE_APP, act });
    expect(tokens.claims()!['act']).toEqual(act);

    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: USERS.carol, username: 'carol@acme.test', email: 'carol@acme.test', act });

    const info = await userinfo(tokens.access_token);
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({ sub: USERS.carol, email: 'carol@acme.test', given_name: 'Carol', act });
    expect(info.json['act']).toEqual(act);
  });

  it('is on opaque access tokens too, in introspection and userinfo', async () => {
    const tokens = await exchange(byUserId(USERS.carol, actor, 'openid', { requested_token_type: TYPE.access }));
    expect(tokens.issued_token_type).toBe(TYPE.access);
    expect(tokens.access_token).not.toContain('.');
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: USERS.carol, act: actOf(USERS.iamImpersonator) });
    expect((await userinfo(tokens.access_token)).json).toEqual({ sub: USERS.carol, act: actOf(USERS.iamImpersonator) });
  });

  describe('a chain of actors', () => {
    let impersonation: string;

    beforeAll(async () => {
      const tokens = await exchange(byUserId(USERS.plain, actor, 'openid profile', { requested_token_type: TYPE.jwt }));
      impersonation = tokens.access_token;
    });

    it('exchanged again with a second actor: the new actor first, the first one nested', async () => {
      const second = await accessTokenOf(IDS.bob);
      const tokens = await exchange({
        subject_token: impersonation,
        subject_token_type: TYPE.access,
        actor_token: second,
        actor_token_type: TYPE.access,
        requested_token_type: TYPE.jwt,
        scope: 'openid profile',
      });
      const act = actOf(IDS.bob, actOf(USERS.iamImpersonator));
      expect(act).toEqual({ iss: server.url, sub: IDS.bob, act: { iss: server.url, sub: USERS.iamImpersonator } });
      expect(await verifiedAccessToken(tokens.access_token)).toMatchObject({ sub: USERS.plain, act });
      expect(tokens.claims()).toMatchObject({ sub: USERS.plain, act });
      expect((await introspect(tokens.access_token))['act']).toEqual(act);
      expect((await userinfo(tokens.access_token)).json['act']).toEqual(act);
    });

    it('exchanged again without an actor: act stays as it was', async () => {
      const tokens = await exchange({ subject_token: impersonation, subject_token_type: TYPE.access, requested_token_type: TYPE.jwt, scope: 'openid' });
      expect(await verifiedAccessToken(tokens.access_token)).toMatchObject({ sub: USERS.plain, scope: 'openid', act: actOf(USERS.iamImpersonator) });
      expect(tokens.claims()!['act']).toEqual(actOf(USERS.iamImpersonator));
    });

    it('an actor token that itself carries act is refused: invalid_request', async () => {
      const reply = await exchangeRaw(byUserId(USERS.carol, impersonation, 'openid'));
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'actor_token was itself issued to an actor; present the token of the acting user' });
      const delegated = await exchangeRaw({ subject_token: await accessTokenOf(USERS.carol), subject_token_type: TYPE.access, actor_token: impersonation, actor_token_type: TYPE.access, scope: 'openid' });
      expect(delegated.status).toBe(400);
      expect(delegated.json['error']).toBe('invalid_request');
    });
  });
});

describe('delegation (a subject token and an actor token)', () => {
  // on the server with the impersonation switch off: delegation needs neither the switch nor a role
  let subject: string;
  let actor: string;

  beforeAll(async () => {
    subject = await accessTokenOf(IDS.alice, ['openid', 'profile'], offServer);
    actor = await accessTokenOf(IDS.bob, ['openid', 'profile', 'email'], offServer);
  });

  const delegate = (scope: string) => ({
    subject_token: subject,
    subject_token_type: TYPE.access,
    actor_token: actor,
    actor_token_type: TYPE.access,
    requested_token_type: TYPE.jwt,
    scope,
  });

  it('works without the switch and without roles: sub is the subject, act names the actor', async () => {
    const tokens = await exchange(delegate('openid profile'), offServer);
    const act = actOf(IDS.bob, undefined, offServer);
    expect(tokens.scope).toBe('openid profile');
    expect(await verifiedAccessToken(tokens.access_token, offServer)).toMatchObject({ sub: IDS.alice, client_id: EXCHANGE_APP, act });
    expect(tokens.claims()).toMatchObject({ sub: IDS.alice, act });
    expect(await introspect(tokens.access_token, offServer)).toMatchObject({ active: true, sub: IDS.alice, act });
  });

  it('a scope the subject token lacks is refused even when the actor token has it: invalid_scope', async () => {
    const reply = await exchangeRaw(delegate('openid email'), offServer);
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'invalid_scope', error_description: 'scope email is not carried by the subject token' });
  });
});

describe('impersonation scopes', () => {
  let narrowActor: string;

  beforeAll(async () => {
    narrowActor = await accessTokenOf(USERS.iamImpersonator, ['openid']);
  });

  it('the claim scopes (openid email profile) are free', async () => {
    const tokens = await exchange(byUserId(USERS.carol, narrowActor, 'openid email profile'));
    expect(tokens.scope).toBe('openid email profile');
    expect(tokens.refresh_token).toBeUndefined();
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, scope: 'openid email profile', email: 'carol@acme.test', given_name: 'Carol' });
  });

  it('offline_access needs an actor token that carries it: invalid_scope', async () => {
    const reply = await exchangeRaw(byUserId(USERS.carol, narrowActor, 'openid offline_access'));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'invalid_scope', error_description: 'scope offline_access is not carried by the actor token' });
  });

  it('offline_access with an actor token that carries it: a refresh token', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid', 'offline_access']);
    const tokens = await exchange(byUserId(USERS.carol, actor, 'openid offline_access'));
    expect(tokens.scope).toBe('openid offline_access');
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('the API audience scope needs an actor token that carries it: invalid_scope', async () => {
    const reply = await exchangeRaw(byUserId(USERS.carol, narrowActor, `openid ${API_SCOPE}`));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'invalid_scope', error_description: `scope ${API_SCOPE} is not carried by the actor token` });
  });

  it('the API audience scope with an actor token that carries it', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid', API_SCOPE]);
    const tokens = await exchange(byUserId(USERS.carol, actor, `openid ${API_SCOPE}`, { requested_token_type: TYPE.jwt }));
    expect(tokens.scope).toBe(`openid ${API_SCOPE}`);
    const access = await verifiedAccessToken(tokens.access_token);
    expect(access).toMatchObject({ sub: USERS.carol, scope: `openid ${API_SCOPE}` });
    expect(access.aud).toEqual(expect.arrayContaining([server.url]));
  });
});

describe('revocation through the actor', () => {
  it('ending the actor’s browser session ends the impersonation tokens (JWT, opaque, refresh)', async () => {
    const actor = await signIn(USERS.iamImpersonator, ['openid', 'offline_access']);
    const own = await accessTokenOf(USERS.carol);
    const config = await exchangeConfig();
    const jwt = await exchange(byUserId(USERS.carol, actor.tokens.access_token, 'openid offline_access', { requested_token_type: TYPE.jwt }));
    const opaque = await exchange(byUserId(USERS.carol, actor.tokens.access_token, 'openid', { requested_token_type: TYPE.access }));
    expect(jwt.refresh_token).toEqual(expect.any(String));
    expect(decodeJwt(jwt.access_token)['sid']).toBe(actor.sessionId); // the actor's session, not the subject's
    for (const token of [jwt.access_token, opaque.access_token]) expect(await introspect(token)).toMatchObject({ active: true, act: actOf(USERS.iamImpersonator) });

    // a refresh keeps the family: a JWT for the subject with the same act
    const refreshed = await client.refreshTokenGrant(config, jwt.refresh_token!);
    expect(await verifiedAccessToken(refreshed.access_token)).toMatchObject({ sub: USERS.carol, act: actOf(USERS.iamImpersonator) });

    // the actor logs out of its browser (RP-initiated logout with its ID token as hint)
    const logout = await fetch(`${server.url}/oidc/v1/end_session?${new URLSearchParams({ id_token_hint: actor.tokens.id_token! }).toString()}`, {
      redirect: 'manual',
      headers: { cookie: `gh_browser=${actor.browser}` },
    });
    expect(logout.status).toBe(303);

    for (const token of [jwt.access_token, opaque.access_token, refreshed.access_token]) {
      expect(await introspect(token)).toEqual({ active: false });
      const info = await userinfo(token);
      expect(info.status).toBe(401);
      expect(info.json['error']).toBe('invalid_token');
    }
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // the subject's own sign-in is not the actor's: it stays
    expect(await introspect(own)).toMatchObject({ active: true, sub: USERS.carol });
    expect((await introspect(own))['act']).toBeUndefined();
  });

  it('deactivating the actor ends its impersonation tokens; the subject’s own tokens stay active', async () => {
    const { db, directory } = server.running.gh;
    const actor = await accessTokenOf(USERS.retiring, ['openid', 'offline_access']);
    const own = await accessTokenOf(USERS.plain);
    const jwt = await exchange(byUserId(USERS.plain, actor, 'openid offline_access', { requested_token_type: TYPE.jwt }));
    const opaque = await exchange(byUserId(USERS.plain, actor, 'openid', { requested_token_type: TYPE.access }));
    for (const token of [jwt.access_token, opaque.access_token]) expect(await introspect(token)).toMatchObject({ active: true, act: actOf(USERS.retiring) });

    await db.updateTable('users').set({ state: 'inactive' }).where('id', '=', USERS.retiring).execute();
    directory.clear();

    for (const token of [jwt.access_token, opaque.access_token]) {
      expect(await introspect(token)).toEqual({ active: false });
      expect((await userinfo(token)).status).toBe(401);
    }
    await expect(client.refreshTokenGrant(await exchangeConfig(), jwt.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await introspect(own)).toMatchObject({ active: true, sub: USERS.plain });
    expect((await userinfo(own)).json).toEqual({ sub: USERS.plain });
  });
});

describe('refreshing an impersonation checks the impersonation again', () => {
  it('once the actor lost its impersonation role, its impersonation refresh tokens are invalid_grant', async () => {
    const { db, directory } = server.running.gh;
    const actor = await accessTokenOf(USERS.demoted, ['openid', 'offline_access']);
    const tokens = await exchange(byUserId(USERS.plain, actor, 'openid offline_access'));
    const config = await exchangeConfig();
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);

    await db.deleteFrom('user_roles').where('user_id', '=', USERS.demoted).execute();
    directory.clear();
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('with the impersonation switch turned off, impersonation refresh tokens are invalid_grant', async () => {
    const { db, directory, instanceId } = server.running.gh;
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid', 'offline_access']);
    const tokens = await exchange(byUserId(USERS.plain, actor, 'openid offline_access'));
    await db.updateTable('instances').set({ enable_impersonation: false }).where('id', '=', instanceId).execute();
    directory.clear();
    try {
      await expect(client.refreshTokenGrant(await exchangeConfig(), tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await db.updateTable('instances').set({ enable_impersonation: true }).where('id', '=', instanceId).execute();
      directory.clear();
    }
  });

  it('an impersonation refresh token never outlives the actor’s own refresh family', async () => {
    const { db } = server.running.gh;
    const actor = await signIn(USERS.iamImpersonator, ['openid', 'offline_access']);
    const tokens = await exchange(byUserId(USERS.plain, actor.tokens.access_token, 'openid offline_access'));
    const rows = await db
      .selectFrom('tokens')
      .select(['token_hash', 'grant_id', 'absolute_expires_at', 'impersonation'])
      .where('token_hash', 'in', [sha256(actor.tokens.refresh_token!), sha256(tokens.refresh_token!)])
      .execute();
    const own = rows.find((row) => row.token_hash === sha256(actor.tokens.refresh_token!))!;
    const impersonation = rows.find((row) => row.token_hash === sha256(tokens.refresh_token!))!;
    expect(impersonation).toMatchObject({ grant_id: own.grant_id, impersonation: true });
    expect(own.impersonation).toBe(false);
    expect(impersonation.absolute_expires_at).toEqual(own.absolute_expires_at);
  });
});

describe('a token someone acts with is no basis for a refresh token', () => {
  it('exchanging an impersonation token with offline_access gives no refresh token (only the impersonation’s own, re-checked)', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid', 'offline_access']);
    const impersonation = await exchange(byUserId(USERS.plain, actor, 'openid offline_access', { requested_token_type: TYPE.jwt }));
    expect(impersonation.refresh_token).toEqual(expect.any(String));
    const again = await exchange({ subject_token: impersonation.access_token, subject_token_type: TYPE.access, scope: 'openid offline_access' });
    expect(again.refresh_token).toBeUndefined();
    expect(again.scope).toBe('openid');
  });

  it('the event of such an exchange names the acting user as creator and actor', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator);
    const impersonation = await exchange(byUserId(USERS.carol, actor, 'openid', { requested_token_type: TYPE.jwt }));
    const again = await exchange({ subject_token: impersonation.access_token, subject_token_type: TYPE.access, scope: 'openid', requested_token_type: TYPE.jwt });
    const grantId = decodeJwt(again.access_token)['gid'];
    const rows = await server.running.gh.db.selectFrom('events').selectAll().where('event_type', '=', 'user.token.exchanged').where('aggregate_id', '=', USERS.carol).execute();
    const event = rows.filter((row) => row.payload['grantId'] === grantId && row.payload['shape'] === 'exchange');
    expect(event).toHaveLength(1);
    expect(event[0]).toMatchObject({ creator: USERS.iamImpersonator, payload: expect.objectContaining({ shape: 'exchange', subject: USERS.carol, actor: USERS.iamImpersonator }) });
  });
});

describe('a chain of actors and its first actor', () => {
  it('deactivating the first actor of a chain ends the tokens built on its impersonation', async () => {
    const { db, directory } = server.running.gh;
    const first = await accessTokenOf(USERS.firstActor, ['openid']);
    const impersonation = await exchange(byUserId(USERS.carol, first, 'openid', { requested_token_type: TYPE.jwt }));
    const chained = await exchange({ subject_token: impersonation.access_token, subject_token_type: TYPE.access, actor_token: await accessTokenOf(IDS.bob), actor_token_type: TYPE.access, scope: 'openid' });
    expect(await introspect(chained.access_token)).toMatchObject({ active: true, act: { sub: IDS.bob, act: { sub: USERS.firstActor } } });

    await db.updateTable('users').set({ state: 'inactive' }).where('id', '=', USERS.firstActor).execute();
    directory.clear();
    expect(await introspect(chained.access_token)).toEqual({ active: false });
  });
});

describe('odd user ids as subject_token', () => {
  it.each([
    ['a space', '2000 00000000000013'],
    ['a control character', '200000000000000013\u0001'],
    ['300 characters', '2'.repeat(300)],
  ])('one with %s names nobody: the same answer as a forbidden one', async (_name, userId) => {
    const actor = await accessTokenOf(USERS.iamImpersonator);
    const reply = await exchangeRaw(byUserId(userId, actor, 'openid'));
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(FORBIDDEN);
  });
});

describe('the API with an impersonation token', () => {
  // The API wants its audience in every token (docs/security.md 10.5): the actor's token carries the API scope, and so does the exchange.
  // A credential is set up only by the user's own recent sign-in: an impersonator must not leave a
  // second factor of its own choosing on the account it acted as.
  it('AuthService AddMyAuthFactorOTP refuses an impersonation token: no factor for the subject, none for the actor', async () => {
    const { db } = server.running.gh;
    const factors = (userId: string) => db.selectFrom('otp_factors').select(['user_id', 'state']).where('user_id', '=', userId).execute();
    expect(await factors(USERS.carol)).toEqual([]);
    const actor = await accessTokenOf(USERS.iamImpersonator, ['openid', API_SCOPE]);
    const tokens = await exchange(byUserId(USERS.carol, actor, `openid ${API_SCOPE}`, { requested_token_type: TYPE.jwt }));

    const auth = createClient(AuthService, createConnectTransport({ baseUrl: server.url, httpVersion: '1.1' }));
    const refused = await auth.addMyAuthFactorOTP({}, { headers: { authorization: `Bearer ${tokens.access_token}` } }).catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
    expect((refused as ConnectError).rawMessage).toMatch(/sign in again/);
    expect(await factors(USERS.carol)).toEqual([]);
    expect(await factors(USERS.iamImpersonator)).toEqual([]);
  });

  // docs/security.md 10.4: the amr of an impersonation is the impersonator's sign-in, not the user's
  it('RemoveMyAuthFactorOTP refuses a token someone acts with, even from a sign-in with an authenticator app', async () => {
    const { db } = server.running.gh;
    const issued = await signedInCode(server, {
      clientId: EXCHANGE_APP,
      redirectUri: EXCHANGE_CALLBACK,
      scopes: ['openid', API_SCOPE],
      userId: USERS.iamImpersonator,
      pkce: true,
      amr: ['pwd', 'otp', 'mfa'],
    });
    const actor = await client.authorizationCodeGrant(await exchangeConfig(), issued.callback, { expectedState: issued.state, expectedNonce: issued.nonce, pkceCodeVerifier: issued.verifier! });
    const tokens = await exchange(byUserId(USERS.carol, actor.access_token, `openid ${API_SCOPE}`, { requested_token_type: TYPE.jwt }));
    expect(decodeJwt(tokens.access_token)['amr']).toEqual(['pwd', 'otp', 'mfa']);
    const auth = createClient(AuthService, createConnectTransport({ baseUrl: server.url, httpVersion: '1.1' }));
    // carol sets the factor up herself, with a fresh sign-in of her own
    const own = await signedInCode(server, { clientId: EXCHANGE_APP, redirectUri: EXCHANGE_CALLBACK, scopes: ['openid', API_SCOPE], userId: USERS.carol, pkce: true });
    const carol = await client.authorizationCodeGrant(await exchangeConfig(), own.callback, { expectedState: own.state, expectedNonce: own.nonce, pkceCodeVerifier: own.verifier! });
    const carolHeaders = { headers: { authorization: `Bearer ${carol.access_token}` } };
    const { secret } = await auth.addMyAuthFactorOTP({}, carolHeaders);
    await auth.verifyMyAuthFactorOTP({ code: codeFor(secret) }, carolHeaders);
    const headers = { headers: { authorization: `Bearer ${tokens.access_token}` } };
    const refused = await auth.removeMyAuthFactorOTP({}, headers).catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
    expect(await db.selectFrom('otp_factors').select('state').where('user_id', '=', USERS.carol).execute()).toEqual([{ state: 'ready' }]);
    await db.deleteFrom('otp_factors').where('user_id', '=', USERS.carol).execute();
  });
});

describe('events', () => {
  it('an impersonation appends user.token.exchanged on the subject, created by the actor', async () => {
    const actor = await accessTokenOf(USERS.iamImpersonator);
    const tokens = await exchange(byUserId(USERS.plain, actor, 'openid', { requested_token_type: TYPE.jwt }));
    const grantId = decodeJwt(tokens.access_token)['gid'];
    expect(grantId).toEqual(expect.any(String));

    const rows = await server.running.gh.db
      .selectFrom('events')
      .selectAll()
      .where('event_type', '=', 'user.token.exchanged')
      .where('aggregate_id', '=', USERS.plain)
      .execute();
    const event = rows.find((row) => row.payload['grantId'] === grantId);
    expect(event).toMatchObject({
      instance_id: server.running.gh.instanceId,
      aggregate_type: 'user',
      aggregate_id: USERS.plain,
      resource_owner: IDS.org,
      creator: USERS.iamImpersonator,
      audit: true,
    });
    expect(event!.payload).toEqual({
      clientId: EXCHANGE_APP,
      shape: 'impersonation',
      subject: USERS.plain,
      actor: USERS.iamImpersonator,
      subjectTokenType: TYPE.userId,
      actorTokenType: TYPE.access,
      issuedTokenType: TYPE.jwt,
      scopes: ['openid'],
      audience: [EXCHANGE_APP, IDS.project],
      grantId,
    });
  });
});
