/**
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; docs/token-exchange.md and
 * its token type matrix) end to end: the instance feature switch (REST on, gRPC off, discovery
 * following), which clients may exchange, every row of the type matrix allowed and refused, the
 * parameter and subject-token refusals, scopes, audience, refresh tokens of exchanged families
 * (with a delegation), the browser session exchanged tokens rest on, and the audit event each
 * exchange appends. openid-client is the relying party for every successful exchange; refusals go
 * over plain HTTP to check the exact error body.
 */
import * as client from 'openid-client';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { sha256 } from '../../src/domain/kernel/crypto.ts';
import { latestSequence } from '../../src/domain/kernel/events.ts';
import { setFeatures } from '../../src/domain/instance/features.ts';
import { newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { signAssertion } from '../support/assertions.ts';
import { cryptoKey, fixture, IDS, SECRETS, testKey, type TestKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';

const GRANT = TOKEN_EXCHANGE;
const TYPE = { ...TOKEN_TYPE, unknown: 'urn:example:params:oauth:token-type:saml2' } as const;
const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
/** A second project of ACME: a client may ask only for its own organization's projects (docs/security.md 10.6). */
const SECOND_PROJECT = '500000000000000003';
const OTHER_PROJECT_SCOPE = `urn:gatehouse:iam:org:project:id:${SECOND_PROJECT}:aud`;
const INVALID_SUBJECT = { error: 'invalid_request', error_description: 'subject_token is invalid, expired, revoked or not meant for this client' };

const TE_SECRETS = { basic: 'te-basic-secret', post: 'te-post-secret', without: 'te-without-secret', elsewhere: 'elsewhere-web-secret' } as const;

/** The relying parties: how each signs users in and authenticates at the token endpoint. */
interface ClientSpec {
  clientId: string;
  redirectUri: string;
  pkce: boolean;
  auth(): Promise<client.ClientAuth>;
}

let teKey: TestKey; // te-key's registered key (private_key_jwt, and the self-signed jwt subject)

const CLIENTS = {
  'te-basic': { clientId: 'te-basic', redirectUri: 'http://localhost:5000/basic', pkce: false, auth: async () => client.ClientSecretBasic(TE_SECRETS.basic) },
  'te-post': { clientId: 'te-post', redirectUri: 'http://localhost:5000/post', pkce: false, auth: async () => client.ClientSecretPost(TE_SECRETS.post) },
  'te-public': { clientId: 'te-public', redirectUri: 'http://localhost:5000/public', pkce: true, auth: async () => client.None() },
  'te-key': {
    clientId: 'te-key',
    redirectUri: 'http://localhost:5000/key',
    pkce: false,
    auth: async () => client.PrivateKeyJwt({ key: await cryptoKey(teKey), kid: teKey.id }),
  },
  'shop-web': { clientId: 'shop-web', redirectUri: 'http://localhost:3000/callback', pkce: false, auth: async () => client.ClientSecretBasic(SECRETS.web) },
  'elsewhere-web': {
    clientId: 'elsewhere-web',
    redirectUri: 'http://localhost:5000/elsewhere',
    pkce: false,
    auth: async () => client.ClientSecretBasic(TE_SECRETS.elsewhere),
  },
} as const satisfies Record<string, ClientSpec>;
type ClientName = keyof typeof CLIENTS;

type Tokens = client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;

/** The bootstrap document: the shared fixture plus bob, the exchanging apps and an app in another project. */
function exchangeDocument(base: Record<string, unknown>, featureOn: boolean): Record<string, unknown> {
  type App = Record<string, unknown>;
  const document = structuredClone(base) as {
    features?: Record<string, boolean>;
    orgs: Array<{ users?: unknown[]; projects?: Array<{ id?: string; name?: string; apps: App[] }> }>;
  };
  if (featureOn) document.features = { oidcTokenExchange: true };
  document.orgs[0]!.users!.push({
    id: IDS.bob,
    userName: 'bob',
    password: 'Correct-Horse-9',
    email: 'bob@acme.test',
    emailVerified: true,
    givenName: 'Bob',
    familyName: 'Example',
  });
  const oidc = (name: ClientName, app: App): App => ({ name, clientId: name, redirectUris: [CLIENTS[name].redirectUri], responseTypes: ['code'], ...app });
  document.orgs[0]!.projects![0]!.apps.push(
    oidc('te-basic', { clientSecret: TE_SECRETS.basic, authMethod: 'client_secret_basic', grantTypes: ['authorization_code', 'refresh_token', GRANT], accessTokenType: 'jwt' }),
    oidc('te-post', { clientSecret: TE_SECRETS.post, authMethod: 'client_secret_post', grantTypes: ['authorization_code', GRANT], accessTokenType: 'opaque' }),
    oidc('te-public', { authMethod: 'none', grantTypes: ['authorization_code', GRANT], accessTokenType: 'opaque' }),
    oidc('te-key', {
      authMethod: 'private_key_jwt',
      publicKeys: [{ keyId: teKey.id, pem: teKey.publicPem }],
      grantTypes: ['authorization_code', GRANT],
      accessTokenType: 'jwt',
    }),
    {
      name: 'te-without',
      clientId: 'te-without',
      clientSecret: TE_SECRETS.without,
      authMethod: 'client_secret_basic',
      redirectUris: ['http://localhost:5000/without'],
      responseTypes: ['code'],
      grantTypes: ['authorization_code', 'refresh_token'],
      accessTokenType: 'jwt',
    },
  );
  document.orgs[0]!.projects!.push({ id: SECOND_PROJECT, name: 'second', apps: [] });
  document.orgs[1]!.projects![0]!.apps.push(
    oidc('elsewhere-web', { clientSecret: TE_SECRETS.elsewhere, authMethod: 'client_secret_basic', grantTypes: ['authorization_code'], accessTokenType: 'jwt' }),
  );
  return document;
}

let server: TestServer;

beforeAll(async () => {
  teKey = testKey('600000000000000099');
  server = await startTestServer(exchangeDocument(fixture().document, true));
});
afterAll(() => server.stop());

// --- helpers ---------------------------------------------------------------------------------

const configs = new Map<string, client.Configuration>();

async function config(name: ClientName, on: TestServer = server): Promise<client.Configuration> {
  const key = `${on.url} ${name}`;
  let found = configs.get(key);
  if (!found) {
    found = await client.discovery(new URL(on.url), CLIENTS[name].clientId, undefined, await CLIENTS[name].auth(), { execute: [client.allowInsecureRequests] });
    configs.set(key, found);
  }
  return found;
}

interface SignedIn {
  tokens: Tokens;
  sessionId: string;
  /** The gh_browser cookie of the browser the user signed in with. */
  browserCookie: string;
}

/**
 * A user signs in at a client in a new browser (domain functions, as user-grants.test.ts) and the
 * client redeems the code with openid-client.
 */
async function signInBrowser(name: ClientName, scopes: string[], userId: string = IDS.alice, on: TestServer = server): Promise<SignedIn> {
  const spec = CLIENTS[name];
  const authTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
  const browserCookie = newBrowserId(on.running.gh.masterKey);
  const code = await signedInCode(on, { clientId: spec.clientId, redirectUri: spec.redirectUri, scopes, userId, pkce: spec.pkce, authTime, browserCookie });
  const tokens = await client.authorizationCodeGrant(await config(name, on), code.callback, {
    expectedState: code.state,
    expectedNonce: code.nonce,
    ...(code.verifier ? { pkceCodeVerifier: code.verifier } : {}),
    idTokenExpected: true,
  });
  return { tokens, sessionId: code.sessionId, browserCookie };
}

async function signIn(name: ClientName, scopes: string[], userId: string = IDS.alice, on: TestServer = server): Promise<Tokens> {
  return (await signInBrowser(name, scopes, userId, on)).tokens;
}

/** RP-initiated logout with an ID token hint in the browser: ends its sessions and revokes their tokens. */
async function endSession(signedIn: SignedIn): Promise<void> {
  const query = new URLSearchParams({ id_token_hint: signedIn.tokens.id_token! }).toString();
  const response = await fetch(`${server.url}/oidc/v1/end_session?${query}`, { redirect: 'manual', headers: { cookie: `gh_browser=${signedIn.browserCookie}` } });
  expect(response.status).toBe(303);
}

/** A successful exchange through openid-client. */
function exchange(parameters: Record<string, string> | URLSearchParams, name: ClientName = 'te-basic', on: TestServer = server): Promise<Tokens> {
  return config(name, on).then((c) => client.genericGrantRequest(c, GRANT, parameters));
}

/** A raw exchange request by te-basic (client_secret_basic), for the exact error body. */
function exchangeRaw(parameters: Record<string, string> | string, headers: Record<string, string> = { authorization: basic('te-basic', TE_SECRETS.basic) }, on: TestServer = server): Promise<Reply> {
  const body = typeof parameters === 'string' ? `grant_type=${encodeURIComponent(GRANT)}&${parameters}` : { grant_type: GRANT, ...parameters };
  return postForm(`${on.url}/oauth/v2/token`, body, headers);
}

function expectError(reply: Reply, error: string, description?: string, status = 400): void {
  expect({ status: reply.status, error: reply.json['error'] }).toEqual({ status, error });
  if (description !== undefined) expect(reply.json['error_description']).toBe(description);
}

/** subject_token / subject_token_type (and actor) parameters for a token of a given type. */
const subject = (token: string, type: string = TYPE.access) => ({ subject_token: token, subject_token_type: type });
const actor = (token: string, type: string = TYPE.access) => ({ actor_token: token, actor_token_type: type });

/** A client assertion for te-key at the token endpoint (private_key_jwt over plain HTTP). */
function clientAssertion(): Promise<string> {
  return signAssertion({ issuer: 'te-key', audience: `${server.url}/oauth/v2/token`, key: teKey.privateKey, kid: teKey.id });
}

async function jwks(on: TestServer = server) {
  const reply = await request(`${on.url}/oauth/v2/keys`);
  return createLocalJWKSet(reply.json as unknown as Parameters<typeof createLocalJWKSet>[0]);
}

/** A JWT access token of ours, signature, issuer and typ checked. */
async function accessClaims(token: string): Promise<JWTPayload> {
  return (await jwtVerify(token, await jwks(), { issuer: server.url, typ: 'at+jwt' })).payload;
}

/** Introspection by the project's API app, or by te-basic for tokens whose audience is te-basic alone. */
async function introspect(token: string, caller: 'shop-api' | 'te-basic' = 'shop-api'): Promise<Record<string, unknown>> {
  const authorization = caller === 'shop-api' ? basic('shop-api', SECRETS.api) : basic('te-basic', TE_SECRETS.basic);
  return (await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization })).json;
}

