/**
 * The API reference page in a real browser (Debian's Chromium through playwright-core): /docs
 * renders /openapi.json under the page's own Content-Security-Policy, with no script error and no
 * refused resource, lists the operations by path and name, says how to authorize, and every list
 * call answers 200 to its "Try it out" default for an administrator authorized through the page's
 * own Authorize dialog.
 */
import type { Browser, Page } from 'playwright-core';
import { administratorToken } from '../support/api-token.ts';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { fixture, IDS } from '../support/fixtures.ts';
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

  it('says at its top how to authorize: a bearer token, a machine user\'s personal access token', async () => {
    const description = (await page.locator('.info .description').textContent()) ?? '';
    expect(description).toContain('Authorize');
    expect(description).toContain('personal access token');
    expect(description).toContain('pat create --user NAME');
    expect(description).toContain('POST /v2/users/{userId}/pats');
    expect(description).toContain('docs/management-api.md#personal-access-tokens');
  });

  /** The list calls the page offers; a list under an object takes the id of one the fixture has. */
  const LIST_CALLS: Array<[string, string, Record<string, string>]> = [
    ['post', '/v2/users', {}],
    ['post', '/v2/organizations/_search', {}],
    ['post', '/v2beta/projects/search', {}],
    ['post', '/v2beta/projects/{project_id}/roles/search', { project_id: IDS.project }],
    ['post', '/v2beta/applications/search', {}],
    ['post', '/v2beta/application_keys/search', {}],
    ['post', '/v2beta/authorizations/search', {}],
    ['get', '/v2/users/{user_id}/authentication_methods', { user_id: IDS.alice }],
    ['post', '/v2/users/pats/search', {}],
    ['post', '/admin/v1/idps/templates/_search', {}],
    ['post', '/admin/v1/policies/login/idps/_search', {}],
    ['post', '/management/v1/idps/templates/_search', {}],
    ['post', '/management/v1/policies/login/idps/_search', {}],
    ['post', '/v2/users/{user_id}/links/_search', { user_id: IDS.alice }],
  ];

  it('lists every list call of the document here', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    const lists = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).filter(([, operation]) => /^(List|Search)[A-Z]/.test(operation.summary)).map(([method]) => `${method} ${path}`),
    );
    // ListPasskeys refuses while the issuer is an IP address (docs/passkeys.md#the-relying-party).
    const covered = LIST_CALLS.map(([method, path]) => `${method} ${path}`);
    expect(lists.filter((call) => !covered.includes(call)).sort()).toEqual(
      ['post /v2/users/{user_id}/passkeys/_search'].filter((call) => lists.includes(call)),
    );
  });

  it('answers 200 to the "Try it out" default of every list call, authorized with a personal access token in the Authorize dialog', async () => {
    await page.locator('.auth-wrapper .authorize').click();
    const bearer = page.locator('.modal-ux .auth-container:has(h4 code:text-is("bearer"))');
    await bearer.locator('input').fill(await administratorToken(server));
    await bearer.locator('button.authorize').click();
    await page.locator('.modal-ux .close-modal').click();
    const statuses: string[] = [];
    for (const [method, path, ids] of LIST_CALLS) {
      const operation = page.locator(`.opblock.opblock-${method}:has([data-path="${path}"])`);
      await operation.locator('.opblock-summary').click();
      await operation.locator('.try-out__btn').click();
      for (const [name, id] of Object.entries(ids)) await operation.locator(`tr[data-param-name="${name}"] input`).fill(id);
      await operation.locator('.execute').click();
      const status = operation.locator('.live-responses-table tbody .response-col_status');
      await status.waitFor({ timeout: 10000 });
      statuses.push(`${method} ${path} ${(await status.textContent())?.trim()}`);
      await operation.locator('.opblock-summary').click(); // closed again, so the next one is in view
    }
    expect(statuses).toEqual(LIST_CALLS.map(([method, path]) => `${method} ${path} 200`));
    expect(problems).toEqual([]);
  }, 120000);
});
