/**
 * /oidc/v1/userinfo (OIDC Core §5.3, RFC 6750) and /oidc/v1/end_session (OIDC
 * RP-Initiated Logout 1.0): claims by scope, the Bearer challenges, and logout ending the browser's
 * sessions with every token issued in them. Sign-ins are made through the domain functions and
 * exchanged with openid-client.
 */
import * as client from 'openid-client';
import { activeSessions, browserHash, newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { signedInCode } from '../support/sign-in.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';

const WEB_CALLBACK = 'http://localhost:3000/callback';
const SPA_CALLBACK = 'http://localhost:3000/spa-callback';
const WEB_LOGGED_OUT = 'http://localhost:3000/logged-out';
const SPA_LOGGED_OUT = 'http://localhost:3000/spa-logged-out';

let server: TestServer;
let userinfoUrl: string;
let endSessionUrl: string;

interface AppDocument {
  clientId: string;
  postLogoutRedirectUris?: string[];
}

beforeAll(async () => {
  const document = structuredClone(fixture().document) as { orgs: Array<{ users?: unknown[]; projects?: Array<{ apps: AppDocument[] }> }> };
  const apps = document.orgs[0]!.projects![0]!.apps;
  apps.find((a) => a.clientId === 'shop-web')!.postLogoutRedirectUris = [WEB_LOGGED_OUT];
  apps.find((a) => a.clientId === 'shop-spa')!.postLogoutRedirectUris = [SPA_LOGGED_OUT];
  document.orgs[0]!.users!.push({ id: IDS.bob, userName: 'bob', password: 'Battery-Staple-7', email: 'bob@acme.test', emailVerified: false });
  server = await startTestServer(document);
  userinfoUrl = `${server.url}/oidc/v1/userinfo`;
  endSessionUrl = `${server.url}/oidc/v1/end_session`;
});
afterAll(() => server.stop());

interface Browser {
  /** The gh_browser cookie value. */
  cookie: string;
}

/** A browser holding a cookie the server issued (docs/security.md 10.7: it ignores any other value). */
function newBrowser(): Browser {
  return { cookie: newBrowserId(server.running.gh.masterKey) };
}

const CLIENTS = {
  'shop-web': { redirectUri: WEB_CALLBACK, auth: () => client.ClientSecretBasic(SECRETS.web) },
  'shop-spa': { redirectUri: SPA_CALLBACK, auth: () => client.None() },
} as const;

/** A user signs in in the browser to the client, and the client exchanges the code (openid-client). */
async function signIn(browser: Browser, clientId: keyof typeof CLIENTS, scopes: string[], userId: string = IDS.alice) {
  const { redirectUri, auth } = CLIENTS[clientId];
  const { callback, state, nonce, verifier, sessionId } = await signedInCode(server, { clientId, redirectUri, scopes, userId, browserCookie: browser.cookie, pkce: true });
  const config = await client.discovery(new URL(server.url), clientId, undefined, auth(), { execute: [client.allowInsecureRequests] });
  const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: state, expectedNonce: nonce, pkceCodeVerifier: verifier, idTokenExpected: true });
  return { tokens, config, sessionId };
}

function userinfo(token: string, init: RequestInit = {}): Promise<Reply> {
  return request(userinfoUrl, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) } });
}

async function introspect(token: string): Promise<Record<string, unknown>> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
  return reply.json;
}

async function machineToken(scope: string): Promise<string> {
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic('reporter', SECRETS.reporter) });
  return String(reply.json['access_token']);
}

