/**
 * Browser sign-in end to end: a real headless Chromium (Debian's, driven by playwright-core)
 * fills the login UI; openid-client is the relying party and validates every ID token strictly.
 * Screenshots of the pages for the README are written to docs/screenshots/ when GATEHOUSE_SCREENSHOTS=1.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { codeFor, wrongCode } from '../support/totp.ts';

interface Callback {
  method: string;
  url: URL;
  body: string;
}

describeWithChromium('sign-in in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  const callbacks: Callback[] = [];

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        callbacks.push({ method: req.method ?? 'GET', url: new URL(req.url ?? '/', rpBase), body });
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>');
      });
    });
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));

    const document = fixture().document as { orgs: Array<{ users: unknown[]; projects: Array<{ apps: Array<Record<string, unknown>> }> }> };
    const org = document.orgs[0]!;
    org.users.push({ id: '200000000000000002', userName: 'bob', password: 'Another-Horse-7', email: 'bob@acme.test', givenName: 'Bob', familyName: 'Builder' });
    for (const app of org.projects[0]!.apps) {
      if (app['clientId'] === 'shop-web') {
        app['redirectUris'] = [`${rpBase}/callback`];
        app['postLogoutRedirectUris'] = [`${rpBase}/bye`];
      }
      if (app['clientId'] === 'shop-spa') app['redirectUris'] = [`${rpBase}/spa`];
    }
    server = await startTestServer(document);
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  async function relyingParty(clientId: string, auth: client.ClientAuth): Promise<client.Configuration> {
    return client.discovery(new URL(server.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
  }

  async function freshPage(locale = 'en-US'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 480, height: 760 } });
    return { context, page: await context.newPage() };
  }

  async function signIn(page: Page, loginName: string, password: string, shots?: { login: string; password: string }): Promise<void> {
    await page.waitForSelector('input[name="loginName"]');
    if (shots) await screenshot(page, shots.login);
    await page.fill('input[name="loginName"]', loginName);
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('input[name="password"]');
    if (shots) await screenshot(page, shots.password);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"].primary');
  }

  it('code flow with a confidential client: login name, password, tokens, userinfo', async () => {
    const config = await relyingParty('shop-web', client.ClientSecretBasic(SECRETS.web));
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid profile email offline_access', state, nonce });
    const { context, page } = await freshPage();
    await page.goto(url.href);
    await signIn(page, 'alice@acme.test', 'Correct-Horse-9', { login: 'login.png', password: 'password.png' });
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ sub: IDS.alice, iss: server.url, aud: ['shop-web'], azp: 'shop-web', amr: ['pwd'] });
    expect(claims.auth_time).toEqual(expect.any(Number));
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, IDS.alice);
    expect(userinfo).toMatchObject({ email: 'alice@acme.test', email_verified: true, given_name: 'Alice', preferred_username: 'alice@acme.test' });

    // single sign-on: a second authorization in the same browser needs no login
    const again = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state: 'second' });
    await page.goto(again.href);
    await page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(page.url()).searchParams.get('state')).toBe('second');
    await context.close();
  }, 60000);

  it('PKCE public client, German pages from ui_locales', async () => {
    const config = await relyingParty('shop-spa', client.None());
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `${rpBase}/spa`,
      scope: 'openid profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ui_locales: 'de',
      state: 'de-1',
    });
    const { context, page } = await freshPage();
    await page.goto(url.href);
    await page.waitForSelector('input[name="loginName"]');
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    await screenshot(page, 'login-de.png');
    await signIn(page, 'alice', 'Correct-Horse-9');
    await page.waitForURL(`${rpBase}/spa**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: 'de-1' });
    expect(tokens.claims()!.sub).toBe(IDS.alice);
    await context.close();
  }, 60000);

  it('account selection with two sessions, then sign-out and prompt=none', async () => {
    const config = await relyingParty('shop-web', client.ClientSecretBasic(SECRETS.web));
    const { context, page } = await freshPage();
    const authorize = (extra: Record<string, string>) =>
      client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid profile', state: 'acc', ...extra }).href;
    await page.goto(authorize({}));
    await signIn(page, 'alice@acme.test', 'Correct-Horse-9');
    await page.waitForURL(`${rpBase}/callback**`);
    await page.goto(authorize({ prompt: 'login', login_hint: 'bob@acme.test' }));
    await page.waitForSelector('input[name="loginName"]');
    expect(await page.inputValue('input[name="loginName"]')).toBe('bob@acme.test');
    await signIn(page, 'bob@acme.test', 'Another-Horse-7');
    await page.waitForURL(`${rpBase}/callback**`);

    await page.goto(authorize({}));
    await page.waitForSelector('button[name="sessionID"]');
    expect(await page.locator('button[name="sessionID"]').count()).toBe(2);
    await screenshot(page, 'accounts.png');
    await page.locator('button[name="sessionID"]', { hasText: 'alice@acme.test' }).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: 'acc' });
    expect(tokens.claims()!.sub).toBe(IDS.alice);

    // end session: back to the client, the tokens are dead and prompt=none needs a login
    const logout = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${rpBase}/bye`, state: 'bye-1' });
    await page.goto(logout.href);
    await page.waitForURL(`${rpBase}/bye**`);
    expect(new URL(page.url()).searchParams.get('state')).toBe('bye-1');
    const api = await relyingParty('shop-api', client.ClientSecretBasic(SECRETS.api));
    expect((await client.tokenIntrospection(api, tokens.access_token)).active).toBe(false);
    await page.goto(authorize({ prompt: 'none' }));
    await page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(page.url()).searchParams.get('error')).toBe('login_required');
    await context.close();
  }, 90000);

  it('registration with prompt=create continues the flow as the new user', async () => {
    const config = await relyingParty('shop-web', client.ClientSecretBasic(SECRETS.web));
    const url = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid email', prompt: 'create', state: 'reg' });
    const { context, page } = await freshPage();
    await page.goto(url.href);
    await page.waitForSelector('input[name="userName"]');
    await screenshot(page, 'register.png');
    await page.fill('input[name="userName"]', 'carol');
    await page.fill('input[name="email"]', 'carol@example.test');
    await page.fill('input[name="givenName"]', 'Carol');
    await page.fill('input[name="familyName"]', 'Danvers');
    await page.fill('input[name="password"]', 'Brand-New-Pass-1');
    await page.fill('input[name="passwordConfirmation"]', 'Brand-New-Pass-1');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: 'reg' });
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(userinfo).toMatchObject({ email: 'carol@example.test', email_verified: false });
    await context.close();
  }, 60000);

  it('a user with an authenticator app is asked for a code after the password; amr is pwd, otp, mfa', async () => {
    const gh = server.running.gh;
    const bob = { id: '200000000000000002', orgId: IDS.org, loginName: 'bob@acme.test' };
    const added = await addOtpFactor(gh, bob);
    if (added.kind !== 'added') throw new Error('bob already has a factor');
    const secret = added.otp.secret;
    // verified with the previous step's code, so that the current step is still unused for the login
    const earlier = Date.now() - 30_000;
    expect((await verifyOtpFactor(gh, bob, codeFor(secret, earlier), new Date(), async () => undefined)).kind).toBe('verified');

    const config = await relyingParty('shop-web', client.ClientSecretBasic(SECRETS.web));
    const url = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state: 'otp' });
    const { context, page } = await freshPage();
    await page.goto(url.href);
    await signIn(page, 'bob@acme.test', 'Another-Horse-7');
    await page.waitForSelector('input[name="code"]');
    await screenshot(page, 'otp.png');
    await page.fill('input[name="code"]', wrongCode(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('[role="alert"]');
    await page.fill('input[name="code"]', codeFor(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: 'otp' });
    expect(tokens.claims()).toMatchObject({ sub: bob.id, amr: ['pwd', 'otp', 'mfa'] });
    await context.close();
  }, 60000);

  it('form_post: the browser posts the code to the client', async () => {
    const config = await relyingParty('shop-web', client.ClientSecretBasic(SECRETS.web));
    const url = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', response_mode: 'form_post', state: 'fp' });
    const { context, page } = await freshPage();
    const before = callbacks.length;
    await page.goto(url.href);
    await signIn(page, 'alice@acme.test', 'Correct-Horse-9');
    await page.waitForURL(`${rpBase}/callback`);
    const posted = callbacks.slice(before).find((c) => c.method === 'POST');
    expect(posted).toBeDefined();
    const form = new URLSearchParams(posted!.body);
    expect(form.get('state')).toBe('fp');
    expect(form.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await context.close();
  }, 60000);
});
