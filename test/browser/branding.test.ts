/**
 * An organization's branding on the login pages (docs/branding-and-login-policy.md#on-the-login-pages)
 * in a real headless Chromium: branding set with ZITADEL's management client over Connect, a logo and
 * an icon uploaded as ZITADEL's console uploads them, then activated. Its pages show the logo (the dark
 * one in dark mode), its icon as the favicon and its colours in light and dark mode, as computed by the
 * browser; button labels stay readable on a light and on a dark primary colour; THEME_MODE_DARK wins
 * over a light system scheme; `hideLoginNameSuffix` shortens login names of its users. An organization
 * without branding keeps Gatehouse's own look exactly. Screenshots for the docs go to
 * docs/screenshots/ when GATEHOUSE_SCREENSHOTS=1.
 */
import http from 'node:http';
import { createClient } from '@connectrpc/connect';
import { AdminService } from '@zitadel/proto/zitadel/admin_pb.js';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { ThemeMode } from '@zitadel/proto/zitadel/policy_pb.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, managementDocument, MGMT, transports, type Caller } from '../support/management.ts';
import { freePort } from '../support/ports.ts';

// Two wordmarks, told apart by their text colour; SVG is one of the image types uploads take.
const logo = (ink: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40"><rect x="2" y="6" width="28" height="28" rx="6" fill="#0f766e"/><text x="40" y="28" font-family="sans-serif" font-size="22" font-weight="700" fill="${ink}">Managed</text></svg>`;
const LOGO = logo('#134e4a');
const LOGO_DARK = logo('#ccfbf1');
// A 1×1 transparent PNG as the icon: the favicon need not be SVG.
const ICON = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const COLOURS = {
  primaryColor: '#0f766e',
  backgroundColor: '#f0fdfa',
  fontColor: '#134e4a',
  warnColor: '#b42318',
  primaryColorDark: '#5eead4',
  backgroundColorDark: '#042f2e',
  fontColorDark: '#ccfbf1',
  warnColorDark: '#fda29b',
};

/**
 * Gatehouse's own colours (src/http/assets/gatehouse.css), as Chromium computes them in the pages'
 * 480-pixel viewport, where the body takes the card's colour.
 */
const DEFAULT_LOOK = {
  light: { bodyBackground: 'rgb(255, 255, 255)', bodyText: 'rgb(17, 24, 39)', buttonBackground: 'rgb(29, 78, 216)', buttonText: 'rgb(255, 255, 255)' },
  dark: { bodyBackground: 'rgb(17, 24, 39)', bodyText: 'rgb(249, 250, 251)', buttonBackground: 'rgb(147, 197, 253)', buttonText: 'rgb(11, 17, 32)' },
};

function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

// WCAG 2.2 relative luminance and contrast ratio, worked out here from what the browser computed.
function luminance(computed: string): number {
  const [r, g, b] = computed.match(/\d+/g)!.slice(0, 3).map((c) => {
    const v = Number(c) / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** What the functions run in the page use of the browser: the suites compile without the DOM library. */
interface Style {
  backgroundColor: string;
  color: string;
  colorScheme: string;
  getPropertyValue(name: string): string;
}
interface Img {
  currentSrc: string;
  naturalWidth: number;
}
interface Win {
  document: { body: object; documentElement: object; querySelector(selector: string): object | null };
  getComputedStyle(element: object): Style;
}

describeWithChromium('an organization\'s branding on the login pages, in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let tokens: Record<Caller, string>;
  let rp: http.Server;
  let rpBase: string;

  const as = (caller: Caller) => ({ headers: { authorization: `Bearer ${tokens[caller]}` } });
  const mgmt = () => createClient(ManagementService, transports(() => server)[2]![1]());

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>back at the application</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));

    const app = (name: string, clientId: string) => ({
      name, clientId, clientSecret: `${clientId}-secret`, authMethod: 'client_secret_basic',
      redirectUris: [`${rpBase}/callback`], responseTypes: ['code'], grantTypes: ['authorization_code'],
    });
    const document = managementDocument({ projects: [{ id: '520000000000000009', name: 'shop', apps: [app('Managed Shop', 'branded-web')] }] });
    const orgs = document['orgs'] as Array<{ projects: Array<{ apps?: unknown[] }> }>;
    orgs[1]!.projects[0]!.apps = [app('Elsewhere Shop', 'plain-web')];
    server = await startTestServer(document);
    tokens = await apiTokens(server);
    browser = await launchChromium();

    await mgmt().addCustomLabelPolicy(COLOURS, as('orgAdmin'));
    for (const [path, file, type] of [['logo', LOGO, 'image/svg+xml'], ['logo/dark', LOGO_DARK, 'image/svg+xml'], ['icon', ICON, 'image/png']] as const) {
      const form = new FormData();
      form.set('file', new Blob([file], { type }), 'image');
      const uploaded = await fetch(`${server.url}/assets/v1/org/policy/label/${path}`, { method: 'POST', headers: as('orgAdmin').headers, body: form });
      expect(uploaded.status).toBe(200);
    }
    await mgmt().activateCustomLabelPolicy({}, as('orgAdmin'));
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  /** Changes the organization's branding and activates it (the pages show only the active one). */
  async function brand(change: Partial<typeof COLOURS> & { themeMode?: ThemeMode; hideLoginNameSuffix?: boolean }): Promise<void> {
    const current = (await mgmt().getPreviewLabelPolicy({}, as('orgAdmin'))).policy!;
    const colours = Object.fromEntries(Object.keys(COLOURS).map((k) => [k, current[k as keyof typeof COLOURS]]));
    await mgmt().updateCustomLabelPolicy(
      { ...colours, themeMode: current.themeMode, hideLoginNameSuffix: current.hideLoginNameSuffix, disableWatermark: current.disableWatermark, ...change },
      as('orgAdmin'),
    );
    await mgmt().activateCustomLabelPolicy({}, as('orgAdmin'));
  }

  async function loginPage(clientId: string, options: { locale?: string; colorScheme?: 'light' | 'dark' } = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = (await browser.newContext({ locale: options.locale ?? 'en-US', viewport: { width: 480, height: 760 } }));
    const page = await context.newPage();
    await page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
    const query = new URLSearchParams({ client_id: clientId, redirect_uri: `${rpBase}/callback`, response_type: 'code', scope: 'openid', state: 'st' });
    await page.goto(`${server.url}/oauth/v2/authorize?${query}`);
    await page.waitForSelector('input[name="loginName"]');
    return { context, page };
  }

  function look(page: Page) {
    return page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as Win;
      const body = getComputedStyle(document.body);
      const button = getComputedStyle(document.querySelector('button.primary')!);
      const link = document.querySelector('.links a');
      return {
        bodyBackground: body.backgroundColor,
        bodyText: body.color,
        buttonBackground: button.backgroundColor,
        buttonText: button.color,
        link: link ? getComputedStyle(link).color : undefined,
        danger: getComputedStyle(document.documentElement).getPropertyValue('--danger').trim(),
        focus: getComputedStyle(document.documentElement).getPropertyValue('--focus').trim(),
      };
    });
  }

  /** The logo the browser chose and whether it loaded (the CSP admits it). */
  function shownLogo(page: Page) {
    return page.$eval('.brand-logo img', (img) => ({ src: new URL((img as unknown as Img).currentSrc).pathname, loaded: (img as unknown as Img).naturalWidth > 0, alt: img.getAttribute('alt') }));
  }

  it('shows the logo, the icon and the colours in light and in dark mode, in English and German', async () => {
    const policy = (await mgmt().getLabelPolicy({}, as('orgAdmin'))).policy!;
    const path = (url: string) => new URL(url).pathname;

    const { context, page } = await loginPage('branded-web');
    expect(await look(page)).toMatchObject({
      bodyBackground: rgb(COLOURS.backgroundColor),
      bodyText: rgb(COLOURS.fontColor),
      buttonBackground: rgb(COLOURS.primaryColor),
      buttonText: 'rgb(255, 255, 255)',
      danger: COLOURS.warnColor,
      focus: COLOURS.primaryColor,
    });
    expect(await shownLogo(page)).toEqual({ src: path(policy.logoUrl), loaded: true, alt: '' });
    expect(await page.locator('.brand').textContent()).toBe('');
    expect(await page.textContent('.application')).toBe('Sign in to Managed Shop');
    // the favicon is the organization's icon, served as what it is
    const icon = await page.getAttribute('link[rel="icon"]', 'href');
    expect(icon).toBe(path(policy.iconUrl));
    expect(await page.getAttribute('link[rel="icon"]', 'type')).toBeNull();
    const served = await page.request.get(`${server.url}${icon}`);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/png');
    await screenshot(page, 'branding.png');

    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await look(page)).toMatchObject({
      bodyBackground: rgb(COLOURS.backgroundColorDark),
      bodyText: rgb(COLOURS.fontColorDark),
      buttonBackground: rgb(COLOURS.primaryColorDark),
      buttonText: 'rgb(0, 0, 0)',
      danger: COLOURS.warnColorDark,
    });
    await page.waitForFunction(() => ((globalThis as unknown as Win).document.querySelector('.brand-logo img') as Img).currentSrc.includes('logo-dark'));
    expect(await shownLogo(page)).toEqual({ src: path(policy.logoUrlDark), loaded: true, alt: '' });
    await screenshot(page, 'branding-dark.png');
    await context.close();

    const german = await loginPage('branded-web', { locale: 'de-DE' });
    expect(await german.page.getAttribute('html', 'lang')).toBe('de');
    expect(await german.page.textContent('.application')).toBe('Anmelden bei Managed Shop');
    expect(await look(german.page)).toMatchObject({ bodyBackground: rgb(COLOURS.backgroundColor), buttonBackground: rgb(COLOURS.primaryColor), buttonText: 'rgb(255, 255, 255)' });
    expect(await shownLogo(german.page)).toMatchObject({ src: path(policy.logoUrl), loaded: true });
    await screenshot(german.page, 'branding-de.png');
    await german.page.emulateMedia({ colorScheme: 'dark' });
    expect(await look(german.page)).toMatchObject({ bodyBackground: rgb(COLOURS.backgroundColorDark), buttonBackground: rgb(COLOURS.primaryColorDark) });
    await german.page.waitForFunction(() => ((globalThis as unknown as Win).document.querySelector('.brand-logo img') as Img).currentSrc.includes('logo-dark'));
    await screenshot(german.page, 'branding-dark-de.png');
    await german.context.close();
  }, 60000);

  it('keeps the Content-Security-Policy strict: the colours come as a stylesheet of their own, cached by content', async () => {
    const { context, page } = await loginPage('branded-web');
    const sheets = await page.$$eval('link[rel="stylesheet"]', (links) => links.map((l) => l.getAttribute('href')!));
    expect(sheets).toHaveLength(2);
    expect(sheets[1]).toMatch(new RegExp(`^/ui/login/assets/branding/${MGMT.org}\\.css\\?v=[0-9a-f]{12}$`));
    const reply = await page.request.get(page.url());
    expect(reply.headers()['content-security-policy']).toContain("style-src 'self';");
    expect(reply.headers()['content-security-policy']).not.toContain('unsafe-inline');
    expect(await page.locator('style, [style]').count()).toBe(0);
    await context.close();

    const sheet = await fetch(`${server.url}${sheets[1]}`);
    expect(sheet.status).toBe(200);
    expect(sheet.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(sheet.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(sheet.headers.get('x-content-type-options')).toBe('nosniff');
    const css = await sheet.text();
    expect(css).toContain(`--accent: ${COLOURS.primaryColor};`);
    expect(css).toContain('@media (prefers-color-scheme: dark)');
    // an old hash (a page from before an activation) gets today's colours, not for a year
    const stale = await fetch(`${server.url}/ui/login/assets/branding/${MGMT.org}.css?v=000000000000`);
    expect(stale.headers.get('cache-control')).toBe('no-cache');
    expect(await stale.text()).toBe(css);
    // an organization without branding of its own, or no organization at all, has none
    for (const owner of [MGMT.otherOrg, '999999999999999999', 'not%20an%20id']) {
      const missing = await fetch(`${server.url}/ui/login/assets/branding/${owner}.css`);
      expect(missing.status).toBe(404);
    }
  }, 60000);

  it('button labels stay readable on a light and on a dark primary colour', async () => {
    for (const [primaryColor, label] of [['#ffd60a', 'rgb(0, 0, 0)'], ['#1e1b4b', 'rgb(255, 255, 255)'], ['#808080', 'rgb(0, 0, 0)']] as const) {
      await brand({ primaryColor });
      const { context, page } = await loginPage('branded-web');
      const shown = await look(page);
      expect(shown).toMatchObject({ buttonBackground: rgb(primaryColor), buttonText: label, link: rgb(primaryColor) });
      expect(contrast(shown.buttonBackground, shown.buttonText)).toBeGreaterThanOrEqual(4.5);
      // hovering moves the button away from its label's colour, never towards it
      await page.hover('button.primary');
      const hovered = await page.$eval('button.primary', (b) => (globalThis as unknown as Win).getComputedStyle(b).backgroundColor);
      expect(hovered).not.toBe(shown.buttonBackground);
      expect(contrast(hovered, shown.buttonText)).toBeGreaterThanOrEqual(contrast(shown.buttonBackground, shown.buttonText));
      await context.close();
    }
    await brand({ primaryColor: COLOURS.primaryColor });
  }, 60000);

  it('THEME_MODE_DARK shows the dark colours and logo under a light scheme; THEME_MODE_LIGHT the light ones under a dark one', async () => {
    const policy = (await mgmt().getLabelPolicy({}, as('orgAdmin'))).policy!;
    await brand({ themeMode: ThemeMode.DARK });
    const dark = await loginPage('branded-web', { colorScheme: 'light' });
    expect(await look(dark.page)).toMatchObject({ bodyBackground: rgb(COLOURS.backgroundColorDark), buttonBackground: rgb(COLOURS.primaryColorDark), buttonText: 'rgb(0, 0, 0)' });
    expect((await shownLogo(dark.page)).src).toBe(new URL(policy.logoUrlDark).pathname);
    expect(await dark.page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as Win;
      return getComputedStyle(document.documentElement).colorScheme;
    })).toBe('dark');
    await dark.context.close();

    await brand({ themeMode: ThemeMode.LIGHT });
    const light = await loginPage('branded-web', { colorScheme: 'dark' });
    expect(await look(light.page)).toMatchObject({ bodyBackground: rgb(COLOURS.backgroundColor), buttonBackground: rgb(COLOURS.primaryColor), buttonText: 'rgb(255, 255, 255)' });
    expect((await shownLogo(light.page)).src).toBe(new URL(policy.logoUrl).pathname);
    await light.context.close();
    await brand({ themeMode: ThemeMode.AUTO });
  }, 60000);

  it('an organization without branding keeps Gatehouse\'s own look exactly, in English and German', async () => {
    for (const locale of ['en-US', 'de-DE']) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const { context, page } = await loginPage('plain-web', { locale, colorScheme });
        expect(await look(page)).toMatchObject(DEFAULT_LOOK[colorScheme]);
        expect(await page.$$eval('link[rel="stylesheet"]', (links) => links.length)).toBe(1);
        expect(await page.getAttribute('link[rel="icon"]', 'href')).toMatch(/^\/ui\/login\/assets\/favicon\.svg\?v=[0-9a-f]{12}$/);
        expect(await page.getAttribute('link[rel="icon"]', 'type')).toBe('image/svg+xml');
        expect(await page.textContent('.brand')).toBe('Gatehouse');
        expect(await page.locator('.brand-logo').count()).toBe(0);
        await context.close();
      }
    }
  }, 60000);

  it('hideLoginNameSuffix: the organization\'s users are shown by their user name on the password step and in the account chooser', async () => {
    await brand({ hideLoginNameSuffix: true });
    const { context, page } = await loginPage('branded-web');
    await page.fill('input[name="loginName"]', 'alice@managed.test');
    await page.click('button[type="submit"].primary');
    await page.waitForSelector('input[name="password"]');
    expect(await page.textContent('.identity strong')).toBe('alice');
    await page.fill('input[name="password"]', 'Correct-Horse-9');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);

    // the account chooser shows alice by her user name; another organization's login name keeps
    // its domain (whether or not the user exists)
    const chooser = await context.newPage();
    const query = new URLSearchParams({ client_id: 'branded-web', redirect_uri: `${rpBase}/callback`, response_type: 'code', scope: 'openid', state: 'st', prompt: 'select_account' });
    await chooser.goto(`${server.url}/oauth/v2/authorize?${query}`);
    await chooser.waitForSelector('.accounts');
    expect(await chooser.textContent('.account .login')).toBe('alice');
    await chooser.click('.links a');
    await chooser.waitForSelector('input[name="loginName"]');
    await chooser.fill('input[name="loginName"]', 'nobody@elsewhere.test');
    await chooser.click('button[type="submit"].primary');
    await chooser.waitForSelector('input[name="password"]');
    expect(await chooser.textContent('.identity strong')).toBe('nobody@elsewhere.test');
    await context.close();

    await brand({ hideLoginNameSuffix: false });
    const whole = await loginPage('branded-web');
    await whole.page.fill('input[name="loginName"]', 'alice@managed.test');
    await whole.page.click('button[type="submit"].primary');
    await whole.page.waitForSelector('input[name="password"]');
    expect(await whole.page.textContent('.identity strong')).toBe('alice@managed.test');
    await whole.context.close();
  }, 60000);

  // Last: the instance's branding, once changed, cannot go back to ZITADEL's defaults.
  it('the instance\'s branding, once changed, shows on the pages of organizations without their own', async () => {
    const admin = createClient(AdminService, transports(() => server)[2]![1]());
    await admin.updateLabelPolicy({ ...COLOURS, primaryColor: '#7c2d12', backgroundColor: '#fff7ed', fontColor: '#431407' }, as('iamAdmin'));
    await admin.activateLabelPolicy({}, as('iamAdmin'));
    const { context, page } = await loginPage('plain-web');
    expect(await look(page)).toMatchObject({ bodyBackground: rgb('#fff7ed'), bodyText: rgb('#431407'), buttonBackground: rgb('#7c2d12'), buttonText: 'rgb(255, 255, 255)' });
    const sheet = await page.$$eval('link[rel="stylesheet"]', (links) => links.map((l) => l.getAttribute('href')!));
    expect(sheet[1]).toMatch(/^\/ui\/login\/assets\/branding\/[^/]+\.css\?v=[0-9a-f]{12}$/);
    expect(sheet[1]).not.toContain(MGMT.otherOrg);
    // no images of its own: Gatehouse's name and icon stay
    expect(await page.textContent('.brand')).toBe('Gatehouse');
    expect(await page.getAttribute('link[rel="icon"]', 'href')).toMatch(/^\/ui\/login\/assets\/favicon\.svg/);
    await context.close();
    // an organization with its own keeps it
    const own = await loginPage('branded-web');
    expect(await look(own.page)).toMatchObject({ buttonBackground: rgb(COLOURS.primaryColor) });
    await own.context.close();
  }, 60000);
});
