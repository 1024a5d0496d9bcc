/**
 * The command-line relying parties people deploy, with their own request shapes, through the real
 * login UI: oidc-agent's code flow (`prompt=consent` with `offline_access`) driven by openid-client
 * and by oauth4webapi, on a loopback redirect at a port chosen at run time; git-credential-oauth
 * (Go's x/oauth2): a redirect URI without a path, a standard-base64 verifier, and a token request
 * that first tries the client id with an empty secret in Basic, then the id in the form, 30 times in
 * a minute from one address under the default limit of 20 failed client authentications a minute.
 */
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { fixture } from '../support/fixtures.ts';
import { basic, postForm, type Reply } from '../support/http.ts';
import { base64Verifier, loopbackListener, s256, type LoopbackListener } from '../support/native-client.ts';
import { ALICE, Browser, callbackOf, signIn, startLoginServer, type LoginServer } from '../login/support.ts';

const AGENT = 'oidc-agent';
const GIT = 'git-credential-oauth';

let ls: LoginServer;
let listener: LoopbackListener;

beforeAll(async () => {
  const document = fixture().document as { orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> };
  const native = { appType: 'native', authMethod: 'none', responseTypes: ['code'], grantTypes: ['authorization_code', 'refresh_token'] };
  document.orgs[0]!.projects![0]!.apps.push(
    { ...native, name: 'agent', clientId: AGENT, redirectUris: ['http://127.0.0.1/redirect'] },
    // Go's test server listens at http://127.0.0.1:<port>, without a path: the registered "/" is the same path.
    { ...native, name: 'git', clientId: GIT, redirectUris: ['http://127.0.0.1/'] },
  );
  // The default limit of failed client authentications (20 a minute per address) stays in force.
  ls = await startLoginServer({}, document);
});
afterAll(() => ls?.stop());

beforeEach(async () => {
  listener = await loopbackListener();
});
afterEach(() => listener.close());

/** A new browser signs alice in through the login UI; the Location that sends it back to the client. */
async function signInThrough(authorizationUrl: URL): Promise<{ browser: Browser; location: URL }> {
  const browser = new Browser(ls.base);
  const start = await browser.get(`${authorizationUrl.pathname}${authorizationUrl.search}`);
  expect(start.status).toBe(303);
  const requestId = new URL(start.location!, ls.base).searchParams.get('authRequestID')!;
  expect(await signIn(browser, requestId, ALICE.loginName, ALICE.password)).toMatchObject({ status: 303, location: callbackOf(requestId) });
  const back = await browser.get(callbackOf(requestId));
  expect(back.status).toBe(303);
  const location = new URL(back.headers.get('location')!);
  // The browser follows the redirect to the client's listener.
  expect((await fetch(location)).status).toBe(200);
  expect((await listener.query).get('code')).toBe(location.searchParams.get('code'));
  return { browser, location };
}

describe('oidc-agent: prompt=consent with offline_access on a loopback port chosen at run time', () => {
  it('with openid-client: a code, tokens with a refresh token, and a refresh', async () => {
    const config = await client.discovery(new URL(ls.server.url), AGENT, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `http://127.0.0.1:${listener.port}/redirect`,
      scope: 'openid profile offline_access',
      prompt: 'consent',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const { location } = await signInThrough(url);
    const tokens = await client.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.scope).toBe('openid profile offline_access');
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.claims()).toMatchObject({ aud: [AGENT], azp: AGENT });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
  });

  it('with oauth4webapi: the same flow', async () => {
    const issuer = new URL(ls.server.url);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
    const rp: oauth.Client = { client_id: AGENT };
    const redirectUri = `http://127.0.0.1:${listener.port}/redirect`;
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({
      client_id: AGENT,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid offline_access',
      prompt: 'consent',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    })) url.searchParams.set(name, value);
    const { location } = await signInThrough(url);
    const params = oauth.validateAuthResponse(as, rp, location, state);
    const response = await oauth.authorizationCodeGrantRequest(as, rp, oauth.None(), params, redirectUri, verifier, { [oauth.allowInsecureRequests]: true });
    const result = await oauth.processAuthorizationCodeResponse(as, rp, response, { requireIdToken: true });
    expect(result.refresh_token).toEqual(expect.any(String));
    expect(oauth.getValidatedIdTokenClaims(result)).toMatchObject({ aud: [AGENT], azp: AGENT });
  });

  it('prompt=none with consent is refused, to the client', async () => {
    const url = new URL(`${ls.server.url}/oauth/v2/authorize`);
    url.search = new URLSearchParams({ client_id: AGENT, redirect_uri: `http://127.0.0.1:${listener.port}/redirect`, response_type: 'code', scope: 'openid', prompt: 'none consent', state: 's', code_challenge: s256(base64Verifier()), code_challenge_method: 'S256' }).toString();
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(location.port).toBe(String(listener.port));
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toBe('prompt none cannot be combined');
  });
});

