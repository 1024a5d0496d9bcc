/**
 * The self-service passkeys page and the user's factors (docs/security.md 10.17, docs/passkeys.md;
 * the second outside review's F16, page variant), in a headless Chromium with a virtual
 * authenticator (the DevTools protocol's WebAuthn domain), as test/browser/passkeys.test.ts drives
 * it: a browser that signed in with the password before the user set up an authenticator app is not
 * offered "Add a passkey" for that session, and the page's endpoints refuse it when posted to
 * directly; a sign-in with the password and the app gets the page back, adds a passkey, and that
 * passkey then signs in without the app's code. The authenticator app is set up through the real
 * API (REST) with a sign-in of its own; openid-client is the relying party.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { pageWithAuthenticator as withAuthenticator } from '../support/virtual-authenticator.ts';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiToken, managementDocument, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { signedInCode } from '../support/sign-in.ts';
import { codeFor } from '../support/totp.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'fresh-shop', secret: 'fresh-shop-secret' };
const API_AUDIENCE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const OTP_PATH = '/auth/v1/users/me/auth_factors/otp';
/** Signed in with the password before it set up its authenticator app. */
const USER = { id: '282000000000000001', userName: 'early', loginName: 'early@managed.test' } as const;


describeWithChromium('the passkeys page asks for every factor the user has', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let origin: string;
  let admin: string;

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));

    const port = await freePort();
    origin = `http://localhost:${port}`;
    const document = managementDocument({
      users: [{ id: USER.id, userName: USER.userName, password: PASSWORD, email: USER.loginName, emailVerified: true, givenName: 'Early' }],
      projects: [
        {
          name: 'shop',
          apps: [
            {
              name: 'fresh-shop',
              clientId: APP.clientId,
              clientSecret: APP.secret,
              authMethod: 'client_secret_basic',
              redirectUris: [`${rpBase}/callback`],
              responseTypes: ['code'],
              grantTypes: ['authorization_code'],
              accessTokenType: 'jwt',
            },
          ],
        },
      ],
    });
    server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin });
    admin = await apiToken(server, 'iamAdmin');
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  async function relyingParty(): Promise<client.Configuration> {
    return client.discovery(new URL(origin), APP.clientId, undefined, client.ClientSecretBasic(APP.secret), { execute: [client.allowInsecureRequests] });
  }

  /** A page with a virtual authenticator of its own (support/virtual-authenticator.ts). */
  const pageWithAuthenticator = (locale?: string, options?: { autofill?: boolean }) => withAuthenticator(browser, locale, options);

  async function authorize(config: client.Configuration, page: Page, extra: Record<string, string> = {}): Promise<{ state: string; nonce: string }> {
    const state = client.randomState();
    const nonce = client.randomNonce();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state, nonce, ...extra }).href);
    return { state, nonce };
  }

  /** The login name and password steps, from the login name page. */
  async function enterPassword(page: Page): Promise<void> {
    await page.fill('input[name="loginName"]', USER.userName);
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
  }

  /** The user's authenticator app, set up over REST with a sign-in of its own (not this browser's); the secret. */
  async function enrolOtp(): Promise<string> {
    const issued = await signedInCode(server, { clientId: APP.clientId, redirectUri: `${rpBase}/callback`, scopes: ['openid', API_AUDIENCE], userId: USER.id });
    const redeemed = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: `${rpBase}/callback` }, {
      authorization: basic(APP.clientId, APP.secret),
    });
    expect(redeemed.status).toBe(200);
    const token = String(redeemed.json['access_token']);
    const added = await rest(server, 'POST', OTP_PATH, token, {});
    expect(added.status).toBe(200);
    const secret = String(added.json['secret']);
    // the previous step's code, so that the current one is still unused for the sign-in that follows
    expect((await rest(server, 'POST', `${OTP_PATH}/_verify`, token, { code: codeFor(secret, Date.now() - 30_000) })).status).toBe(200);
    return secret;
  }

  /** The user's passkeys as an administrator lists them: [id, state, name]. */
  async function passkeys(): Promise<Array<[unknown, unknown, unknown]>> {
    const listed = await rest(server, 'POST', `/v2/users/${USER.id}/passkeys/_search`, admin, {});
    expect(listed.status).toBe(200);
    return ((listed.json['result'] as Array<Record<string, unknown>> | undefined) ?? []).map((p) => [p['id'], p['state'], p['name']]);
  }

  /** A form POST from the page's own script (same origin, the browser's cookies), redirects not followed. */
  function postFromPage(page: Page, path: string, form: Record<string, string>): Promise<{ type: string; status: number; body: string }> {
    return page.evaluate(
      async ([url, fields]) => {
        const response = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
        return { type: response.type, status: response.status, body: response.type === 'opaqueredirect' ? '' : await response.text() };
      },
      [`${origin}${path}`, form] as const,
    );
  }

  const addButton = (page: Page) => page.getByRole('button', { name: 'Add a passkey' });

  it('a password session from before the authenticator app adds no passkey; a sign-in with the app does, and the passkey signs in', async () => {
    const { context, page, authenticator } = await pageWithAuthenticator();
    // the browser signs in with the password while the user has no authenticator app: the page offers adding
    await page.goto(`${origin}/ui/login/passkeys`);
    await enterPassword(page);
    await page.waitForURL(`${origin}/ui/login/passkeys**`);
    await expect(addButton(page).isVisible()).resolves.toBe(true);

    // the user sets up an authenticator app elsewhere: that session no longer answers for the user
    const secret = await enrolOtp();
    await page.goto(`${origin}/ui/login/passkeys`);
    expect(new URL(page.url()).pathname).toBe('/ui/login/login');
    expect(await page.inputValue('input[name="loginName"]')).toBe('');
    expect(await addButton(page).count()).toBe(0);

    // as the report did: the page's endpoints, posted to from a page of the origin with the browser's CSRF token
    const csrfToken = await page.inputValue('input[name="csrfToken"]');
    const options = await postFromPage(page, '/ui/login/passkeys/options', { csrfToken, userID: USER.id, name: 'Planted' });
    expect(options).toEqual({ type: 'opaqueredirect', status: 0, body: '' });
    const optionsAnswer = await page.request.post(`${origin}/ui/login/passkeys/options`, { form: { csrfToken, userID: USER.id, name: 'Planted' }, maxRedirects: 0 });
    expect([optionsAnswer.status(), optionsAnswer.headers()['location']]).toEqual([303, `${origin}/ui/login/passkeys`]);
    expect(await passkeys()).toEqual([]); // no registration started

    // a registration started elsewhere (by an administrator), answered by this browser's authenticator, posted with the session
    const started = await rest(server, 'POST', `/v2/users/${USER.id}/passkeys`, admin, {});
    expect(started.status).toBe(200);
    const passkeyId = String(started.json['passkeyId']);
    const creation = (started.json['publicKeyCredentialCreationOptions'] as { publicKey: unknown }).publicKey;
    const credential: unknown = await page.evaluate(
      `(async (json) => (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json) })).toJSON())(${JSON.stringify(creation)})`,
    );
    const added = await postFromPage(page, '/ui/login/passkeys', { csrfToken, userID: USER.id, action: 'add', passkeyId, credential: JSON.stringify(credential), name: 'Planted' });
    expect(added).toEqual({ type: 'opaqueredirect', status: 0, body: '' });
    expect(await passkeys()).toEqual([[passkeyId, 'AUTH_FACTOR_STATE_NOT_READY', undefined]]);
    // that credential was never registered: out of the authenticator, so that only the next one can sign in
    expect((await rest(server, 'DELETE', `/v2/users/${USER.id}/passkeys/${passkeyId}`, admin)).status).toBe(200);
    await authenticator.cdp.send('WebAuthn.clearCredentials', { authenticatorId: authenticator.authenticatorId });

    // signing in again with the password and the authenticator app brings the page back
    await page.goto(`${origin}/ui/login/passkeys`);
    await enterPassword(page);
    await page.waitForSelector('input[name="code"]');
    await page.fill('input[name="code"]', codeFor(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkeys**`);
    expect(await page.textContent('.identity strong')).toBe(USER.loginName);
    await page.fill('input[name="name"]', 'Laptop');
    await addButton(page).click();
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USER.id}&done=added`);
    expect(await page.locator('ul.accounts li strong').allTextContents()).toEqual(['Laptop']);
    expect((await passkeys()).map(([, state, name]) => [state, name])).toEqual([['AUTH_FACTOR_STATE_READY', 'Laptop']]);

    // the new passkey signs in, and is the second factor: no code asked
    const config = await relyingParty();
    const { state, nonce } = await authorize(config, page, { prompt: 'login' });
    await page.waitForSelector('input[name="loginName"]');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USER.id, amr: ['user', 'mfa'] });

    // that sign-in ages past 10 minutes: the page lists the passkey but adds nothing
    await server.running.gh.db.updateTable('user_sessions').set({ auth_time: new Date(Date.now() - 11 * 60_000) }).where('user_id', '=', USER.id).execute();
    await page.goto(`${origin}/ui/login/passkeys`);
    expect(await page.textContent('.identity strong')).toBe(USER.loginName);
    expect(await addButton(page).count()).toBe(0);
    await expect(page.getByRole('button', { name: 'Sign in again' }).isVisible()).resolves.toBe(true);
    const staleToken = await page.inputValue('input[name="csrfToken"]');
    const stale = await postFromPage(page, '/ui/login/passkeys/options', { csrfToken: staleToken, userID: USER.id, name: 'Late' });
    expect(stale).toEqual({ type: 'basic', status: 403, body: JSON.stringify({ error: 'sign in again' }) });
    await context.close();
  }, 90000);
});