describe('userinfo', () => {
  it('answers sub and the claims of the granted scopes for a JWT access token (GET)', async () => {
    const { tokens } = await signIn(newBrowser(), 'shop-web', ['openid', 'profile', 'email']);
    const reply = await userinfo(tokens.access_token);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.json).toEqual({
      sub: IDS.alice,
      name: 'Alice Example',
      given_name: 'Alice',
      family_name: 'Example',
      preferred_username: 'alice@acme.test',
      updated_at: expect.any(Number),
      email: 'alice@acme.test',
      email_verified: true,
    });
  });

  it('answers only sub for openid alone, with an opaque token in a POST form body', async () => {
    const { tokens } = await signIn(newBrowser(), 'shop-spa', ['openid']);
    const reply = await postForm(userinfoUrl, { access_token: tokens.access_token });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ sub: IDS.alice });
  });

  it('takes the Bearer header on POST too', async () => {
    const { tokens } = await signIn(newBrowser(), 'shop-spa', ['openid', 'email']);
    const reply = await userinfo(tokens.access_token, { method: 'POST' });
    expect(reply.json).toEqual({ sub: IDS.alice, email: 'alice@acme.test', email_verified: true });
  });

  it('serves machine users', async () => {
    const reply = await userinfo(await machineToken('openid profile'));
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ sub: IDS.reporter, preferred_username: 'reporter@acme.test' });
  });

  it('without a token: 401 with a bare Bearer challenge', async () => {
    const reply = await request(userinfoUrl);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    expect(reply.json).toEqual({}); // RFC 6750 §3.1: no error code or other error information
  });

  it.each([
    ['a malformed token', async () => 'not-a-token'],
    ['a forged JWT', async () => `${(await machineToken('openid')).slice(0, -4)}AAAA`],
    ['a revoked token', async () => {
      const token = await machineToken('openid');
      await postForm(`${server.url}/oauth/v2/revoke`, { token }, { authorization: basic('reporter', SECRETS.reporter) });
      return token;
    }],
  ])('%s: 401 invalid_token', async (_name, token) => {
    const reply = await userinfo(await token());
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(reply.json).toEqual({ error: 'invalid_token', error_description: 'access token is invalid' });
  });

  it('a token without openid: 403 insufficient_scope', async () => {
    const reply = await userinfo(await machineToken('profile'));
    expect(reply.status).toBe(403);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="openid"');
    expect(reply.json['error']).toBe('insufficient_scope');
  });

  it('a token in the header and in the body: 400 invalid_request', async () => {
    const token = await machineToken('openid');
    const reply = await postForm(userinfoUrl, { access_token: token }, { authorization: `Bearer ${token}` });
    expect(reply.status).toBe(400);
    expect(reply.json['error']).toBe('invalid_request');
  });

  it('other methods: 405', async () => {
    const reply = await request(userinfoUrl, { method: 'PUT' });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('GET, POST');
  });
});

