/**
 * The OAuth findings of the outside security review and the rules of docs/security.md, each
 * reproduced as the attack through the real server, with openid-client as the relying party
 * wherever it can express the attack: project audiences of other organizations (10.6), assertion
 * lifetimes and replays (10.9), failed client authentications throttled and a full hashing queue
 * answered (10.11), and authorization codes that a foreign client cannot burn (10.15).
 *
 * @gatehouse-vm-modules the throttle test moves the clock with jest.spyOn(Date, 'now'), which only
 * modules loaded in this file's context see
 */
import { jest } from '@jest/globals';
import * as client from 'openid-client';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { newId } from '../../src/domain/kernel/ids.ts';
import { storeRefreshToken } from '../../src/domain/tokens/refresh-tokens.ts';
import { refreshIssuer } from '../../src/oauth/grants/user-tokens.ts';
import { signAssertion } from '../support/assertions.ts';
import { cryptoKey, fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { whileHashingQueueFull } from '../support/hashing.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode, type IssuedCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';

const WEB_CALLBACK = 'http://localhost:3000/callback';
const SPA_CALLBACK = 'http://localhost:3000/spa-callback';
const BACKEND_CALLBACK = 'http://localhost:4000/cb';
const EXCHANGE_CALLBACK = 'http://localhost:3000/exchange-callback';
const EXCHANGE_SECRET = 'sec-exchange-secret';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const INVALID_GRANT = { error: 'invalid_grant', error_description: 'grant request is invalid' };

const projectScope = (projectId: string) => `urn:gatehouse:iam:org:project:id:${projectId}:aud`;
/** Another organization's project, and a project id that exists nowhere. */
const FOREIGN = projectScope(IDS.otherProject);
const NOWHERE = projectScope('500000000000000999');
/** docs/security.md 10.6 / 10.15: one answer for both, naming only the scope the client sent. */
const refusedScope = (scope: string) => ({ error: 'invalid_scope', error_description: `scope ${scope} names no project of the client's organization` });

/** The shared fixture, token exchange on, and an ACME application allowed to exchange and refresh. */
function securityDocument(base: Record<string, unknown>): Record<string, unknown> {
  const document = structuredClone(base) as { features?: Record<string, boolean>; orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> };
  document.features = { oidcTokenExchange: true };
  document.orgs[0]!.projects![0]!.apps.push({
    name: 'exchange',
    clientId: 'sec-exchange',
    clientSecret: EXCHANGE_SECRET,
    authMethod: 'client_secret_basic',
    redirectUris: [EXCHANGE_CALLBACK],
    responseTypes: ['code'],
    grantTypes: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
    accessTokenType: 'jwt',
  });
  return document;
}

let fx: Fixture;
let server: TestServer;
let tokenUrl: string;
let introspectUrl: string;
let revokeUrl: string;

beforeAll(async () => {
  fx = fixture();
  // The failure throttle is tested on a server of its own (below); here it stays out of the way.
  server = await startTestServer(securityDocument(fx.document), { GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '0' });
  tokenUrl = `${server.url}/oauth/v2/token`;
  introspectUrl = `${server.url}/oauth/v2/introspect`;
  revokeUrl = `${server.url}/oauth/v2/revoke`;
});
afterAll(() => server.stop());

function discover(clientId: string, auth: client.ClientAuth, on: TestServer = server): Promise<client.Configuration> {
  return client.discovery(new URL(on.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

const web = () => discover('shop-web', client.ClientSecretBasic(SECRETS.web));
const resourceServer = () => discover('shop-api', client.ClientSecretBasic(SECRETS.api));

/** Alice has signed in at `clientId`; the authorization request is answered with a code. */
function signIn(clientId: string, redirectUri: string, scopes: string[], pkce = false): Promise<IssuedCode> {
  const authTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
  return signedInCode(server, { clientId, redirectUri, scopes, userId: IDS.alice, authTime, pkce });
}

function redeem(config: client.Configuration, signedIn: IssuedCode) {
  return client.authorizationCodeGrant(config, signedIn.callback, {
    expectedState: signedIn.state,
    expectedNonce: signedIn.nonce,
    ...(signedIn.verifier ? { pkceCodeVerifier: signedIn.verifier } : {}),
  });
}

/** What a resource server of Alice's project (shop-api) learns from introspection. */
async function introspect(token: string): Promise<client.IntrospectionResponse> {
  return client.tokenIntrospection(await resourceServer(), token);
}

describe('project audience scopes of other organizations (docs/security.md 10.6)', () => {
  // docs/security.md 10.6: a machine user asking for another organization's project audience
  it('client_credentials: a machine user gets invalid_scope for a foreign project, as for a project that does not exist', async () => {
    const config = await discover('reporter', client.ClientSecretBasic(SECRETS.reporter));
    await expect(client.clientCredentialsGrant(config, { scope: `openid ${FOREIGN}` })).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
    const foreign = await postForm(tokenUrl, { grant_type: 'client_credentials', scope: `openid ${FOREIGN}` }, { authorization: basic('reporter', SECRETS.reporter) });
    const nowhere = await postForm(tokenUrl, { grant_type: 'client_credentials', scope: `openid ${NOWHERE}` }, { authorization: basic('reporter', SECRETS.reporter) });
    expect([foreign.status, nowhere.status]).toEqual([400, 400]);
    expect(foreign.json).toEqual(refusedScope(FOREIGN));
    expect(nowhere.json).toEqual(refusedScope(NOWHERE));
  });

  it('client_credentials: the machine user’s own project is still granted, and its API introspects the token', async () => {
    const config = await discover('reporter', client.ClientSecretBasic(SECRETS.reporter));
    const tokens = await client.clientCredentialsGrant(config, { scope: `openid ${projectScope(IDS.project)}` });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, aud: ['reporter', IDS.project] });
  });

  // docs/security.md 10.6: the JWT profile grant takes scopes too
  it('JWT profile: a foreign project audience is invalid_scope', async () => {
    const config = await discover(IDS.reporter, client.None());
    const assertion = () => signAssertion({ issuer: IDS.reporter, audience: server.url, key: fx.reporterKey.privateKey, kid: fx.reporterKey.id });
    await expect(client.genericGrantRequest(config, JWT_BEARER, { assertion: await assertion(), scope: `openid ${FOREIGN}` })).rejects.toMatchObject({
      error: 'invalid_scope',
    });
    const reply = await postForm(tokenUrl, { grant_type: JWT_BEARER, assertion: await assertion(), scope: `openid ${FOREIGN}` });
    expect(reply.json).toEqual(refusedScope(FOREIGN));
  });

  // docs/security.md 10.6: a user's sign-in through an app of ACME cannot reach Other's API
  it('authorize: a foreign project audience is redirected to the client as invalid_scope, with the same wording as an unknown project', async () => {
    const config = await web();
    const answer = async (scope: string) => {
      const url = client.buildAuthorizationUrl(config, { redirect_uri: WEB_CALLBACK, scope, state: 'st' });
      const reply = await request(url.toString(), { redirect: 'manual' });
      expect(reply.status).toBe(303);
      const location = new URL(reply.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(WEB_CALLBACK);
      return Object.fromEntries(location.searchParams);
    };
    expect(await answer(`openid ${FOREIGN}`)).toEqual({ ...refusedScope(FOREIGN), state: 'st', iss: server.url });
    expect(await answer(`openid ${NOWHERE}`)).toEqual({ ...refusedScope(NOWHERE), state: 'st', iss: server.url });
  });

  // docs/security.md 10.6: a code whose request carries a foreign scope (asked before the fix) issues nothing
  it('authorization_code: a code carrying a foreign project audience is invalid_scope', async () => {
    const signedIn = await signIn('shop-web', WEB_CALLBACK, ['openid', FOREIGN]);
    await expect(redeem(await web(), signedIn)).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
  });

  // docs/security.md 10.6: a refresh family holding a foreign project audience (issued before the fix) refreshes no more
  it('refresh_token: a family holding a foreign project audience is invalid_scope', async () => {
    const { gh } = server.running;
    const refreshToken = await storeRefreshToken(gh.db, refreshIssuer(gh), {
      grantId: newId(),
      clientId: 'shop-web',
      subject: IDS.alice,
      sessionId: undefined,
      scopes: ['openid', FOREIGN],
      audience: ['shop-web', IDS.project, IDS.otherProject],
      authTime: new Date(),
      amr: ['pwd'],
      absoluteExpiresAt: new Date(Date.now() + 3600_000),
    });
    await expect(client.refreshTokenGrant(await web(), refreshToken)).rejects.toMatchObject({ error: 'invalid_scope' });
  });

  // docs/security.md 10.6: token exchange checks the same rule, with the same answer
  it('token exchange: a foreign project audience is invalid_scope, as an unknown one', async () => {
    const tokens = await redeem(await discover('sec-exchange', client.ClientSecretBasic(EXCHANGE_SECRET)), await signIn('sec-exchange', EXCHANGE_CALLBACK, ['openid']));
    const exchange = (scope: string) =>
      postForm(
        tokenUrl,
        { grant_type: TOKEN_EXCHANGE, subject_token: tokens.access_token, subject_token_type: TOKEN_TYPE.access, scope },
        { authorization: basic('sec-exchange', EXCHANGE_SECRET) },
      );
    expect((await exchange(`openid ${FOREIGN}`)).json).toEqual(refusedScope(FOREIGN));
    expect((await exchange(`openid ${NOWHERE}`)).json).toEqual(refusedScope(NOWHERE));
  });
});

describe('authorization codes and foreign clients (docs/security.md 10.15)', () => {
  // docs/security.md 10.15: a stolen code presented by another client must not burn it
  it('another client presenting a stolen code gets invalid_grant, and the rightful client still redeems it', async () => {
    const signedIn = await signIn('shop-web', WEB_CALLBACK, ['openid']);
    const thief = await discover('shop-post', client.ClientSecretPost(SECRETS.post));
    await expect(redeem(thief, signedIn)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
    const tokens = await redeem(await web(), signedIn);
    expect(tokens.claims()?.sub).toBe(IDS.alice);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, client_id: 'shop-web' });
  });

  // docs/security.md 10.15: the foreign client's refusal says nothing about the code
  it('the foreign client’s answer is the one for an unknown code', async () => {
    const signedIn = await signIn('shop-web', WEB_CALLBACK, ['openid']);
    const reply = await postForm(tokenUrl, { grant_type: 'authorization_code', code: signedIn.code, redirect_uri: WEB_CALLBACK, client_id: 'shop-post', client_secret: SECRETS.post });
    expect(reply.status).toBe(400);
    const unknown = await postForm(tokenUrl, { grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: WEB_CALLBACK, client_id: 'shop-post', client_secret: SECRETS.post });
    expect(reply.json).toEqual(unknown.json);
    expect(reply.json).toEqual({ error: 'invalid_grant', error_description: 'code is unknown, or was issued to another client' });
    expect((await redeem(await web(), signedIn)).claims()?.sub).toBe(IDS.alice);
  });

  // docs/security.md 10.15: a used code replayed by a foreign client revokes nothing of the rightful client
  it('a used code presented by another client does not revoke the rightful client’s tokens', async () => {
    const signedIn = await signIn('shop-web', WEB_CALLBACK, ['openid']);
    const tokens = await redeem(await web(), signedIn);
    const thief = await discover('shop-post', client.ClientSecretPost(SECRETS.post));
    await expect(redeem(thief, signedIn)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true });
  });

  // docs/security.md 10.15: the code's redirect URI is checked before the code is spent
  it('the rightful client with another redirect_uri gets invalid_grant and may still redeem the code properly', async () => {
    const signedIn = await signIn('shop-web', WEB_CALLBACK, ['openid']);
    const reply = await postForm(tokenUrl, { grant_type: 'authorization_code', code: signedIn.code, redirect_uri: 'http://localhost:3000/other' }, { authorization: basic('shop-web', SECRETS.web) });
    expect(reply.json).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
    expect((await redeem(await web(), signedIn)).claims()?.sub).toBe(IDS.alice);
  });

  // docs/security.md 10.15: a public client's id is no secret; its PKCE verifier is checked before the code is spent too
  it('a stolen public-client code presented with a wrong verifier is not burned', async () => {
    const signedIn = await signIn('shop-spa', SPA_CALLBACK, ['openid'], true);
    const spa = await discover('shop-spa', client.None());
    await expect(client.authorizationCodeGrant(spa, signedIn.callback, { expectedState: signedIn.state, pkceCodeVerifier: client.randomPKCECodeVerifier() })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await redeem(spa, signedIn)).claims()?.sub).toBe(IDS.alice);
  });
});