async function grantTypes(on: TestServer): Promise<unknown> {
  return (await request(`${on.url}/.well-known/openid-configuration`)).json['grant_types_supported'];
}

/** Discovery is rebuilt on the next change poll (100 ms in tests): wait up to 2 s for it to agree. */
async function discoveryListsGrant(on: TestServer, listed: boolean): Promise<unknown> {
  const deadline = Date.now() + 2000;
  let types = await grantTypes(on);
  while (Array.isArray(types) && types.includes(GRANT) !== listed && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    types = await grantTypes(on);
  }
  return types;
}

async function apiToken(on: TestServer): Promise<string> {
  const reply = await postForm(`${on.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: API_SCOPE }, { authorization: basic('reporter', SECRETS.reporter) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

// --- the feature switch ----------------------------------------------------------------------

describe('the oidcTokenExchange feature switch', () => {
  // One instance walked through off → on (REST) → off (gRPC); the three tests run in order.
  let off: TestServer;
  let aliceAccess: string;
  const body = () => ({ ...subject(aliceAccess), scope: 'openid' });

  beforeAll(async () => {
    off = await startTestServer(exchangeDocument(fixture().document, false));
    aliceAccess = (await signIn('te-basic', ['openid'], IDS.alice, off)).access_token;
  });
  afterAll(() => off.stop());

  it('is off by default: unsupported_grant_type, and discovery does not list the grant', async () => {
    const reply = await exchangeRaw(body(), undefined, off);
    expectError(reply, 'unsupported_grant_type', `grant_type ${GRANT} is not supported`);
    const types = await grantTypes(off);
    expect(types).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    expect(types).not.toContain(GRANT);
  });

  it('switched on over REST (PUT /v2/features/instance), exchanges work at once and discovery lists the grant', async () => {
    const put = await request(`${off.url}/v2/features/instance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await apiToken(off)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ oidcTokenExchange: true }),
    });
    expect(put.status).toBe(200);
    const tokens = await exchange(body(), 'te-basic', off);
    expect(tokens['issued_token_type']).toBe(TYPE.access);
    expect(await discoveryListsGrant(off, true)).toContain(GRANT);
  });

  it('switched off over gRPC (FeatureService.SetInstanceFeatures), the grant is unsupported again', async () => {
    const features = createClient(FeatureService, createGrpcTransport({ baseUrl: off.url }));
    const set = await features.setInstanceFeatures({ oidcTokenExchange: false }, { headers: { authorization: `Bearer ${await apiToken(off)}` } });
    expect(set.details?.sequence).toBeGreaterThan(0n);
    expectError(await exchangeRaw(body(), undefined, off), 'unsupported_grant_type', `grant_type ${GRANT} is not supported`);
    expect(await discoveryListsGrant(off, false)).not.toContain(GRANT);
  });

  it('the main server, switched on by its bootstrap document, lists the grant', async () => {
    expect(await grantTypes(server)).toContain(GRANT);
  });
});

