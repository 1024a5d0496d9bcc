/**
 * The login UI's pages for people (docs/login-ui.md) in a real headless Chromium: the application
 * named above every step (English and German), the favicon, "Forgot your password?" the whole way
 * through a real SMTP server (old sessions and refresh tokens ended), the logout confirmation's
 * Cancel and the page for a browser with no session, and a reload after a refused post.
 * openid-client is the relying party. Screenshots for the docs go to docs/screenshots/ when
 * GATEHOUSE_SCREENSHOTS=1.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { requestResetLink } from '../../src/domain/credentials/password-reset.ts';
import { Mailbox, mailsTo, nthMailTo, partOf } from '../mail/mailbox.ts';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';

const ROSA = { id: '200000000000000031', userName: 'rosa', password: 'Old-Horse-1', email: 'rosa@acme.test' };

describeWithChromium('the login UI for people, in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  const mailbox = new Mailbox();

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>back at the application</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));

    const document = fixture().document as { orgs: Array<{ users: unknown[]; projects: Array<{ apps: Array<Record<string, unknown>> }> }> };
    const org = document.orgs[0]!;
    org.users.push({ ...ROSA, emailVerified: true, givenName: 'Rosa', familyName: 'Roth' });
    for (const app of org.projects[0]!.apps) {
      if (app['clientId'] === 'shop-web') {
        app['redirectUris'] = [`${rpBase}/callback`];
        app['postLogoutRedirectUris'] = [`${rpBase}/bye`];
      }
    }
    await mailbox.start(0);
    server = await startTestServer(document, { GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_SMTP_FROM: 'noreply@acme.test' });
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await mailbox.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  function relyingParty(): Promise<client.Configuration> {
    return client.discovery(new URL(server.url), 'shop-web', undefined, client.ClientSecretBasic(SECRETS.web), { execute: [client.allowInsecureRequests] });
  }

  async function freshPage(locale = 'en-US'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 480, height: 760 } });
    return { context, page: await context.newPage() };
  }

  function authorizeUrl(config: client.Configuration, extra: Record<string, string> = {}): string {
    return client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid offline_access', state: 'st', ...extra }).href;
  }

  async function typeName(page: Page, loginName: string): Promise<void> {
    await page.waitForSelector('input[name="loginName"]');
    await page.fill('input[name="loginName"]', loginName);
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('input[name="password"]');
  }

  async function typePassword(page: Page, password: string): Promise<void> {
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"].primary');
  }

  it('names the application above every step, in English and German, and has a favicon', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    await page.goto(authorizeUrl(config));
    await page.waitForSelector('input[name="loginName"]');
    expect(await page.textContent('.application')).toBe('Sign in to web');
    const icon = await page.getAttribute('link[rel="icon"]', 'href');
    expect(icon).toMatch(/^\/ui\/login\/assets\/favicon\.svg\?v=[0-9a-f]{12}$/);
    const served = await page.request.get(`${server.url}${icon}`);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/svg+xml');
    expect(served.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
    await typeName(page, 'rosa');
    expect(await page.textContent('.application')).toBe('Sign in to web');
    await context.close();

    const german = await freshPage('de-DE');
    await german.page.goto(authorizeUrl(config));
    await german.page.waitForSelector('input[name="loginName"]');
    expect(await german.page.getAttribute('html', 'lang')).toBe('de');
    expect(await german.page.textContent('.application')).toBe('Anmelden bei web');
    await german.context.close();

    // a page no application asked for keeps the neutral heading
    const neutral = await freshPage();
    await neutral.page.goto(`${server.url}/ui/login/logged-out`);
    expect(await neutral.page.locator('.application').count()).toBe(0);
    expect(await neutral.page.textContent('.brand')).toBe('Gatehouse');
    await neutral.context.close();
  }, 60000);

  it('a reload after a refused post keeps the sign-in', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    await page.goto(authorizeUrl(config));
    await typeName(page, 'rosa');
    await typePassword(page, 'Wrong-Horse-0');
    await page.waitForSelector('[role="alert"] p');
    expect(page.url()).toMatch(/\/ui\/login\/password\?authRequestID=\d+$/);
    // a reload sends the form again (the browser asks first), to the same request: still its step
    const url = page.url();
    await page.reload();
    expect(page.url()).toBe(url);
    expect(await page.textContent('h1')).toBe('Enter your password');
    await page.goto(page.url()); // opened again (Enter in the address bar, a bookmark): the step, not an error
    expect(await page.textContent('h1')).toBe('Enter your password');
    expect(await page.locator('[role="alert"] p').count()).toBe(0);
    await typePassword(page, ROSA.password);
    await page.waitForURL(`${rpBase}/callback**`);
    await context.close();
  }, 60000);

  it('"Forgot your password?": the mail, the link, a new password; old sessions and refresh tokens end', async () => {
    const config = await relyingParty();
    // an earlier sign-in, in another browser, with a refresh token
    const earlier = await freshPage();
    await earlier.page.goto(authorizeUrl(config));
    await typeName(earlier.page, 'rosa');
    await typePassword(earlier.page, ROSA.password);
    await earlier.page.waitForURL(`${rpBase}/callback**`);
    const old = await client.authorizationCodeGrant(config, new URL(earlier.page.url()), { expectedState: 'st' });
    expect(old.refresh_token).toEqual(expect.any(String));

    const { context, page } = await freshPage();
    await page.goto(authorizeUrl(config, { state: 'reset' }));
    await typeName(page, 'rosa');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    expect(await page.textContent('h1')).toBe('Reset your password');
    expect(await page.textContent('.application')).toBe('Sign in to web');
    await screenshot(page, 'password-reset.png');
    const before = mailbox.messages.length;
    await page.getByRole('button', { name: 'Send the link' }).click();
    expect(await page.textContent('h1')).toBe('Check your email');
    await page.reload(); // the answer stands at an address of its own: nothing is posted again
    expect(await page.textContent('h1')).toBe('Check your email');

    const mail = await nthMailTo(mailbox, ROSA.email, 1);
    expect(mailbox.messages.length).toBe(before + 1);
    const text = partOf(mail.raw, 'text/plain') ?? '';
    expect(text).toContain('Hello Rosa');
    const link = /^http\S+\/ui\/login\/set-password\?\S+$/m.exec(text)?.[0];
    expect(link).toBeDefined();

    await page.goto(link!);
    expect(await page.textContent('h1')).toBe('Set a new password');
    expect(await page.locator('ul.policy li').allTextContents()).toEqual(['at least 8 characters', 'an uppercase letter', 'a lowercase letter', 'a digit', 'a symbol, for example ! ? # -']);
    await screenshot(page, 'set-password.png');
    // the confirmation differs
    await page.fill('input[name="password"]', 'New-Horse-2');
    await page.fill('input[name="passwordConfirmation"]', 'New-Horse-3');
    await page.click('button[type="submit"].primary');
    expect(await page.textContent('#f-passwordConfirmation-error')).toBe('The passwords do not match.');
    // the policy is not met
    await page.fill('input[name="password"]', 'newhorse');
    await page.fill('input[name="passwordConfirmation"]', 'newhorse');
    await page.click('button[type="submit"].primary');
    expect(await page.textContent('#f-password-error')).toContain('It still needs: an uppercase letter; a digit; a symbol');
    await page.fill('input[name="password"]', 'New-Horse-2');
    await page.fill('input[name="passwordConfirmation"]', 'New-Horse-2');
    await page.click('button[type="submit"].primary');

    // back to the sign-in it started in, with a notice
    await page.waitForURL(/\/ui\/login\/password\?authRequestID=\d+&notice=password-changed$/);
    expect((await page.textContent('[role="status"]'))?.trim()).toBe('Your password has been changed. Sign in with your new password.');
    await screenshot(page, 'password-changed.png');

    // docs/security.md 10.25: the earlier sign-in's refresh token and session are over
    await expect(client.refreshTokenGrant(config, old.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await earlier.page.goto(authorizeUrl(config, { prompt: 'none', state: 'none' }));
    await earlier.page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(earlier.page.url()).searchParams.get('error')).toBe('login_required');
    await earlier.context.close();

    // the old password no longer works, the new one does
    await typePassword(page, ROSA.password);
    await page.waitForSelector('[role="alert"] p');
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe('The login name or password is incorrect.');
    await typePassword(page, 'New-Horse-2');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: 'reset' });
    expect(tokens.claims()!.sub).toBe(ROSA.id);

    // the link is used up: a clear page
    await page.goto(link!);
    await page.fill('input[name="password"]', 'Third-Horse-3');
    await page.fill('input[name="passwordConfirmation"]', 'Third-Horse-3');
    await page.click('button[type="submit"].primary');
    expect((await page.textContent('[role="alert"]'))?.trim()).toContain('This link is not valid');
    await context.close();
  }, 90000);

  it('an unknown user gets the same pages, and no mail goes out', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    await page.goto(authorizeUrl(config));
    await typeName(page, 'nobody-at-all');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    expect(await page.textContent('h1')).toBe('Reset your password');
    const before = mailbox.messages.length;
    await page.getByRole('button', { name: 'Send the link' }).click();
    expect(await page.textContent('h1')).toBe('Check your email');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the worker would have sent it by now
    expect(mailbox.messages.length).toBe(before);
    await context.close();
  }, 60000);

  it('a forged or an expired link gets a clear page, in the browser\'s language', async () => {
    const { context, page } = await freshPage('de-DE');
    const gh = server.running.gh;
    const linkContext = { instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, linkKey: gh.masterKey.derive('password reset link') };
    const before = mailsTo(mailbox.messages, ROSA.email).length;
    // a code issued two hours ago has expired
    expect(await requestResetLink(gh.db, linkContext, ROSA.id, undefined, new Date(Date.now() - 2 * 3600_000))).toEqual({ kind: 'mailed' });
    const text = partOf((await nthMailTo(mailbox, ROSA.email, before + 1)).raw, 'text/plain') ?? '';
    const link = /^http\S+\/ui\/login\/set-password\?\S+$/m.exec(text)![0];
    const submitNew = async (url: string) => {
      await page.goto(url);
      await page.fill('input[name="password"]', 'Fourth-Horse-4');
      await page.fill('input[name="passwordConfirmation"]', 'Fourth-Horse-4');
      await page.click('button[type="submit"].primary');
      return (await page.textContent('[role="alert"]'))?.trim();
    };
    expect(await submitNew(link)).toBe('Dieser Link ist abgelaufen. Fordern Sie bei der Anmeldung mit „Passwort vergessen?“ einen neuen Link an.');
    const forged = new URL(link);
    forged.searchParams.set('codeID', 'x'.repeat(22));
    expect(await submitNew(forged.href)).toContain('Dieser Link ist nicht gültig');
    await context.close();
  }, 60000);

  it('the logout confirmation offers Cancel; a browser with no session is told it is signed out', async () => {
    const config = await relyingParty();
    const { context, page } = await freshPage();
    await page.goto(authorizeUrl(config));
    await typeName(page, 'rosa');
    await typePassword(page, 'New-Horse-2');
    await page.waitForURL(`${rpBase}/callback**`);

    const endSession = (extra: Record<string, string>) => {
      const url = new URL(`${server.url}/oidc/v1/end_session`);
      for (const [name, value] of Object.entries(extra)) url.searchParams.set(name, value);
      return url.href;
    };
    // with a registered post_logout_redirect_uri: Cancel goes back there, signed in still
    await page.goto(endSession({ client_id: 'shop-web', post_logout_redirect_uri: `${rpBase}/bye`, state: 'x1' }));
    expect(await page.textContent('h1')).toBe('Sign out?');
    await screenshot(page, 'logout.png');
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL(`${rpBase}/bye?state=x1`);
    // without one: Cancel leads to a page that says nothing changed
    await page.goto(endSession({}));
    await page.getByRole('link', { name: 'Cancel' }).click();
    expect(await page.textContent('h1')).toBe('You are still signed in');
    await page.goto(authorizeUrl(config, { prompt: 'none', state: 'still' }));
    await page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));

    // sign out for real, then the same request again: no session, nothing to confirm
    await page.goto(endSession({ client_id: 'shop-web', post_logout_redirect_uri: `${rpBase}/bye`, state: 'x2' }));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${rpBase}/bye?state=x2`);
    await page.goto(endSession({ client_id: 'shop-web', post_logout_redirect_uri: `${rpBase}/bye`, state: 'x3', ui_locales: 'de' }));
    expect(await page.textContent('h1')).toBe('Sie sind abgemeldet');
    expect(await page.locator('form').count()).toBe(0);
    await page.getByRole('link', { name: 'Weiter zur Anwendung' }).click();
    await page.waitForURL(`${rpBase}/bye?state=x3`);
    await context.close();
  }, 60000);
});
