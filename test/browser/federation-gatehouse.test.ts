/**
 * A second Gatehouse as the upstream OpenID provider of the first (docs/federation.md#signing-in-with-a-provider):
 * the person signs in at the upstream Gatehouse's own login pages and comes back to the first one
 * as a new, linked user, in a headless Chromium with openid-client as the relying party. The
 * upstream's password form admits only its own client's origin (form-action), which is why the way
 * back ends on a page of Gatehouse that moves on by itself (login/steps/idp.ts). The two
 * servers sit on different hosts (localhost and 127.0.0.1), so that their browser cookies stay apart.
 */
import type { Browser } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { federationPages, offerUpstreamProviders, startCallbackPage, type FederationSite } from '../support/federation-browser.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT } from '../support/management.ts';
import { freePort } from '../support/ports.ts';

const APP = { clientId: 'fed-portal', secret: 'fed-portal-secret' };
const DOWNSTREAM = { clientId: 'downstream', secret: 'downstream-secret' };

describeWithChromium('a second Gatehouse as the upstream provider', () => {
  let upstream: TestServer;
  let server: TestServer;
  let browser: Browser;
  let callbackPage: { base: string; stop(): Promise<void> };
  let origin: string;
  let idpId: string;
  const pages = federationPages((): FederationSite => ({ browser, origin, rpBase: callbackPage.base, upstreamIssuer: upstream.url, app: APP }));

  beforeAll(async () => {
    callbackPage = await startCallbackPage();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    const app = (name: string, creds: { clientId: string; secret: string }, redirectUri: string) => ({
      name, clientId: creds.clientId, clientSecret: creds.secret, authMethod: 'client_secret_basic', redirectUris: [redirectUri], responseTypes: ['code'], grantTypes: ['authorization_code'],
    });
    upstream = await startTestServer(managementDocument({ projects: [{ name: 'federation', apps: [app('Downstream Gatehouse', DOWNSTREAM, `${origin}/idps/callback`)] }] }));
    server = await startTestServer(managementDocument({ projects: [{ name: 'fed-portal', apps: [app('Portal', APP, `${callbackPage.base}/callback`)] }] }), {
      GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const orgAdmin = await apiToken(server, 'orgAdmin');
    const ids = await offerUpstreamProviders(server, orgAdmin, upstream.url, { 'Corporate Gatehouse': { isAutoCreation: true } }, { clientId: DOWNSTREAM.clientId, clientSecret: DOWNSTREAM.secret });
    idpId = ids['Corporate Gatehouse']!;
    browser = await launchChromium();
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await upstream?.stop();
    await callbackPage?.stop();
  });

  it('signs in at the upstream Gatehouse and comes back as a new user linked to the upstream account', async () => {
    const { context, page } = await pages.freshPage();
    const flow = await pages.authorize(page);
    await page.getByRole('button', { name: 'Continue with Corporate Gatehouse' }).click();
    // the upstream Gatehouse's own login pages
    await page.waitForURL(`${upstream.url}/ui/login/login**`);
    expect(await page.textContent('main')).toContain('Downstream Gatehouse');
    await page.fill('input[name="loginName"]', 'alice@managed.test');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', 'Correct-Horse-9');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${callbackPage.base}/callback**`, { timeout: 10000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\nat ${page.url()}:\n${(await page.textContent('main')) ?? ''}`);
    });
    const claims = await pages.tokensAt(page, flow);
    expect(claims.amr).toEqual(['fed']);
    expect(claims.sub).not.toBe(MGMT.alice);
    const link = await server.running.gh.db.selectFrom('idp_links').select(['idp_id', 'external_user_id']).where('user_id', '=', String(claims.sub)).execute();
    expect(link).toEqual([{ idp_id: idpId, external_user_id: MGMT.alice }]);
    const user = await server.running.gh.db.selectFrom('users').select(['org_id', 'email', 'email_verified', 'given_name', 'password_hash']).where('id', '=', String(claims.sub)).executeTakeFirstOrThrow();
    expect(user).toEqual({ org_id: MGMT.org, email: 'alice@managed.test', email_verified: true, given_name: 'Alice', password_hash: null });
    await context.close();
  }, 60000);
});