// --- clients -----------------------------------------------------------------------------------

describe('which clients may exchange', () => {
  let aliceAccess: string;
  beforeAll(async () => {
    aliceAccess = (await signIn('te-basic', ['openid', 'profile'])).access_token;
  });

  it('an application without the grant type is unauthorized_client', async () => {
    const reply = await exchangeRaw({ ...subject(aliceAccess), scope: 'openid' }, { authorization: basic('te-without', TE_SECRETS.without) });
    expectError(reply, 'unauthorized_client', `grant_type ${GRANT} is not allowed for this client`);
  });

  it('an API application is unauthorized_client', async () => {
    const reply = await exchangeRaw({ ...subject(aliceAccess), scope: 'openid' }, { authorization: basic('shop-api', SECRETS.api) });
    expectError(reply, 'unauthorized_client', 'an API application may only introspect');
  });

  it.each<ClientName>(['te-basic', 'te-post', 'te-public', 'te-key'])('%s exchanges with its registered authentication method', async (name) => {
    const tokens = await exchange({ ...subject(aliceAccess), scope: 'openid profile' }, name);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens['issued_token_type']).toBe(TYPE.access);
    expect(tokens.scope).toBe('openid profile');
    expect(tokens.claims()).toMatchObject({ sub: IDS.alice, azp: name });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice, client_id: name });
  });

  it('a public client may not present an ID token (it could be a leaked one): invalid_request', async () => {
    const { id_token } = await signIn('te-public', ['openid']);
    const asSubject = await exchangeRaw({ ...subject(id_token!, TYPE.id), scope: 'openid', client_id: 'te-public' }, {});
    expectError(asSubject, 'invalid_request', 'subject_token of type id_token is accepted only from a client that authenticates');
    const asActor = await exchangeRaw({ ...subject(aliceAccess), ...actor(id_token!, TYPE.id), scope: 'openid', client_id: 'te-public' }, {});
    expectError(asActor, 'invalid_request', 'actor_token of type id_token is accepted only from a client that authenticates');
  });

  it.each([
    ['a wrong secret over Basic', { authorization: basic('te-basic', 'wrong') }, {}],
    ['a wrong secret over post', {}, { client_id: 'te-post', client_secret: 'wrong' }],
    ['a machine user', { authorization: basic('reporter', SECRETS.reporter) }, {}],
  ])('%s is 401 invalid_client', async (_name, headers, credentials) => {
    const reply = await exchangeRaw({ ...subject(aliceAccess), scope: 'openid', ...credentials }, headers);
    expectError(reply, 'invalid_client', 'client authentication failed', 401);
  });
});

// --- the type matrix -----------------------------------------------------------------------------

