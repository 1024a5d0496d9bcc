/**
 * The API reference page in a real browser (Debian's Chromium through playwright-core): /docs
 * renders /openapi.json under the page's own Content-Security-Policy, with no script error and no
 * refused resource, and lists the operations by path and name.
 */
import type { Browser, Page } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';


describeWithChromium('the API reference page', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  /** Script errors, console errors (a refused resource or policy violation is one) and failed requests. */
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(fixture().document);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    const response = await page.goto(`${server.url}/docs`);
    expect(response?.status()).toBe(200);
    await page.locator('.opblock').first().waitFor({ timeout: 20000 });
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders the document with nothing refused or failing', async () => {
    await page.waitForLoadState('networkidle');
    expect(problems).toEqual([]);
    expect(await page.title()).toBe('Gatehouse API reference');
    await expect(page.locator('.info .title').textContent()).resolves.toContain('Gatehouse API');
  });

  it('lists the OTP operations of AuthService and the feature operations by path and name', async () => {
    const otp = page.locator('.opblock:has([data-path="/auth/v1/users/me/auth_factors/otp"])');
    await expect(otp.count()).resolves.toBe(2);
    await expect(otp.locator('.opblock-summary-method').allTextContents()).resolves.toEqual(['POST', 'DELETE']);
    await expect(otp.locator('.opblock-summary-description').allTextContents()).resolves.toEqual(['AddMyAuthFactorOTP', 'RemoveMyAuthFactorOTP']);
    const verify = page.locator('.opblock:has([data-path="/auth/v1/users/me/auth_factors/otp/_verify"])');
    await expect(verify.locator('.opblock-summary-description').textContent()).resolves.toBe('VerifyMyAuthFactorOTP');
    const features = page.locator('.opblock:has([data-path="/v2/features/instance"])');
    await expect(features.locator('.opblock-summary-method').allTextContents()).resolves.toEqual(['PUT', 'DELETE', 'GET']);
    await expect(page.locator('.opblock-tag', { hasText: 'zitadel.auth.v1.AuthService' }).count()).resolves.toBe(1);
  });

  it('opens an operation with its query parameter and security', async () => {
    const get = page.locator('.opblock.opblock-get:has([data-path="/v2/features/instance"])');
    await get.locator('.opblock-summary').click();
    const parameter = get.locator('.parameters-col_name', { hasText: 'inheritance' });
    await parameter.waitFor({ timeout: 10000 });
    await expect(parameter.locator('.parameter__in').textContent()).resolves.toBe('(query)');
    await expect(parameter.locator('.parameter__type').textContent()).resolves.toBe('boolean');
    await expect(get.locator('.authorization__btn').count()).resolves.toBe(1);
    await expect(page.locator('.auth-wrapper .authorize').count()).resolves.toBe(1);
    expect(problems).toEqual([]);
  });
});
