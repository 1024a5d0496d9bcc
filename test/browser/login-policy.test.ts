/**
 * The login UI follows the login policy of the application's organization
 * (docs/branding-and-login-policy.md#what-the-login-pages-honour): each switch on and off, in a
 * headless Chromium (with a virtual authenticator for passkeys), openid-client as the relying party,
 * the policy set through the management API over REST by the organization's owner. The server's
 * external URL is on localhost, the only http origin browsers allow WebAuthn on.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { pageWithAuthenticator } from '../support/virtual-authenticator.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'policy-shop', secret: 'policy-shop-secret' };
const USERS = {
  /** A password, no passkey. */
  plain: '292000000000000001',
  /** A password and a passkey. */
  keyed: '292000000000000002',
} as const;
const WELCOME = 'https://welcome.example/start';

/** What a policy request leaves out is false or empty (UpdateCustomLoginPolicy replaces the policy). */
interface Policy {
  allowUsernamePassword?: boolean;
  allowRegister?: boolean;
  passwordlessType?: 'PASSWORDLESS_TYPE_ALLOWED' | 'PASSWORDLESS_TYPE_NOT_ALLOWED';
  hidePasswordReset?: boolean;
  ignoreUnknownUsernames?: boolean;
  defaultRedirectUri?: string;
}

const OPEN: Required<Policy> = {
  allowUsernamePassword: true,
  allowRegister: true,
  passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED',
  hidePasswordReset: false,
  ignoreUnknownUsernames: false,
  defaultRedirectUri: '',
};