describe('end_session', () => {
  function endSession(browser: Browser | undefined, params: Record<string, string>, method: 'GET' | 'POST' = 'GET'): Promise<Response> {
    const headers: Record<string, string> = browser ? { cookie: `gh_browser=${browser.cookie}` } : {};
    const query = new URLSearchParams(params).toString();
    if (method === 'POST') {
      return fetch(endSessionUrl, { method, redirect: 'manual', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: query });
    }
    return fetch(`${endSessionUrl}?${query}`, { redirect: 'manual', headers });
  }

  /**
   * Without an id_token_hint of this browser, end_session asks the user first: follow the redirect
   * to the confirmation page, and submit its form (as the user clicking "Sign out"), with the browser
   * cookie the page issued when the browser had none (the CSRF token is bound to it).
   */
  async function confirmLogout(browser: Browser | undefined, first: Response): Promise<Response> {
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location.startsWith(`${server.url}/ui/login/logout`)).toBe(true);
    const cookies = browser ? [`gh_browser=${browser.cookie}`] : [];
    const page = await fetch(location, { headers: { cookie: cookies.join('; ') } });
    expect(page.status).toBe(200);
    const issued = page.headers.getSetCookie().find((c) => c.startsWith('gh_browser='));
    expect(issued === undefined).toBe(browser !== undefined);
    if (issued) cookies.push(issued.split(';')[0]!);
    const markup = await page.text();
    const fields = new URLSearchParams();
    for (const match of markup.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields.set(match[1]!, match[2]!.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&'));
    }
    return fetch(`${server.url}/ui/login/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookies.join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
    });
  }

  async function sessionsOf(browser: Browser) {
    return activeSessions(server.running.gh.db, server.running.gh.instanceId, browserHash(browser.cookie));
  }

  async function expectErrorPage(response: Response, error: string): Promise<void> {
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain(error);
  }

  /** An ID token of ours that expired an hour ago. */
  async function expiredIdToken(sessionId: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const { jwt } = await server.running.gh.tokens.sign(
      { iss: server.url, sub: IDS.alice, aud: ['shop-web'], azp: 'shop-web', iat: now - 13 * 3600, exp: now - 3600, auth_time: now - 13 * 3600, sid: sessionId },
      'JWT',
    );
    return jwt;
  }

  it('with a valid id_token_hint: ends the sessions, revokes their tokens, redirects with state', async () => {
    const browser = newBrowser();
    const { tokens, config } = await signIn(browser, 'shop-web', ['openid', 'profile', 'offline_access']);
    const spaTokens = (await signIn(browser, 'shop-spa', ['openid'])).tokens;
    const elsewhere = (await signIn(newBrowser(), 'shop-web', ['openid'])).tokens;

    const response = await endSession(browser, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: WEB_LOGGED_OUT, state: 'bye 1' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${WEB_LOGGED_OUT}?state=bye+1`);
    expect(response.headers.get('cache-control')).toBe('no-store');

    expect(await sessionsOf(browser)).toEqual([]);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(spaTokens.access_token)).toEqual({ active: false });
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    expect((await userinfo(spaTokens.access_token)).status).toBe(401);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // another browser's session of the same user is not touched
    expect(await introspect(elsewhere.access_token)).toMatchObject({ active: true });
  });

  it('accepts an expired id_token_hint', async () => {
    const browser = newBrowser();
    const { tokens, sessionId } = await signIn(browser, 'shop-web', ['openid']);
    const response = await endSession(browser, { id_token_hint: await expiredIdToken(sessionId), post_logout_redirect_uri: WEB_LOGGED_OUT });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(WEB_LOGGED_OUT);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it('without parameters: ends every session of the browser and shows the logged-out page', async () => {
    const browser = newBrowser();
    const alice = (await signIn(browser, 'shop-web', ['openid'])).tokens;
    const bob = (await signIn(browser, 'shop-spa', ['openid'], IDS.bob)).tokens;
    expect(await sessionsOf(browser)).toHaveLength(2);
    const asked = await endSession(browser, {});
    expect(await sessionsOf(browser)).toHaveLength(2); // nothing ends before the user confirms
    const response = await confirmLogout(browser, asked);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${server.url}/ui/login/logged-out`);
    expect(await sessionsOf(browser)).toEqual([]);
    expect(await introspect(alice.access_token)).toEqual({ active: false });
    expect(await introspect(bob.access_token)).toEqual({ active: false });
  });

  it('by POST, with client_id instead of a hint', async () => {
    const browser = newBrowser();
    const { tokens } = await signIn(browser, 'shop-spa', ['openid']);
    const response = await confirmLogout(browser, await endSession(browser, { client_id: 'shop-spa', post_logout_redirect_uri: SPA_LOGGED_OUT, state: 's' }, 'POST'));
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${SPA_LOGGED_OUT}?state=s`);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it('without a browser cookie it says so and offers the post-logout redirect, with nothing to confirm', async () => {
    const first = await endSession(undefined, { client_id: 'shop-web', post_logout_redirect_uri: WEB_LOGGED_OUT });
    expect(first.status).toBe(303);
    const page = await fetch(first.headers.get('location')!);
    expect(page.status).toBe(200);
    const markup = await page.text();
    expect(markup).toContain('No account is signed in on this device.');
    expect(markup).toContain(`<a href="${WEB_LOGGED_OUT}">Continue to the application</a>`);
    expect(markup).not.toContain('<form');
  });

  it('after logout, prompt=none answers login_required', async () => {
    const browser = newBrowser();
    await signIn(browser, 'shop-web', ['openid']);
    await confirmLogout(browser, await endSession(browser, {}));
    const authorize = new URL(`${server.url}/oauth/v2/authorize`);
    authorize.search = new URLSearchParams({ client_id: 'shop-web', redirect_uri: WEB_CALLBACK, response_type: 'code', scope: 'openid', prompt: 'none', state: 'p' }).toString();
    const response = await fetch(authorize, { redirect: 'manual', headers: { cookie: `gh_browser=${browser.cookie}` } });
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('login_required');
  });

  it('the confirmation form needs its CSRF token: a cross-site post ends nothing', async () => {
    const browser = newBrowser();
    await signIn(browser, 'shop-web', ['openid']);
    const forged = await fetch(`${server.url}/ui/login/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `gh_browser=${browser.cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrfToken=guess',
    });
    expect(forged.status).toBe(403);
    expect(await sessionsOf(browser)).toHaveLength(1);
  });

  describe('refusals: an error page, no redirect, nothing ended', () => {
    const query = (params: Record<string, string>) => new URLSearchParams(params).toString();
    it.each([
      ['a client_id other than the hint’s azp', (hint: string) => query({ id_token_hint: hint, client_id: 'shop-spa' })],
      ['an unregistered post_logout_redirect_uri', (hint: string) => query({ id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/out' })],
      ['a post_logout_redirect_uri of another client', (hint: string) => query({ id_token_hint: hint, post_logout_redirect_uri: SPA_LOGGED_OUT })],
      ['a tampered id_token_hint', (hint: string) => query({ id_token_hint: `${hint.slice(0, -4)}AAAA` })],
      ['a post_logout_redirect_uri without client_id or hint', () => query({ post_logout_redirect_uri: WEB_LOGGED_OUT })],
      ['a repeated parameter', () => 'state=a&state=b'],
    ])('%s', async (_name, params) => {
      const browser = newBrowser();
      const { tokens } = await signIn(browser, 'shop-web', ['openid']);
      const response = await fetch(`${endSessionUrl}?${params(tokens.id_token!)}`, { redirect: 'manual', headers: { cookie: `gh_browser=${browser.cookie}` } });
      await expectErrorPage(response, 'invalid_request');
      expect(await sessionsOf(browser)).toHaveLength(1);
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true });
    });
  });
});