describe('the token type matrix (docs/token-exchange.md#token-types)', () => {
  describe('subject_token_type', () => {
    it('access_token: a JWT access token', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      expect(access_token.split('.')).toHaveLength(3);
      const tokens = await exchange({ ...subject(access_token), scope: 'openid' });
      expect(tokens.claims()?.sub).toBe(IDS.alice);
    });

    it('access_token: an opaque access token (of another app of the project)', async () => {
      const { access_token } = await signIn('te-post', ['openid']);
      expect(access_token).not.toContain('.');
      const tokens = await exchange({ ...subject(access_token), scope: 'openid' });
      expect(tokens.claims()?.sub).toBe(IDS.alice);
    });

    it('id_token', async () => {
      const { id_token } = await signIn('te-basic', ['openid']);
      const tokens = await exchange({ ...subject(id_token!, TYPE.id), scope: 'openid' });
      expect(tokens['issued_token_type']).toBe(TYPE.access);
      // the ID token's audience is the client alone, and so is the exchanged token's by default
      expect(await introspect(tokens.access_token, 'te-basic')).toMatchObject({ active: true, sub: IDS.alice, aud: ['te-basic'] });
    });

    it('jwt: a JWT the client signed, with an actor (here the subject itself)', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const jwt = await signAssertion({ issuer: 'te-key', subject: IDS.alice, audience: server.url, key: teKey.privateKey, kid: teKey.id });
      const tokens = await exchange({ ...subject(jwt, TYPE.jwt), ...actor(access_token), scope: 'openid', requested_token_type: TYPE.jwt }, 'te-key');
      const claims = await accessClaims(tokens.access_token);
      expect(claims).toMatchObject({ sub: IDS.alice, client_id: 'te-key', act: { iss: server.url, sub: IDS.alice } });
    });

    it('user_id: a user id, with an actor (here the subject itself)', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const tokens = await exchange({ ...subject(IDS.alice, TYPE.userId), ...actor(access_token), scope: 'openid' });
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice, client_id: 'te-basic' });
    });

    it('refresh_token is invalid_request', async () => {
      const { refresh_token } = await signIn('te-basic', ['openid', 'offline_access']);
      expectError(await exchangeRaw({ ...subject(refresh_token!, TYPE.refresh), scope: 'openid' }), 'invalid_request', 'a refresh token cannot be exchanged');
    });

    it.each([
      ['jwt', TYPE.jwt],
      ['user_id', TYPE.userId],
    ])('%s without an actor_token is invalid_request', async (_name, type) => {
      const token = type === TYPE.userId ? IDS.alice : await signAssertion({ issuer: 'te-key', subject: IDS.alice, audience: server.url, key: teKey.privateKey, kid: teKey.id });
      const reply = await exchangeRaw({ ...subject(token, type), scope: 'openid' }, { authorization: basic('te-basic', TE_SECRETS.basic) });
      expectError(reply, 'invalid_request', `subject_token_type ${type} is only accepted with an actor_token`);
    });

    it('an unknown type is invalid_request', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      expectError(await exchangeRaw({ ...subject(access_token, TYPE.unknown), scope: 'openid' }), 'invalid_request', `subject_token_type ${TYPE.unknown} is not supported`);
    });

    it('jwt issued more than an hour ago is invalid_request', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const old = await signAssertion({ issuer: 'te-key', subject: IDS.alice, audience: server.url, key: teKey.privateKey, kid: teKey.id, iat: Math.floor(Date.now() / 1000) - 7200, expiresIn: 3 * 3600 });
      const reply = await exchangeRaw(
        { ...subject(old, TYPE.jwt), ...actor(access_token), scope: 'openid', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await clientAssertion() },
        {},
      );
      expectError(reply, 'invalid_request');
    });

    it('jwt signed by a key not registered for the client is invalid_request', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const forged = await signAssertion({ issuer: 'te-key', subject: IDS.alice, audience: server.url, key: testKey('600000000000000098').privateKey, kid: teKey.id });
      const reply = await exchangeRaw(
        { ...subject(forged, TYPE.jwt), ...actor(access_token), scope: 'openid', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await clientAssertion() },
        {},
      );
      expectError(reply, 'invalid_request');
    });

    it('user_id naming another user is invalid_request while impersonation is not enabled', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const reply = await exchangeRaw({ ...subject(IDS.bob, TYPE.userId), ...actor(access_token), scope: 'openid' });
      expectError(reply, 'invalid_request', 'impersonation is not enabled on this instance');
    });
  });

  describe('actor_token_type', () => {
    it('access_token: delegation names the actor in act', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('te-basic', ['openid'], IDS.bob);
      const tokens = await exchange({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid', requested_token_type: TYPE.jwt });
      expect(await accessClaims(tokens.access_token)).toMatchObject({ sub: IDS.alice, act: { iss: server.url, sub: IDS.bob } });
      expect(tokens.claims()).toMatchObject({ sub: IDS.alice, act: { sub: IDS.bob } });
      const userinfo = await request(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(userinfo.json).toMatchObject({ sub: IDS.alice, act: { iss: server.url, sub: IDS.bob } });
    });

    it('id_token', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('te-basic', ['openid'], IDS.bob);
      const tokens = await exchange({ ...subject(alice.access_token), ...actor(bob.id_token!, TYPE.id), scope: 'openid' });
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice, act: { iss: server.url, sub: IDS.bob } });
    });

    it.each([
      ['refresh_token', TYPE.refresh, 'is not allowed'],
      ['jwt', TYPE.jwt, 'is not allowed'],
      ['user_id', TYPE.userId, 'is not allowed'],
      ['an unknown type', TYPE.unknown, 'is not supported'],
    ])('%s is invalid_request', async (_name, type, why) => {
      const alice = await signIn('te-basic', ['openid', 'offline_access']);
      const token = type === TYPE.refresh ? alice.refresh_token! : type === TYPE.userId ? IDS.bob : alice.access_token;
      const reply = await exchangeRaw({ ...subject(alice.access_token), ...actor(token, type), scope: 'openid' });
      expectError(reply, 'invalid_request', `actor_token_type ${type} ${why}`);
    });

    it('the actor adds no scopes: a scope only the actor token carries is invalid_scope', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('te-basic', ['openid', 'profile'], IDS.bob);
      const reply = await exchangeRaw({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid profile' });
      expectError(reply, 'invalid_scope', 'scope profile is not carried by the subject token');
    });

    it('an actor token of a client of another project is invalid_request', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('elsewhere-web', ['openid'], IDS.bob);
      const reply = await exchangeRaw({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid' });
      expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'actor_token is invalid, expired, revoked or not meant for this client' });
    });

    it('an actor token that itself carries act is invalid_request', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('te-basic', ['openid'], IDS.bob);
      const delegated = await exchange({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid' });
      const reply = await exchangeRaw({ ...subject(bob.access_token), ...actor(delegated.access_token), scope: 'openid' });
      expectError(reply, 'invalid_request', 'actor_token was itself issued to an actor; present the token of the acting user');
    });

    it('an exchange of a delegated token (no actor) keeps its act', async () => {
      const alice = await signIn('te-basic', ['openid']);
      const bob = await signIn('te-basic', ['openid'], IDS.bob);
      const delegated = await exchange({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid' });
      const again = await exchange({ ...subject(delegated.access_token), scope: 'openid', requested_token_type: TYPE.jwt });
      expect(await accessClaims(again.access_token)).toMatchObject({ sub: IDS.alice, act: { iss: server.url, sub: IDS.bob } });
    });
  });

  describe('requested_token_type', () => {
    it('access_token is an opaque access token', async () => {
      const { access_token } = await signIn('te-basic', ['openid', 'profile']);
      const tokens = await exchange({ ...subject(access_token), scope: 'openid profile', requested_token_type: TYPE.access });
      expect(tokens.token_type).toBe('bearer');
      expect(tokens['issued_token_type']).toBe(TYPE.access);
      expect(tokens.access_token).not.toContain('.');
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice, client_id: 'te-basic', scope: 'openid profile', given_name: 'Alice' });
    });

    it('the default is access_token', async () => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const tokens = await exchange({ ...subject(access_token), scope: 'openid' });
      expect(tokens['issued_token_type']).toBe(TYPE.access);
      expect(tokens.access_token).not.toContain('.');
    });

    it('jwt is a signed JWT access token (typ at+jwt)', async () => {
      const { access_token } = await signIn('te-basic', ['openid', 'email']);
      const tokens = await exchange({ ...subject(access_token), scope: 'openid email', requested_token_type: TYPE.jwt });
      expect(tokens.token_type).toBe('bearer');
      expect(tokens['issued_token_type']).toBe(TYPE.jwt);
      expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
      expect(await accessClaims(tokens.access_token)).toMatchObject({ sub: IDS.alice, client_id: 'te-basic', scope: 'openid email', aud: ['te-basic', IDS.project] });
    });

    it('id_token is a signed ID token of the subject, token_type N_A, with no refresh or ID token beside it', async () => {
      const signedIn = await signIn('te-basic', ['openid', 'profile', 'offline_access']);
      const parameters = { ...subject(signedIn.access_token), scope: 'openid profile offline_access', requested_token_type: TYPE.id };
      const tokens = await exchange(parameters);
      expect(tokens.token_type).toBe('n_a'); // openid-client lowercases; the raw body is checked below
      expect(tokens['issued_token_type']).toBe(TYPE.id);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.id_token).toBeUndefined();
      expect(tokens.scope).toBe('openid profile');
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, await jwks(), { issuer: server.url, audience: 'te-basic', typ: 'JWT' });
      expect(protectedHeader.alg).toBe('RS256');
      // an exchanged ID token is for the client (and any audience asked for explicitly), never the subject token's whole audience
      expect(payload).toMatchObject({ sub: IDS.alice, azp: 'te-basic', aud: ['te-basic'], sid: signedIn.claims()!['sid'], given_name: 'Alice' });

      const raw = await exchangeRaw(parameters);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('cache-control')).toBe('no-store');
      expect(raw.json).toEqual({ access_token: expect.any(String), token_type: 'N_A', issued_token_type: TYPE.id, expires_in: expect.any(Number), scope: 'openid profile' });
    });

    it.each([
      ['refresh_token', TYPE.refresh],
      ['user_id', TYPE.userId],
      ['an unknown type', TYPE.unknown],
    ])('%s is invalid_request', async (_name, type) => {
      const { access_token } = await signIn('te-basic', ['openid']);
      const reply = await exchangeRaw({ ...subject(access_token), scope: 'openid', requested_token_type: type });
      expectError(reply, 'invalid_request', `requested_token_type ${type} is not supported`);
    });
  });
});