describe('git-credential-oauth: Go x/oauth2 request shapes', () => {
  const tokenUrl = () => `${ls.server.url}/oauth/v2/token`;

  /** Go's AuthCodeURL with S256ChallengeOption: no nonce, the redirect URI of its test server. */
  function authCodeUrl(redirectUri: string, verifier: string, state: string): URL {
    const url = new URL(`${ls.server.url}/oauth/v2/authorize`);
    url.search = new URLSearchParams({
      client_id: GIT,
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
    }).toString();
    return url;
  }

  /**
   * Go's Exchange in AuthStyleAutoDetect: Basic with the client id and an empty secret; when that is
   * refused, the same request with the client id in the form.
   */
  async function goExchange(code: string, redirectUri: string, verifier: string): Promise<{ probe: Reply; retry: Reply }> {
    const form = { code, code_verifier: verifier, grant_type: 'authorization_code', redirect_uri: redirectUri };
    const probe = await postForm(tokenUrl(), form, { authorization: basic(GIT, '') });
    const retry = await postForm(tokenUrl(), { ...form, client_id: GIT });
    return { probe, retry };
  }

  it('30 sign-ins in a minute from one address: each probe is refused as before, none counts, every retry gets tokens', async () => {
    const redirectUri = `http://127.0.0.1:${listener.port}`;
    const verifier = base64Verifier();
    const { browser, location } = await signInThrough(authCodeUrl(redirectUri, verifier, 'state-0'));
    const codes = [location.searchParams.get('code')!];
    // Later runs of the helper answer from the browser's session at once (single sign-on).
    for (let run = 1; run < 30; run += 1) {
      const url = authCodeUrl(redirectUri, verifier, `state-${run}`);
      const answer = await browser.get(`${url.pathname}${url.search}`);
      expect(answer.status).toBe(303);
      const back = new URL(answer.headers.get('location')!);
      expect(`${back.origin}${back.pathname}`).toBe(`${redirectUri}/`);
      expect(back.searchParams.get('state')).toBe(`state-${run}`);
      codes.push(back.searchParams.get('code')!);
    }
    for (const code of codes) {
      const { probe, retry } = await goExchange(code, redirectUri, verifier);
      expect(probe.status).toBe(401);
      // the probe names the method the client is registered for (docs/decisions.md#client-authentication)
      expect(probe.json).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: client is registered for none, not client_secret_basic' });
      expect(retry.status).toBe(200);
      expect(retry.json).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), id_token: expect.any(String) });
    }
  });

  it('a wrong verifier and a verifier of another encoding are refused, and the code stays redeemable', async () => {
    const redirectUri = `http://127.0.0.1:${listener.port}`;
    const verifier = base64Verifier();
    const { location } = await signInThrough(authCodeUrl(redirectUri, verifier, 'state-w'));
    const code = location.searchParams.get('code')!;
    const exchange = (given: string) => postForm(tokenUrl(), { code, code_verifier: given, grant_type: 'authorization_code', redirect_uri: redirectUri, client_id: GIT });
    const wrong = { error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' };
    expect((await exchange(base64Verifier())).json).toEqual(wrong);
    // The same bytes in base64url are another verifier: characters are compared, never decoded.
    expect((await exchange(Buffer.from(verifier, 'base64').toString('base64url'))).json).toEqual(wrong);
    expect((await exchange(verifier)).status).toBe(200);
  });

  it('PKCE plain is refused at the authorization endpoint, to the client', async () => {
    const url = authCodeUrl(`http://127.0.0.1:${listener.port}`, base64Verifier(), 'state-p');
    url.searchParams.set('code_challenge_method', 'plain');
    const answer = await fetch(url, { redirect: 'manual' });
    const location = new URL(answer.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toBe('code_challenge_method must be S256');
  });

  it('a non-empty secret for the public client is a guess and still counts: the address is throttled after 20', async () => {
    const form = { code: 'x', code_verifier: base64Verifier(), grant_type: 'authorization_code', redirect_uri: `http://127.0.0.1:${listener.port}` };
    for (let attempt = 0; attempt < 20; attempt += 1) {
      expect((await postForm(tokenUrl(), form, { authorization: basic(GIT, `guess-${attempt}`) })).status).toBe(401);
    }
    const throttled = await postForm(tokenUrl(), { ...form, client_id: GIT });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
