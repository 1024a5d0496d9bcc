/**
 * Session fixation in a real browser (docs/security.md 10.7): Debian's headless Chromium,
 * driven by playwright-core, holds a browser cookie an attacker planted; openid-client is the
 * relying party. The server ignores values it did not issue and gives the browser a fresh value at
 * every sign-in, so the planter's copy carries nothing.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext } from 'playwright-core';
import { randomToken } from '../../src/domain/kernel/ids.ts';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';


describeWithChromium('the browser cookie in a real browser (docs/security.md 10.7)', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let config: client.Configuration;

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));
    const document = fixture().document as { orgs: Array<{ projects: Array<{ apps: Array<Record<string, unknown>> }> }> };
    for (const app of document.orgs[0]!.projects[0]!.apps) if (app['clientId'] === 'shop-web') app['redirectUris'] = [`${rpBase}/callback`];
    server = await startTestServer(document);
    config = await client.discovery(new URL(server.url), 'shop-web', undefined, client.ClientSecretBasic(SECRETS.web), { execute: [client.allowInsecureRequests] });
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  function authorizeUrl(extra: Record<string, string> = {}): { href: string; state: string } {
    const state = client.randomState();
    return { href: client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state, ...extra }).href, state };
  }

  async function browserCookie(context: BrowserContext): Promise<string | undefined> {
    return (await context.cookies(server.url)).find((c) => c.name === 'gh_browser')?.value;
  }

  /** What prompt=none answers in this context: the callback's parameters. */
  async function silently(context: BrowserContext): Promise<URLSearchParams> {
    const page = await context.newPage();
    await page.goto(authorizeUrl({ prompt: 'none' }).href);
    await page.waitForURL(`${rpBase}/callback**`);
    const answer = new URL(page.url()).searchParams;
    await page.close();
    return answer;
  }

  // docs/security.md 10.7: sign-in replaces the cookie; a planted issued value carries nothing afterwards
  it('a cookie the attacker planted, even one the server issued, carries nothing of the victim’s sign-in', async () => {
    const attacker = await browser.newContext();
    const attackerPage = await attacker.newPage();
    await attackerPage.goto(authorizeUrl().href);
    await attackerPage.waitForSelector('input[name="loginName"]');
    const planted = await browserCookie(attacker);
    expect(planted).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);

    const victim = await browser.newContext();
    await victim.addCookies([{ name: 'gh_browser', value: planted!, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
    const page = await victim.newPage();
    const { href, state } = authorizeUrl();
    await page.goto(href);
    await page.fill('input[name="loginName"]', 'alice@acme.test');
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('input[name="password"]');
    expect(await browserCookie(victim)).toBe(planted); // nothing changes before the sign-in completes
    await page.fill('input[name="password"]', 'Correct-Horse-9');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state });
    expect(tokens.claims()!.sub).toBe(IDS.alice);

    const renewed = await browserCookie(victim);
    expect(renewed).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    expect(renewed).not.toBe(planted);
    expect((await silently(attacker)).get('error')).toBe('login_required');
    expect((await silently(victim)).get('code')).toEqual(expect.any(String));
    await attacker.close();
    await victim.close();
  }, 60000);

  // docs/security.md 10.7: a value the server never issued is ignored and replaced at once
  it('replaces a cookie value the server never issued on the first visit', async () => {
    const planted = randomToken(32);
    const victim = await browser.newContext();
    await victim.addCookies([{ name: 'gh_browser', value: planted, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
    const page = await victim.newPage();
    await page.goto(authorizeUrl().href);
    await page.waitForSelector('input[name="loginName"]');
    const issued = await browserCookie(victim);
    expect(issued).not.toBe(planted);
    expect(issued).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    await victim.close();
  }, 60000);
});