// --- parameters --------------------------------------------------------------------------------

describe('parameters', () => {
  let aliceAccess: string;
  let bobAccess: string;
  beforeAll(async () => {
    aliceAccess = (await signIn('te-basic', ['openid'])).access_token;
    bobAccess = (await signIn('te-basic', ['openid'], IDS.bob)).access_token;
  });

  it.each<[string, () => Record<string, string>, string]>([
    ['subject_token missing', () => ({ subject_token_type: TYPE.access, scope: 'openid' }), 'subject_token is required'],
    ['subject_token_type missing', () => ({ subject_token: aliceAccess, scope: 'openid' }), 'subject_token_type is required'],
    ['scope missing', () => subject(aliceAccess), 'scope is required'],
    ['actor_token without actor_token_type', () => ({ ...subject(aliceAccess), actor_token: bobAccess, scope: 'openid' }), 'actor_token_type is required with actor_token'],
    ['actor_token_type without actor_token', () => ({ ...subject(aliceAccess), actor_token_type: TYPE.access, scope: 'openid' }), 'actor_token_type is given without actor_token'],
    ['resource', () => ({ ...subject(aliceAccess), scope: 'openid', resource: 'https://api.acme.test' }), 'resource is not supported; use audience'],
  ])('%s is invalid_request', async (_name, body, description) => {
    expectError(await exchangeRaw(body()), 'invalid_request', description);
  });

  it('a repeated scope is invalid_request', async () => {
    const reply = await exchangeRaw(new URLSearchParams({ ...subject(aliceAccess), scope: 'openid' }).toString() + '&scope=profile');
    expectError(reply, 'invalid_request', 'scope is repeated');
  });

  it('a repeated audience is accepted (RFC 8693 §2.1)', async () => {
    const parameters = new URLSearchParams({ ...subject(aliceAccess), scope: 'openid', requested_token_type: TYPE.jwt });
    parameters.append('audience', 'te-basic');
    parameters.append('audience', IDS.project);
    const tokens = await exchange(parameters);
    expect((await accessClaims(tokens.access_token)).aud).toEqual(['te-basic', IDS.project]);
  });

  it('a space-separated audience is read as a list', async () => {
    const tokens = await exchange({ ...subject(aliceAccess), scope: 'openid', requested_token_type: TYPE.jwt, audience: `${IDS.project} te-basic` });
    expect((await accessClaims(tokens.access_token)).aud).toEqual([IDS.project, 'te-basic']);
  });
});

// --- refused subject tokens --------------------------------------------------------------------

