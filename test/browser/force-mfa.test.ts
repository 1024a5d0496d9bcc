/**
 * A login policy that forces a second factor (docs/login-ui.md#setting-up-a-second-factor), end to
 * end: a headless Chromium (with a virtual authenticator where a passkey is set up) signs in through
 * the login UI, openid-client is the relying party, and the organization's policy is set through the
 * management API over REST by its ORG_OWNER. The server's external URL is on localhost, the only
 * http origin browsers allow WebAuthn on. Screenshots of the setup page go to docs/screenshots/
 * when GATEHOUSE_SCREENSHOTS=1.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { codeFor, wrongCode } from '../support/totp.ts';
import { pageWithAuthenticator } from '../support/virtual-authenticator.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'mfa-shop', secret: 'mfa-shop-secret' };
const USERS = {
  /** Sets up an authenticator app on the way in. */
  appUser: '291000000000000001',
  /** Sets up a passkey on the way in. */
  keyUser: '291000000000000002',
  /** Has an authenticator app already. */
  keeper: '291000000000000003',
  /** Leaves the setup page. */
  quitter: '291000000000000004',
  /** Signed in with a password before the policy forced a second factor. */
  early: '291000000000000005',
  /** German pages. */
  deutsch: '291000000000000006',
} as const;

describeWithChromium('a login policy that forces a second factor', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let origin: string;
  let orgAdmin: string;
  const callbacks: string[] = [];

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((req, res) => {
      callbacks.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>');
    });
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));
    const port = await freePort();
    origin = `http://localhost:${port}`;
    const human = (id: string, userName: string) => ({ id, userName, password: PASSWORD, email: `${userName}@managed.test`, emailVerified: true, givenName: userName });
    const document = managementDocument({
      users: Object.entries(USERS).map(([name, id]) => human(id, name.toLowerCase())),
      projects: [
        {
          name: 'shop',
          apps: [
            {
              name: 'MFA Shop',
              clientId: APP.clientId,
              clientSecret: APP.secret,
              authMethod: 'client_secret_basic',
              redirectUris: [`${rpBase}/callback`],
              responseTypes: ['code'],
              grantTypes: ['authorization_code'],
            },
          ],
        },
      ],
    });
    server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin });
    orgAdmin = await apiToken(server, 'orgAdmin');
    await forceMfa(true);
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  /** The organization's own login policy, through the management API (AddCustomLoginPolicy, UpdateCustomLoginPolicy). */
  async function forceMfa(on: boolean): Promise<void> {
    const policy = { allowUsernamePassword: true, allowRegister: true, passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED', forceMfa: on };
    const current = await rest(server, 'GET', '/management/v1/policies/login', orgAdmin);
    const { isDefault, policy: now } = current.json as { isDefault?: boolean; policy?: { forceMfa?: boolean } };
    if (isDefault !== true && (now?.forceMfa ?? false) === on) return; // an update that changes nothing is refused
    const changed = await rest(server, isDefault === true ? 'POST' : 'PUT', '/management/v1/policies/login', orgAdmin, policy);
    expect({ status: changed.status, json: changed.json }).toMatchObject({ status: 200 });
  }

  async function relyingParty(): Promise<client.Configuration> {
    return client.discovery(new URL(origin), APP.clientId, undefined, client.ClientSecretBasic(APP.secret), { execute: [client.allowInsecureRequests] });
  }

  async function freshPage(locale = 'en-US'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 480, height: 900 } });
    return { context, page: await context.newPage() };
  }

  async function authorize(config: client.Configuration, page: Page, extra: Record<string, string> = {}): Promise<{ state: string; nonce: string }> {
    const state = client.randomState();
    const nonce = client.randomNonce();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state, nonce, ...extra }).href);
    return { state, nonce };
  }

  async function password(page: Page, loginName: string): Promise<void> {
    await page.waitForSelector('input[name="loginName"]');
    await page.fill('input[name="loginName"]', loginName);
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
  }

  /** The key the setup page shows as text, without the spaces that group it. */
  async function shownSecret(page: Page): Promise<string> {
    return ((await page.textContent('code.otp-secret')) ?? '').replace(/\s+/g, '');
  }

  async function sessionsOf(userId: string): Promise<number> {
    const rows = await server.running.gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', userId).execute();
    return rows.length;
  }

  it('a user without a second factor sets up an authenticator app after the password: QR code, key as text, a code; amr pwd, otp, mfa', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    const { state, nonce } = await authorize(config, page);
    await password(page, 'appuser@managed.test');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    expect(await page.textContent('h1')).toBe('Set up a second factor');
    // the QR code is an image drawn by the server; the key is there as text too
    expect(await page.getAttribute('img.qr', 'src')).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await page.getAttribute('img.qr', 'alt')).toBe('QR code for your authenticator app');
    const secret = await shownSecret(page);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // the passkey is offered as well (the relying party is enabled, the policy allows passkeys)
    await page.locator('form.passkey-add button').waitFor();
    await screenshot(page, 'mfa-setup.png');
    expect(await sessionsOf(USERS.appUser)).toBe(0);

    // a reload keeps the key already scanned; a wrong code is refused with the page again
    await page.reload();
    expect(await shownSecret(page)).toBe(secret);
    await page.fill('input[name="code"]', wrongCode(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('[role="alert"]');
    expect(await page.textContent('[role="alert"]')).toContain('incorrect');
    expect(await shownSecret(page)).toBe(secret);
    expect(callbacks.some((url) => url.includes(state))).toBe(false);

    await page.fill('input[name="code"]', codeFor(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.appUser, amr: ['pwd', 'otp', 'mfa'] });
    // the factor is the user's now, ready
    const factor = await server.running.gh.db.selectFrom('otp_factors').select('state').where('user_id', '=', USERS.appUser).executeTakeFirst();
    expect(factor?.state).toBe('ready');
    await context.close();
  }, 90000);

  it('a user without a second factor sets up a passkey after the password (virtual authenticator); the next sign-in offers it', async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator(browser);
    const { state, nonce } = await authorize(config, page);
    await password(page, 'keyuser@managed.test');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    await page.fill('input[name="name"]', 'Laptop');
    await page.locator('form.passkey-add button').click();
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.keyUser, amr: ['pwd', 'user', 'mfa'] });

    // a fresh sign-in: the passkey-first step, and the passkey alone is two factors
    const again = await authorize(config, page, { prompt: 'login' });
    await page.waitForSelector('input[name="loginName"]');
    await page.fill('input[name="loginName"]', 'keyuser@managed.test');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(new RegExp('/ui/login/passkey\\?authRequestID=\\d+$'));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const second = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: again.state, expectedNonce: again.nonce });
    expect(second.claims()).toMatchObject({ sub: USERS.keyUser, amr: ['user', 'mfa'] });

    // "Use password instead": after the password, the passkey it has is asked for, not a new factor
    await authorize(config, page, { prompt: 'login' });
    await page.waitForSelector('input[name="loginName"]');
    await page.fill('input[name="loginName"]', 'keyuser@managed.test');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(new RegExp('/ui/login/passkey\\?authRequestID=\\d+$'));
    await page.getByRole('link', { name: 'Use password instead' }).click();
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(new RegExp('/ui/login/passkey\\?authRequestID=\\d+$'));
    await context.close();
  }, 90000);

  it('a user with an authenticator app is asked for its code, as without the policy', async () => {
    const gh = server.running.gh;
    const keeper = { id: USERS.keeper, orgId: MGMT.org, loginName: 'keeper@managed.test' };
    const added = await addOtpFactor(gh, keeper);
    if (added.kind !== 'added') throw new Error('keeper already has a factor');
    const secret = added.otp.secret;
    // verified with the previous step's code, so that the current step is still unused for the sign-in
    expect((await verifyOtpFactor(gh, keeper, codeFor(secret, Date.now() - 30_000), new Date(), async () => undefined)).kind).toBe('verified');

    const config = await relyingParty();
    const { context, page } = await freshPage();
    const { state, nonce } = await authorize(config, page);
    await password(page, 'keeper@managed.test');
    await page.waitForURL(new RegExp('/ui/login/otp\\?authRequestID=\\d+$'));
    await page.fill('input[name="code"]', codeFor(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.keeper, amr: ['pwd', 'otp', 'mfa'] });
    await context.close();
  }, 90000);

  it('a user who leaves the setup page has no session, and the request gives no code', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    const { state } = await authorize(config, page);
    await password(page, 'quitter@managed.test');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    const requestId = new URL(page.url()).searchParams.get('authRequestID')!;
    await page.getByRole('link', { name: 'Use another account' }).click();
    await page.waitForSelector('input[name="loginName"]');
    expect(await sessionsOf(USERS.quitter)).toBe(0);
    // the callback has no session to answer with
    const reply = await page.goto(`${origin}/oauth/v2/authorize/callback?authRequestID=${requestId}`);
    expect(reply?.status()).toBe(400);
    // and a new authorization in this browser starts at the login name again
    await authorize(config, page);
    await page.waitForSelector('input[name="loginName"]');
    expect(callbacks.some((url) => url.includes(state))).toBe(false);
    await context.close();
  }, 90000);

  it("a browser's session from a password alone answers no request of the organization: sign in again, then set up a factor", async () => {
    await forceMfa(false);
    try {
      const config = await relyingParty();
      const { context, page } = await freshPage();
      const first = await authorize(config, page);
      await password(page, 'early@managed.test');
      await page.waitForURL(`${rpBase}/callback**`);
      const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: first.state, expectedNonce: first.nonce });
      expect(tokens.claims()).toMatchObject({ sub: USERS.early, amr: ['pwd'] });

      await forceMfa(true);
      // single sign-on: the password-only session does not answer; the password is asked again
      const sso = await authorize(config, page);
      await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
      // nor from the accounts step
      await authorize(config, page, { prompt: 'select_account' });
      await page.waitForSelector('button.account');
      await page.click('button.account');
      await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
      // prompt=none: the client hears that the user is needed
      const none = await authorize(config, page, { prompt: 'none' });
      await page.waitForURL(`${rpBase}/callback**`);
      const answer = new URL(page.url()).searchParams;
      expect(answer.get('error')).toBe('interaction_required');
      expect(answer.get('state')).toBe(none.state);
      expect(answer.get('code')).toBeNull();
      expect(callbacks.filter((url) => url.includes(sso.state))).toEqual([]);

      // signing in again leads to the setup of a second factor
      await authorize(config, page);
      await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
      await page.fill('input[name="password"]', PASSWORD);
      await page.click('button[type="submit"].primary');
      await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
      await context.close();
    } finally {
      await forceMfa(true);
    }
  }, 90000);

  it('a new account made with prompt=create sets up its second factor before the application hears of it', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    const { state, nonce } = await authorize(config, page, { prompt: 'create' });
    await page.waitForSelector('input[name="userName"]');
    await page.fill('input[name="userName"]', 'newcomer');
    await page.fill('input[name="email"]', 'newcomer@example.test');
    await page.fill('input[name="givenName"]', 'New');
    await page.fill('input[name="familyName"]', 'Comer');
    await page.fill('input[name="password"]', 'Brand-New-Pass-1');
    await page.fill('input[name="passwordConfirmation"]', 'Brand-New-Pass-1');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    expect(await page.textContent('.identity strong')).toBe('newcomer@managed.test');
    await page.fill('input[name="code"]', codeFor(await shownSecret(page)));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()!.amr).toEqual(['pwd', 'otp', 'mfa']);
    await context.close();
  }, 90000);

  it('refuses a forged post, an unknown form and a passkey nobody set up with a 4xx page; another browser cannot ask for options', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    await authorize(config, page);
    await password(page, 'quitter@managed.test');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    const address = page.url();
    const requestId = new URL(address).searchParams.get('authRequestID')!;
    const csrf = (await page.getAttribute('input[name="csrfToken"]', 'value')) ?? '';
    expect(csrf).not.toBe('');
    const post = (form: Record<string, string>, path = address) => page.request.post(path, { form, maxRedirects: 0 });

    const forged = await post({ authRequestID: requestId, action: 'otp', code: '123456' });
    expect(forged.status()).toBe(403);
    const unknown = await post({ authRequestID: requestId, csrfToken: csrf, action: 'teleport' });
    expect(unknown.status()).toBe(400);
    expect(await unknown.text()).toContain('Please correct the marked fields.');
    const empty = await post({ authRequestID: requestId, csrfToken: csrf, action: 'otp', code: '' });
    expect(empty.status()).toBe(400);
    const made = await post({ authRequestID: requestId, csrfToken: csrf, action: 'passkey', passkeyId: '1', credential: '{}', name: 'Laptop' });
    expect(made.status()).toBe(400);
    expect(await made.text()).toContain('The passkey could not be added');
    // the options of another browser's request: the request is unknown to it
    const elsewhere = await browser.newContext();
    const stranger = await elsewhere.request.post(`${origin}/ui/login/mfa-setup/options?authRequestID=${requestId}`, { form: { authRequestID: requestId, csrfToken: csrf, name: 'Laptop' } });
    expect(stranger.status()).toBe(400);
    await elsewhere.close();
    expect(await sessionsOf(USERS.quitter)).toBe(0);
    await context.close();
  }, 90000);

  it('a policy switched off during the setup: a reload goes back to the password, a posted form finishes with it', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    const toSetup = async () => {
      const started = await authorize(config, page, { prompt: 'login' });
      await password(page, 'quitter@managed.test');
      await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
      return started;
    };
    try {
      // a reload (GET) changes nothing: the password step, whose password then completes the sign-in
      const first = await toSetup();
      await forceMfa(false);
      await page.reload();
      await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
      await page.fill('input[name="password"]', PASSWORD);
      await page.click('button[type="submit"].primary');
      await page.waitForURL(`${rpBase}/callback**`);
      const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: first.state, expectedNonce: first.nonce });
      expect(tokens.claims()).toMatchObject({ sub: USERS.quitter, amr: ['pwd'] });

      // the page's form, posted after the change: the checked password completes it
      await forceMfa(true);
      const second = await toSetup();
      await forceMfa(false);
      await page.fill('input[name="code"]', '000000');
      await page.click('button[type="submit"].primary');
      await page.waitForURL(`${rpBase}/callback**`);
      const again = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: second.state, expectedNonce: second.nonce });
      expect(again.claims()).toMatchObject({ sub: USERS.quitter, amr: ['pwd'] });
    } finally {
      await forceMfa(true);
    }
    await context.close();
  }, 90000);

  it('speaks German', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage('de-DE');
    const { state, nonce } = await authorize(config, page, { ui_locales: 'de' });
    await password(page, 'deutsch@managed.test');
    await page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.textContent('h1')).toBe('Zweiten Faktor einrichten');
    expect(await page.getAttribute('img.qr', 'alt')).toBe('QR-Code für Ihre Authenticator-App');
    await page.locator('form.passkey-add button').waitFor();
    expect(await page.textContent('form.passkey-add button')).toBe('Passkey einrichten');
    await screenshot(page, 'mfa-setup-de.png');
    const secret = await shownSecret(page);
    await page.fill('input[name="code"]', codeFor(secret));
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.deutsch, amr: ['pwd', 'otp', 'mfa'] });
    await context.close();
  }, 90000);
});