describeWithChromium('the login UI follows the login policy', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let origin: string;
  let orgAdmin: string;
  let iamAdmin: string;

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));
    const port = await freePort();
    origin = `http://localhost:${port}`;
    const human = (id: string, userName: string) => ({ id, userName, password: PASSWORD, email: `${userName}@managed.test`, emailVerified: true, givenName: userName });
    const document = managementDocument({
      users: [human(USERS.plain, 'plain'), human(USERS.keyed, 'keyed')],
      projects: [
        {
          name: 'shop',
          apps: [
            {
              name: 'Policy Shop',
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
    iamAdmin = await apiToken(server, 'iamAdmin');
    browser = await launchChromium();
    // the passkey of `keyed`: RegisterPasskey over REST, the ceremony on a page of Gatehouse's origin, VerifyPasskeyRegistration
    const { context, page } = await pageWithAuthenticator(browser);
    await page.goto(`${origin}/ui/login/logged-out`);
    const registered = await rest(server, 'POST', `/v2/users/${USERS.keyed}/passkeys`, iamAdmin, {});
    expect(registered.status).toBe(200);
    const options = (registered.json['publicKeyCredentialCreationOptions'] as { publicKey: unknown }).publicKey;
    const credential: unknown = await page.evaluate(
      `(async (json) => (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json) })).toJSON())(${JSON.stringify(options)})`,
    );
    const verified = await rest(server, 'POST', `/v2/users/${USERS.keyed}/passkeys/${String(registered.json['passkeyId'])}`, iamAdmin, { publicKeyCredential: credential, passkeyName: 'Laptop' });
    expect(verified.status).toBe(200);
    keyedAuthenticator = { context, page };
  }, 60000);

  /** The browser whose virtual authenticator holds the passkey of `keyed`. */
  let keyedAuthenticator: { context: BrowserContext; page: Page };

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  /** The organization's own login policy: removed (ResetLoginPolicyToDefault) and added anew with `changes`. */
  async function policy(changes: Policy): Promise<void> {
    await rest(server, 'DELETE', '/management/v1/policies/login', orgAdmin);
    const added = await rest(server, 'POST', '/management/v1/policies/login', orgAdmin, { ...OPEN, ...changes });
    expect({ status: added.status, json: added.json }).toMatchObject({ status: 200 });
  }

  async function relyingParty(): Promise<client.Configuration> {
    return client.discovery(new URL(origin), APP.clientId, undefined, client.ClientSecretBasic(APP.secret), { execute: [client.allowInsecureRequests] });
  }

  async function freshPage(locale = 'en-US'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 480, height: 760 } });
    return { context, page: await context.newPage() };
  }

  async function authorize(page: Page, extra: Record<string, string> = {}): Promise<{ state: string; nonce: string }> {
    const config = await relyingParty();
    const state = client.randomState();
    const nonce = client.randomNonce();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state, nonce, ...extra }).href);
    await page.waitForSelector('input[name="loginName"]');
    return { state, nonce };
  }

  async function loginName(page: Page, name: string): Promise<void> {
    await page.fill('input[name="loginName"]', name);
    await page.click('button[type="submit"].primary');
  }

  const requestIdOf = (page: Page) => new URL(page.url()).searchParams.get('authRequestID')!;
  const links = async (page: Page) => page.locator('nav.links a').allTextContents();

  it('allowRegister: "Create an account" and the register page follow it, as GetLoginSettings says', async () => {
    const { context, page } = await freshPage();
    for (const allowRegister of [true, false]) {
      await policy({ allowRegister });
      const settings = await rest(server, 'GET', `/v2/settings/login?ctx.orgId=${MGMT.org}`, orgAdmin);
      // proto3 JSON leaves a false switch out
      expect((settings.json['settings'] as { allowRegister?: boolean }).allowRegister ?? false).toBe(allowRegister);
      await authorize(page);
      expect((await links(page)).includes('Create an account')).toBe(allowRegister);
      const register = await page.goto(`${origin}/ui/login/register?authRequestID=${requestIdOf(page)}`);
      expect(register?.status()).toBe(allowRegister ? 200 : 403);
      if (!allowRegister) expect(await page.textContent('[role="alert"]')).toContain('Creating an account is not available here.');
    }
    // A registration sets a password: without passwords, no registration either.
    await policy({ allowRegister: true, allowUsernamePassword: false });
    await authorize(page);
    expect(await links(page)).not.toContain('Create an account');
    expect((await page.goto(`${origin}/ui/login/register?authRequestID=${requestIdOf(page)}`))?.status()).toBe(403);
    await context.close();
  }, 60000);

  it('allowUsernamePassword false: no password field, the same page for every name without a passkey, a posted password refused; a passkey signs in', async () => {
    await policy({ allowUsernamePassword: false });
    const { context, page } = await freshPage();
    const pages: string[] = [];
    for (const name of ['plain@managed.test', 'nobody@managed.test']) {
      await authorize(page);
      await loginName(page, name);
      await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
      expect(await page.textContent('h1')).toBe('Sign in with a passkey');
      expect(await page.locator('input[name="password"]').count()).toBe(0);
      expect(await links(page)).not.toContain('Forgot your password?');
      await page.locator('form.passkey button').waitFor();
      pages.push(((await page.textContent('main')) ?? '').replace(name, 'NAME'));
    }
    expect(pages[1]).toBe(pages[0]);
    expect(pages[0]).toContain('This organization signs in with passkeys, not with passwords.');

    // a password posted anyway is not checked: 403, no session
    const csrf = (await page.getAttribute('input[name="csrfToken"]', 'value')) ?? '';
    const posted = await page.request.post(page.url(), { form: { authRequestID: requestIdOf(page), csrfToken: csrf, password: PASSWORD }, maxRedirects: 0 });
    expect(posted.status()).toBe(403);
    const sessions = await server.running.gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', USERS.plain).execute();
    expect(sessions).toEqual([]);
    // nor is a reset offered
    expect((await page.goto(`${origin}/ui/login/password-reset?authRequestID=${requestIdOf(page)}`))?.status()).toBe(403);
    await context.close();

    // a user with a passkey: the passkey step without "Use password instead", and the passkey signs in
    const { page: keyed } = keyedAuthenticator;
    const { state, nonce } = await authorize(keyed, { prompt: 'login' });
    await loginName(keyed, 'keyed@managed.test');
    await keyed.waitForURL(new RegExp('/ui/login/passkey\\?authRequestID=\\d+$'));
    expect(await links(keyed)).toEqual(['Use another account']);
    await keyed.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await keyed.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(await relyingParty(), new URL(keyed.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.keyed, amr: ['user', 'mfa'] });

    // neither passwords nor passkeys: the page says that nothing is open here, in German too
    await policy({ allowUsernamePassword: false, passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' });
    const german = await freshPage('de-DE');
    await authorize(german.page, { ui_locales: 'de' });
    await loginName(german.page, 'plain@managed.test');
    await german.page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
    expect(await german.page.textContent('h1')).toBe('Anmeldung nicht möglich');
    expect(await german.page.textContent('main')).toContain('Diese Organisation erlaubt hier weder Passwörter noch Passkeys.');
    expect(await german.page.locator('form.passkey').count()).toBe(0);
    await policy({ allowUsernamePassword: false });
    await german.page.reload();
    expect(await german.page.textContent('h1')).toBe('Mit einem Passkey anmelden');
    await german.context.close();

    // allowed again: the password field is back
    await policy({});
    const back = await freshPage();
    await authorize(back.page);
    await loginName(back.page, 'plain@managed.test');
    await back.page.waitForSelector('input[name="password"]');
    await back.context.close();
  }, 90000);

  it('passwordlessType: not allowed takes the passkey button and the passkey step away; allowed brings them back', async () => {
    const { page } = keyedAuthenticator;
    await policy({ passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' });
    await authorize(page, { prompt: 'login' });
    expect(await page.locator('form.passkey').count()).toBe(0);
    expect(await page.getAttribute('input[name="loginName"]', 'autocomplete')).toBe('username');
    await loginName(page, 'keyed@managed.test');
    await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
    await page.waitForSelector('input[name="password"]');
    // the passkey step's address leads to the password step, and its options are refused
    await page.goto(`${origin}/ui/login/passkey?authRequestID=${requestIdOf(page)}`);
    await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
    const csrf = (await page.getAttribute('input[name="csrfToken"]', 'value')) ?? '';
    const options = await page.request.post(`${origin}/ui/login/passkey/options`, { form: { authRequestID: requestIdOf(page), csrfToken: csrf, mode: 'login' } });
    expect(options.status()).toBe(404);

    await policy({ passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' });
    await authorize(page, { prompt: 'login' });
    await page.locator('form.passkey button').waitFor();
    await loginName(page, 'keyed@managed.test');
    await page.waitForURL(new RegExp('/ui/login/passkey\\?authRequestID=\\d+$'));
    expect(await links(page)).toEqual(['Use password instead', 'Use another account']);
  }, 90000);

  it('hidePasswordReset: no "Forgot your password?", and the reset page refuses; shown again when off', async () => {
    const { context, page } = await freshPage();
    await policy({ hidePasswordReset: true });
    await authorize(page);
    await loginName(page, 'plain@managed.test');
    await page.waitForSelector('input[name="password"]');
    expect(await links(page)).toEqual(['Use another account']);
    const csrf = (await page.getAttribute('input[name="csrfToken"]', 'value')) ?? '';
    const requestId = requestIdOf(page);
    const refused = await page.goto(`${origin}/ui/login/password-reset?authRequestID=${requestId}`);
    expect(refused?.status()).toBe(403);
    expect(await page.textContent('[role="alert"]')).toContain('This organization does not offer resetting a password here.');
    // the form's post (with its CSRF token) is refused as well: no mail is asked for
    const posted = await page.request.post(`${origin}/ui/login/password-reset?authRequestID=${requestId}`, { form: { authRequestID: requestId, csrfToken: csrf }, maxRedirects: 0 });
    expect(posted.status()).toBe(403);
    expect(await posted.text()).toContain('This organization does not offer resetting a password here.');
    // a mailed link of a reset started in such a sign-in sets no password either
    const link = `${origin}/ui/login/set-password?userID=${USERS.plain}&code=ABCDEF&codeID=1&authRequestID=${requestId}`;
    expect((await page.goto(link))?.status()).toBe(403);
    expect(await page.locator('input[name="password"]').count()).toBe(0);

    await policy({ hidePasswordReset: false });
    await authorize(page);
    await loginName(page, 'plain@managed.test');
    await page.waitForSelector('input[name="password"]');
    expect(await links(page)).toEqual(['Forgot your password?', 'Use another account']);
    const shown = requestIdOf(page);
    expect((await page.goto(`${origin}/ui/login/password-reset?authRequestID=${shown}`))?.status()).toBe(200);
    expect((await page.goto(`${origin}/ui/login/set-password?userID=${USERS.plain}&code=ABCDEF&codeID=1&authRequestID=${shown}`))?.status()).toBe(200);
    await context.close();
  }, 60000);

  it('ignoreUnknownUsernames: on or off, an unknown name goes on to the password step and is refused like a wrong password', async () => {
    const { context, page } = await freshPage();
    for (const ignoreUnknownUsernames of [true, false]) {
      await policy({ ignoreUnknownUsernames });
      const refusals: string[] = [];
      for (const name of ['plain@managed.test', 'nobody@managed.test']) {
        await authorize(page);
        await loginName(page, name);
        await page.waitForURL(new RegExp('/ui/login/password\\?authRequestID=\\d+$'));
        await page.fill('input[name="password"]', 'Wrong-Horse-1');
        await page.click('button[type="submit"].primary');
        await page.waitForSelector('[role="alert"]');
        refusals.push(((await page.textContent('main')) ?? '').replace(name, 'NAME'));
      }
      expect(refusals[1]).toBe(refusals[0]);
    }
    await context.close();
  }, 60000);

  it('defaultRedirectUri: where "Done" of the passkeys page and the end of a reset lead when no application started them', async () => {
    await policy({ defaultRedirectUri: WELCOME });
    const { context, page } = await freshPage();
    // the passkeys page, reached without returnTo: sign in, then "Done" leads to the policy's address
    await page.goto(`${origin}/ui/login/passkeys`);
    await loginName(page, 'plain@managed.test');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(new RegExp('/ui/login/passkeys'));
    expect(await page.getAttribute('.actions a', 'href')).toBe(WELCOME);
    // the end of a reset no sign-in started
    await page.goto(`${origin}/ui/login/password-changed?orgID=${MGMT.org}`);
    expect(await page.getAttribute('.actions a', 'href')).toBe(WELCOME);
    expect(await page.textContent('.actions a')).toBe('Continue');

    await policy({});
    await page.goto(`${origin}/ui/login/passkeys`);
    expect(await page.getAttribute('.actions a', 'href')).toBe('/ui/login/passkeys/done');
    await page.goto(`${origin}/ui/login/password-changed?orgID=${MGMT.org}`);
    expect(await page.locator('.actions a').count()).toBe(0);
    // a malformed organization id is the instance's, which has none
    await policy({ defaultRedirectUri: WELCOME });
    await page.goto(`${origin}/ui/login/password-changed?orgID=${encodeURIComponent('<x>')}`);
    expect(await page.locator('.actions a').count()).toBe(0);
    await context.close();
  }, 60000);
});