describe('subject tokens that are refused', () => {
  it.each<[string, () => Promise<string>]>([
    ['a random string', async () => 'not-a-token-we-issued'],
    [
      'a JWT signed by a foreign key under our key id',
      async () => {
        const { access_token } = await signIn('te-basic', ['openid']);
        const header = decodeProtectedHeader(access_token);
        return new SignJWT(decodeJwt(access_token)).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: header.kid! }).sign(testKey('x').privateKey);
      },
    ],
    [
      'a JWT whose payload was changed (a later exp)',
      async () => {
        const { access_token } = await signIn('te-basic', ['openid']);
        const [header, payload, signature] = access_token.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp: number };
        const tampered = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86400 })).toString('base64url');
        return `${header}.${tampered}.${signature}`;
      },
    ],
    [
      'an expired opaque token',
      async () => {
        const { access_token } = await signIn('te-post', ['openid']);
        await server.running.gh.db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256(access_token)).execute();
        return access_token;
      },
    ],
    [
      'a revoked JWT access token',
      async () => {
        const { access_token } = await signIn('te-basic', ['openid']);
        const revoke = await postForm(`${server.url}/oauth/v2/revoke`, { token: access_token }, { authorization: basic('te-basic', TE_SECRETS.basic) });
        expect(revoke.status).toBe(200);
        return access_token;
      },
    ],
    [
      'a revoked opaque access token',
      async () => {
        const { access_token } = await signIn('te-post', ['openid']);
        const revoke = await postForm(`${server.url}/oauth/v2/revoke`, { token: access_token, client_id: 'te-post', client_secret: TE_SECRETS.post });
        expect(revoke.status).toBe(200);
        return access_token;
      },
    ],
    ['an access token of a client of another project', async () => (await signIn('elsewhere-web', ['openid'])).access_token],
  ])('%s is invalid_request', async (_name, token) => {
    const reply = await exchangeRaw({ ...subject(await token()), scope: 'openid' });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(INVALID_SUBJECT);
  });

  it('an ID token of a client of another project is invalid_request', async () => {
    const { id_token } = await signIn('elsewhere-web', ['openid']);
    const reply = await exchangeRaw({ ...subject(id_token!, TYPE.id), scope: 'openid' });
    expect(reply.json).toEqual(INVALID_SUBJECT);
  });

  it('an expired ID token is invalid_request', async () => {
    const { sessionId } = await signInBrowser('te-basic', ['openid']);
    const now = Math.floor(Date.now() / 1000);
    // issued after the user was created (a token older than its subject is refused for that reason alone)
    const idToken = async (exp: number) =>
      (await server.running.gh.tokens.sign({ iss: server.url, sub: IDS.alice, aud: ['te-basic'], azp: 'te-basic', iat: now, exp, auth_time: now, sid: sessionId }, 'JWT')).jwt;
    const reply = await exchangeRaw({ ...subject(await idToken(now - 1), TYPE.id), scope: 'openid' });
    expect(reply.json).toEqual(INVALID_SUBJECT);
    // the same token, unexpired, is accepted
    expect((await exchangeRaw({ ...subject(await idToken(now + 3600), TYPE.id), scope: 'openid' })).status).toBe(200);
  });

  it('an ID token whose browser session has ended is invalid_request', async () => {
    const alice = await signInBrowser('te-basic', ['openid']);
    await endSession(alice);
    const reply = await exchangeRaw({ ...subject(alice.tokens.id_token!, TYPE.id), scope: 'openid' });
    expect(reply.json).toEqual(INVALID_SUBJECT);
  });

  it('an access token of another app whose audience includes the caller’s project is accepted', async () => {
    const { access_token } = await signIn('shop-web', ['openid', 'profile']);
    expect((await accessClaims(access_token)).aud).toEqual(['shop-web', IDS.project]);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid profile', requested_token_type: TYPE.jwt });
    expect(await accessClaims(tokens.access_token)).toMatchObject({ sub: IDS.alice, client_id: 'te-basic', aud: ['shop-web', IDS.project] });
  });
});

// --- scopes ------------------------------------------------------------------------------------

describe('scopes', () => {
  let signedIn: Tokens;
  beforeAll(async () => {
    signedIn = await signIn('te-basic', ['openid', 'profile', 'email']);
  });

  it('narrowing works and the response says so', async () => {
    const tokens = await exchange({ ...subject(signedIn.access_token), scope: 'openid email' });
    expect(tokens.scope).toBe('openid email');
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, scope: 'openid email', email: 'alice@acme.test' });
  });

  it.each([
    ['a claim scope', 'openid phone', 'scope phone is not carried by the subject token'],
    ['offline_access', 'openid offline_access', 'scope offline_access is not carried by the subject token'],
    ['a project audience scope', `openid ${OTHER_PROJECT_SCOPE}`, `scope ${OTHER_PROJECT_SCOPE} is not carried by the subject token`],
  ])('%s not in the subject access token is invalid_scope', async (_name, scope, description) => {
    expectError(await exchangeRaw({ ...subject(signedIn.access_token), scope }), 'invalid_scope', description);
  });

  it('an unknown scope is invalid_scope', async () => {
    expectError(await exchangeRaw({ ...subject(signedIn.access_token), scope: 'openid admin' }), 'invalid_scope', 'scope admin is not supported');
  });

  it('claim scopes are free with an ID-token subject', async () => {
    const tokens = await exchange({ ...subject(signedIn.id_token!, TYPE.id), scope: 'openid profile email phone address' });
    expect(tokens.scope).toBe('openid profile email phone address');
    expect(await introspect(tokens.access_token, 'te-basic')).toMatchObject({ active: true, scope: 'openid profile email phone address', given_name: 'Alice' });
  });

  it('offline_access with an ID-token subject is invalid_scope', async () => {
    const reply = await exchangeRaw({ ...subject(signedIn.id_token!, TYPE.id), scope: 'openid offline_access' });
    expectError(reply, 'invalid_scope', 'scope offline_access is not carried by the subject token');
  });
});

// --- audience ------------------------------------------------------------------------------------