describe('JWT profile assertions (docs/security.md 10.9)', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const machine = () => discover(IDS.reporter, client.None());
  const assertion = (options: { iat?: number; expiresIn?: number; jti?: string | null } = {}) =>
    signAssertion({ issuer: IDS.reporter, audience: server.url, key: fx.reporterKey.privateKey, kid: fx.reporterKey.id, ...options });
  const grant = async (jwt: string) => client.genericGrantRequest(await machine(), JWT_BEARER, { assertion: jwt, scope: 'openid' });

  // docs/security.md 10.9: the review's assertion, valid ten years and issued five years ago
  it('an assertion issued five years ago and valid for ten is invalid_grant', async () => {
    const fiveYears = 5 * 365 * 86400;
    await expect(grant(await assertion({ iat: now() - fiveYears, expiresIn: 2 * fiveYears }))).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  // docs/security.md 10.9
  it.each([
    ['exp more than an hour ahead', { expiresIn: 3600 + 120 }],
    ['iat more than an hour old (exp still ahead)', { iat: Math.floor(Date.now() / 1000) - 3720, expiresIn: 3720 + 300 }],
    ['iat more than 60 s in the future', { iat: Math.floor(Date.now() / 1000) + 120 }],
  ])('%s is invalid_grant', async (_name, options) => {
    await expect(grant(await assertion(options))).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  // docs/security.md 10.9
  it('an assertion without iat is invalid_grant', async () => {
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: fx.reporterKey.id })
      .setIssuer(IDS.reporter)
      .setSubject(IDS.reporter)
      .setAudience(server.url)
      .setExpirationTime(now() + 300)
      .sign(fx.reporterKey.privateKey);
    await expect(grant(jwt)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('an iat up to 60 s ahead (a client clock running fast) is accepted', async () => {
    const tokens = await grant(await assertion({ iat: now() + 30 }));
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  // docs/security.md 10.9: replay, by jti
  it('the same assertion is accepted once (by its jti)', async () => {
    const jwt = await assertion({ jti: randomUUID() });
    expect((await grant(jwt)).access_token).toEqual(expect.any(String));
    await expect(grant(jwt)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  // docs/security.md 10.9: replay of a key-file assertion without jti (ZITADEL's SDKs), by its hash
  it('an assertion without jti is accepted once (by its hash)', async () => {
    const jwt = await assertion({ jti: null });
    expect((await grant(jwt)).access_token).toEqual(expect.any(String));
    const replay = await postForm(tokenUrl, { grant_type: JWT_BEARER, assertion: jwt, scope: 'openid' });
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual(INVALID_GRANT);
  });

  // docs/security.md 10.9: the signature has spellings that all verify; the signing input has one
  it('an assertion without jti replayed with its signature spelt otherwise is refused', async () => {
    // iat a few seconds back: unlike the previous test's assertion (deterministic RS256 signs the same payload alike)
    const jwt = await assertion({ jti: null, iat: Math.floor(Date.now() / 1000) - 7 });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(jwt.at(-1)!);
    const respelt = jwt.slice(0, -1) + alphabet[last ^ 1]; // a 256-byte RS256 signature leaves 4 unused bits in its last character
    expect(respelt).not.toBe(jwt);
    expect((await grant(respelt)).access_token).toEqual(expect.any(String));
    const replay = await postForm(tokenUrl, { grant_type: JWT_BEARER, assertion: jwt, scope: 'openid' });
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual(INVALID_GRANT);
  });
});

describe('client assertions (docs/security.md 10.9)', () => {
  type Change = (payload: Record<string, unknown>) => void;
  /** shop-api-jwt, a resource server authenticating with private_key_jwt; `change` edits its assertion. */
  const keyed = async (clientId: 'shop-api-jwt' | 'shop-backend', change: Change = () => {}) => {
    const key = clientId === 'shop-api-jwt' ? fx.apiKey : fx.backendKey;
    return discover(
      clientId,
      client.PrivateKeyJwt({ key: await cryptoKey(key), kid: key.id }, { [client.modifyAssertion]: (_header: unknown, payload: Record<string, unknown>) => change(payload) }),
    );
  };
  const now = () => Math.floor(Date.now() / 1000);
  let machineToken: string;
  beforeAll(async () => {
    const config = await discover('reporter', client.ClientSecretBasic(SECRETS.reporter));
    machineToken = (await client.clientCredentialsGrant(config, { scope: `openid ${projectScope(IDS.project)}` })).access_token;
  });

  // docs/security.md 10.9: a client assertion with iat in the future was accepted
  it.each<[string, Change]>([
    ['iat ten minutes in the future', (p) => void (p['iat'] = now() + 600)],
    ['iat more than an hour old', (p) => void (p['iat'] = now() - 3720)],
    ['no iat', (p) => void delete p['iat']],
    ['exp more than an hour ahead', (p) => void (p['exp'] = now() + 3720)],
  ])('%s is 401 invalid_client', async (_name, change) => {
    await expect(client.tokenIntrospection(await keyed('shop-api-jwt', change), machineToken)).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
  });

  // docs/security.md 10.9: refused before too; kept now that the replay rule lives in the shared assertion check
  it('a client assertion replayed with the same jti is refused', async () => {
    const jti = randomUUID();
    const config = await keyed('shop-api-jwt', (p) => void (p['jti'] = jti));
    expect(await client.tokenIntrospection(config, machineToken)).toMatchObject({ active: true });
    await expect(client.tokenIntrospection(config, machineToken)).rejects.toMatchObject({ error: 'invalid_client' });
  });

  // docs/security.md 10.9: aud = the token endpoint, at introspection
  it.each<[string, () => string]>([
    ['the token endpoint', () => tokenUrl],
    ['the introspection endpoint', () => introspectUrl],
    ['the issuer', () => server.url],
  ])('introspection accepts a client assertion whose aud is %s', async (_name, aud) => {
    const config = await keyed('shop-api-jwt', (p) => void (p['aud'] = aud()));
    expect(await client.tokenIntrospection(config, machineToken)).toMatchObject({ active: true, sub: IDS.reporter });
  });

  it('introspection refuses a client assertion whose aud is the revocation endpoint', async () => {
    const config = await keyed('shop-api-jwt', (p) => void (p['aud'] = revokeUrl));
    await expect(client.tokenIntrospection(config, machineToken)).rejects.toMatchObject({ error: 'invalid_client' });
  });

  // docs/security.md 10.9: aud = the token endpoint, at revocation
  it.each<[string, () => string]>([
    ['the token endpoint', () => tokenUrl],
    ['the revocation endpoint', () => revokeUrl],
  ])('revocation accepts a client assertion whose aud is %s, and revokes', async (_name, aud) => {
    const signedIn = await signIn('shop-backend', BACKEND_CALLBACK, ['openid', 'offline_access']);
    const tokens = await redeem(await keyed('shop-backend'), signedIn);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true });
    await client.tokenRevocation(await keyed('shop-backend', (p) => void (p['aud'] = aud())), tokens.refresh_token!);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });
});

describe('a full hashing queue (docs/security.md 10.11)', () => {
  // docs/security.md 10.11: a burst of wrong secrets used to end in 500s once the queue was full
  it('a burst of wrong secrets is answered 401 or 503 temporarily_unavailable with Retry-After: 1, never 500', async () => {
    const replies = await Promise.all(
      Array.from({ length: 150 }, (_, i) => postForm(introspectUrl, { token: 'x' }, { authorization: basic('shop-api', `wrong-${i}`) })),
    );
    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].every((status) => status === 401 || status === 503)).toBe(true);
    // Whether that burst filled the queue depends on how busy the machine is; so keep the queue full
    // from here (the server runs in this process) while a wrong secret arrives, and see the 503.
    const busy = await whileHashingQueueFull(async () => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const reply = await postForm(introspectUrl, { token: 'x' }, { authorization: basic('shop-api', `wrong-again-${attempt}`) });
        expect([401, 503]).toContain(reply.status);
        if (reply.status === 503) return reply;
      }
      return undefined;
    });
    for (const reply of [busy!, ...replies.filter((r) => r.status === 503)]) {
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.json).toEqual({ error: 'temporarily_unavailable', error_description: 'service temporarily unavailable' });
    }
    // and once the burst is over, the right secret works
    expect(await introspect('x')).toEqual({ active: false });
  });
});

describe('failed client authentications per address (docs/security.md 10.11)', () => {
  // The default limit (20 failures a minute per address). The throttle's one-minute window is fixed,
  // so Date.now is moved to the start of a window for these tests: a window boundary falling in the
  // middle of the test would reset the count (time is one of the two things tests may mock).
  let throttled: TestServer;
  const realNow = Date.now.bind(Date);
  let shift = 0;
  beforeAll(async () => {
    throttled = await startTestServer(fixture().document);
    const start = realNow();
    const windowStart = Math.floor(start / 60_000) * 60_000;
    shift = windowStart + 1000 - start;
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await throttled.stop();
  });

  const introspectAt = (secret: string) => postForm(`${throttled.url}/oauth/v2/introspect`, { token: 'x' }, { authorization: basic('shop-api', secret) });
  const expectThrottled = (reply: Reply) => {
    expect(reply.status).toBe(429);
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(reply.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(reply.json).toEqual({ error: 'temporarily_unavailable', error_description: 'too many failed client authentications from this address; try again later' });
  };

  // docs/security.md 10.11: unlimited guessing of client secrets from one address
  it('20 failures a minute are answered invalid_client; then the address gets 429 with Retry-After, even with the right secret', async () => {
    for (let i = 0; i < 20; i++) expect((await introspectAt(`guess-${i}`)).status).toBe(401);
    expectThrottled(await introspectAt(`guess-20`));
    // no oracle: the right secret gets the very same answer
    expectThrottled(await introspectAt(SECRETS.api));
    // every endpoint that authenticates clients, through openid-client too
    const config = await discover('reporter', client.ClientSecretBasic(SECRETS.reporter), throttled);
    await expect(client.clientCredentialsGrant(config, { scope: 'openid' })).rejects.toMatchObject({ error: 'temporarily_unavailable', status: 429 });
    expectThrottled(await postForm(`${throttled.url}/oauth/v2/revoke`, { token: 'x' }, { authorization: basic('shop-web', SECRETS.web) }));
  });

  // docs/security.md 10.11: the refusal comes before any hash, so a flood costs no argon2 (no 503 from a full queue)
  it('while throttled, a flood of wrong secrets is all 429: nothing is hashed', async () => {
    const replies = await Promise.all(Array.from({ length: 150 }, (_, i) => introspectAt(`flood-${i}`)));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([429]));
  });

  it('the next minute, the address may authenticate again', async () => {
    shift += 60_000;
    expect((await introspectAt(SECRETS.api)).json).toEqual({ active: false });
  });
});