describe('audience', () => {
  // Alice's token reaches three audiences: the client, its project, and the other project by scope.
  let wide: string;
  beforeAll(async () => {
    wide = (await signIn('te-basic', ['openid', OTHER_PROJECT_SCOPE])).access_token;
    expect((await accessClaims(wide)).aud).toEqual(['te-basic', IDS.project, SECOND_PROJECT]);
  });

  it('defaults to the subject token’s audience', async () => {
    const tokens = await exchange({ ...subject(wide), scope: 'openid', requested_token_type: TYPE.jwt });
    expect((await accessClaims(tokens.access_token)).aud).toEqual(['te-basic', IDS.project, SECOND_PROJECT]);
  });

  it('may be narrowed to one entry', async () => {
    const tokens = await exchange({ ...subject(wide), scope: 'openid', audience: SECOND_PROJECT, requested_token_type: TYPE.jwt });
    expect((await accessClaims(tokens.access_token)).aud).toEqual([SECOND_PROJECT]);
    expect(tokens.claims()).toMatchObject({ aud: ['te-basic', SECOND_PROJECT], azp: 'te-basic' });
  });

  it('may include the actor token’s audience when the actor may act as the subject (here: itself)', async () => {
    const alice = await signIn('te-basic', ['openid']);
    const wider = await signIn('te-basic', ['openid', OTHER_PROJECT_SCOPE]);
    const tokens = await exchange({ ...subject(alice.access_token), ...actor(wider.access_token), scope: 'openid', audience: SECOND_PROJECT, requested_token_type: TYPE.jwt });
    expect((await accessClaims(tokens.access_token)).aud).toEqual([SECOND_PROJECT]);
  });

  it('does not lend a delegate’s audience to the subject: invalid_target', async () => {
    const alice = await signIn('te-basic', ['openid']);
    const bob = await signIn('te-basic', ['openid', OTHER_PROJECT_SCOPE], IDS.bob);
    const reply = await exchangeRaw({ ...subject(alice.access_token), ...actor(bob.access_token), scope: 'openid', audience: SECOND_PROJECT });
    expectError(reply, 'invalid_target', `audience ${SECOND_PROJECT} is not an audience of the subject or actor token`);
  });

  it('an audience of neither token is invalid_target', async () => {
    const reply = await exchangeRaw({ ...subject(wide), scope: 'openid', audience: 'https://elsewhere.test' });
    expectError(reply, 'invalid_target', 'audience https://elsewhere.test is not an audience of the subject or actor token');
  });

  it('an audience beside allowed ones is invalid_target too', async () => {
    const reply = await exchangeRaw(`${new URLSearchParams({ ...subject(wide), scope: 'openid' }).toString()}&audience=te-basic&audience=other-api`);
    expectError(reply, 'invalid_target', 'audience other-api is not an audience of the subject or actor token');
  });
});

// --- refresh tokens ------------------------------------------------------------------------------

describe('lifetimes', () => {
  it('an exchanged token expires no later than the subject token: exchanging again renews nothing', async () => {
    const { access_token } = await signIn('te-basic', ['openid']);
    const subjectExp = (await accessClaims(access_token)).exp!;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const first = await exchange({ ...subject(access_token), scope: 'openid', requested_token_type: TYPE.jwt });
    expect((await accessClaims(first.access_token)).exp).toBe(subjectExp);
    expect(first.expires_in).toBeLessThan(43200);
    const second = await exchange({ ...subject(first.access_token), scope: 'openid', requested_token_type: TYPE.jwt });
    expect((await accessClaims(second.access_token)).exp).toBe(subjectExp);
    const id = await exchange({ ...subject(second.access_token), scope: 'openid', requested_token_type: TYPE.id });
    expect(decodeJwt(id.access_token).exp).toBe(subjectExp);
    expect(id.expires_in).toBeLessThan(43200);
  });
});

describe('offline_access', () => {
  it('no refresh token when the subject token’s refresh family has no live refresh token', async () => {
    const { db } = server.running.gh;
    const signedIn = await signIn('te-basic', ['openid', 'offline_access']);
    await db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256(signedIn.refresh_token!)).execute();
    const tokens = await exchange({ ...subject(signedIn.access_token), scope: 'openid offline_access' });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('openid');
  });

  it('a refresh token of an exchange stops working once the client no longer lists the grant', async () => {
    const { db, directory } = server.running.gh;
    const { access_token } = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid offline_access' });
    const app = await db.selectFrom('apps').select(['id', 'grant_types']).where('client_id', '=', 'te-basic').executeTakeFirstOrThrow();
    await db.updateTable('apps').set({ grant_types: app.grant_types.filter((g) => g !== GRANT) }).where('id', '=', app.id).execute();
    directory.clear();
    try {
      await expect(client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await db.updateTable('apps').set({ grant_types: app.grant_types }).where('id', '=', app.id).execute();
      directory.clear();
    }
  });

  it('a refresh token of an exchange stops working while token exchange is switched off', async () => {
    const { db, directory, instanceId } = server.running.gh;
    const { access_token } = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid offline_access' });
    await setFeatures(db, instanceId, { oidcTokenExchange: false });
    directory.clear();
    try {
      await expect(client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await setFeatures(db, instanceId, { oidcTokenExchange: true });
      directory.clear();
    }
  });

  it('without offline_access there is no refresh token', async () => {
    const { access_token } = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid' });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('openid');
  });

  it('a client without the refresh_token grant gets none, and offline_access leaves the scope', async () => {
    const { access_token } = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid offline_access' }, 'te-post');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('openid');
  });

  it('yields a refresh token whose family keeps the exchanged token type', async () => {
    const { access_token } = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(access_token), scope: 'openid offline_access' });
    expect(tokens.scope).toBe('openid offline_access');
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const next = await client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!);
    // te-basic's own tokens are JWTs; the exchange asked for an opaque one, and so does its family
    expect(next.access_token).not.toContain('.');
    expect(await introspect(next.access_token)).toMatchObject({ active: true, sub: IDS.alice, client_id: 'te-basic' });
  });

  it('a delegated family refreshes with its audience and act', async () => {
    const alice = await signIn('te-basic', ['openid', 'offline_access']);
    const bob = await signIn('te-basic', ['openid'], IDS.bob);
    const tokens = await exchange({
      ...subject(alice.access_token),
      ...actor(bob.access_token),
      scope: 'openid offline_access',
      audience: IDS.project,
      requested_token_type: TYPE.jwt,
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(await accessClaims(tokens.access_token)).toMatchObject({ sub: IDS.alice, aud: [IDS.project], act: { sub: IDS.bob } });

    const next = await client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    const claims = await accessClaims(next.access_token);
    expect(claims).toMatchObject({ sub: IDS.alice, client_id: 'te-basic', aud: [IDS.project], act: { iss: server.url, sub: IDS.bob } });
    expect(next.claims()).toMatchObject({ sub: IDS.alice, azp: 'te-basic', act: { sub: IDS.bob } });
  });
});

// --- sessions ----------------------------------------------------------------------------------

describe('the browser session the exchanged tokens rest on', () => {
  it('is the subject’s in a delegation: ending it ends the delegated access and refresh tokens; the actor’s does not', async () => {
    const alice = await signInBrowser('te-basic', ['openid', 'offline_access']);
    const bob = await signInBrowser('te-basic', ['openid'], IDS.bob);
    const tokens = await exchange({ ...subject(alice.tokens.access_token), ...actor(bob.tokens.access_token), scope: 'openid offline_access', requested_token_type: TYPE.jwt });
    expect(await accessClaims(tokens.access_token)).toMatchObject({ sub: IDS.alice, sid: alice.sessionId, act: { sub: IDS.bob } });

    await endSession(bob);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice });
    await endSession(alice);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await expect(client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('belongs to the subject token’s family: revoking that refresh family revokes the exchanged tokens', async () => {
    const alice = await signIn('te-basic', ['openid', 'offline_access']);
    const tokens = await exchange({ ...subject(alice.access_token), scope: 'openid offline_access', requested_token_type: TYPE.jwt });
    expect((await accessClaims(tokens.access_token))['gid']).toBe((await accessClaims(alice.access_token))['gid']);
    const revoked = await postForm(`${server.url}/oauth/v2/revoke`, { token: alice.refresh_token! }, { authorization: basic('te-basic', TE_SECRETS.basic) });
    expect(revoked.status).toBe(200);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await expect(client.refreshTokenGrant(await config('te-basic'), tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('is the subject’s without an actor: ending it ends the exchanged tokens', async () => {
    const alice = await signInBrowser('te-basic', ['openid']);
    const tokens = await exchange({ ...subject(alice.tokens.access_token), scope: 'openid' });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true });
    await endSession(alice);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });
});

// --- events --------------------------------------------------------------------------------------

describe('the audit event', () => {
  const db = () => server.running.gh.db;

  async function lastSequence(): Promise<string> {
    const row = await db()
      .selectFrom('events')
      .select((eb) => eb.fn.max('sequence').as('max'))
      .executeTakeFirstOrThrow();
    return String(row.max);
  }

  async function exchangedSince(sequence: string) {
    return db().selectFrom('events').selectAll().where('event_type', '=', 'user.token.exchanged').where('sequence', '>', sequence).execute();
  }

  it('an exchange appends user.token.exchanged, an audit record', async () => {
    const { access_token } = await signIn('te-basic', ['openid', 'profile']);
    const before = await lastSequence();
    const tokens = await exchange({ ...subject(access_token), scope: 'openid', requested_token_type: TYPE.jwt });
    const grantId = (await accessClaims(tokens.access_token))['gid'];
    const rows = await exchangedSince(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ aggregate_type: 'user', aggregate_id: IDS.alice, resource_owner: IDS.org, creator: IDS.alice, audit: true });
    expect(rows[0]!.payload).toEqual({
      clientId: 'te-basic',
      shape: 'exchange',
      subject: IDS.alice,
      subjectTokenType: TYPE.access,
      issuedTokenType: TYPE.jwt,
      scopes: ['openid'],
      audience: ['te-basic', IDS.project],
      grantId,
    });
  });

  it('a delegation names the actor as creator and in the payload', async () => {
    const alice = await signIn('te-basic', ['openid']);
    const bob = await signIn('te-basic', ['openid'], IDS.bob);
    const before = await lastSequence();
    await exchange({ ...subject(alice.access_token), ...actor(bob.id_token!, TYPE.id), scope: 'openid', audience: IDS.project });
    const rows = await exchangedSince(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ aggregate_id: IDS.alice, creator: IDS.bob, audit: true });
    expect(rows[0]!.payload).toEqual({
      clientId: 'te-basic',
      shape: 'delegation',
      subject: IDS.alice,
      actor: IDS.bob,
      subjectTokenType: TYPE.access,
      actorTokenType: TYPE.id,
      issuedTokenType: TYPE.access,
      scopes: ['openid'],
      audience: [IDS.project],
      grantId: expect.any(String),
    });
  });

  it('a refused exchange appends nothing', async () => {
    const { access_token } = await signIn('te-basic', ['openid']);
    const before = await lastSequence();
    expectError(await exchangeRaw({ ...subject(access_token), scope: 'openid phone' }), 'invalid_scope');
    expectError(await exchangeRaw({ ...subject(access_token), scope: 'openid', audience: 'https://elsewhere.test' }), 'invalid_target');
    expect(await exchangedSince(before)).toEqual([]);
  });

  it('an exchange does not move latestSequence (caches stay warm)', async () => {
    const { access_token } = await signIn('te-basic', ['openid']);
    const before = await latestSequence(db());
    expect(before).not.toBe('0');
    await exchange({ ...subject(access_token), scope: 'openid' });
    await exchange({ ...subject(access_token), scope: 'openid', requested_token_type: TYPE.id });
    expect(await latestSequence(db())).toBe(before);
    expect(BigInt(await lastSequence())).toBeGreaterThan(BigInt(before));
  });
});
