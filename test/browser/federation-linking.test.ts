/**
 * Linking an external account to an existing user, and a linked user who may not sign in, in the
 * login UI (docs/federation.md#signing-in-with-a-provider): node-oidc-provider as the upstream, a
 * headless Chromium, openid-client as the application.
 *
 * - `autoLinking` username (ZITADEL's AUTO_LINKING_OPTION_USERNAME): an upstream account whose
 *   preferred user name names a user of an organization the provider serves (in the application's
 *   organization first, then as a login name) is offered to that user; the person confirms with the
 *   user's password, and from then on the link signs in. A name that matches nobody, or a user of
 *   another organization, falls through to the provider's next option.
 * - A linked user who is deactivated or locked: a 403 page that says so, and no session.
 */
import type { Browser, Page } from 'playwright-core';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { federationPages, offerUpstreamProviders, startCallbackPage, type FederationSite } from '../support/federation-browser.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { startOidcUpstream, UPSTREAM_ACCOUNTS, type OidcUpstream } from '../support/upstreams.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'link-shop', secret: 'link-shop-secret' };
/** A user of the other organization, whose user name an upstream account also has. */
const CAROL_ELSEWHERE = '294000000000000001';
/** The other organization's `alice`: the bare name is the application organization's `alice` all the same. */
const ALICE_ELSEWHERE = '294000000000000003';
/** A user of the organization, linked through the API to the upstream account `dora-up`. */
const DORA = '294000000000000002';

// node-oidc-provider looks its accounts up in this table at each sign-in.
Object.assign(UPSTREAM_ACCOUNTS, {
  'alice-up': { sub: 'alice-up', preferred_username: 'alice', given_name: 'Alice', family_name: 'Upstream', email: 'alice.up@example.org', email_verified: true },
  'carol-up': { sub: 'carol-up', preferred_username: 'carol', given_name: 'Carol', family_name: 'Upstream', email: 'carol.up@example.org', email_verified: true },
  nomad: { sub: 'nomad', preferred_username: 'nomad', given_name: 'Nomad', family_name: 'Wanderer', email: 'nomad@example.org', email_verified: true },
  'dora-up': { sub: 'dora-up', preferred_username: 'dora.up', given_name: 'Dora', family_name: 'Upstream' },
});

describeWithChromium('linking an external account to an existing user', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let browser: Browser;
  let callbackPage: { base: string; stop(): Promise<void> };
  let origin: string;
  let orgAdmin: string;
  /** Provider ids by name. */
  const idps: Record<string, string> = {};
  const pages = federationPages((): FederationSite => ({ browser, origin, rpBase: callbackPage.base, upstreamIssuer: upstream.issuer, app: APP }));

  beforeAll(async () => {
    callbackPage = await startCallbackPage();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    upstream = await startOidcUpstream(`${origin}/idps/callback`);
    const document = managementDocument({
      users: [{ id: DORA, userName: 'dora', password: PASSWORD, email: 'dora@managed.test', emailVerified: true, givenName: 'Dora', familyName: 'Here' }],
      projects: [{
        name: 'shop',
        apps: [{ name: 'Link Shop', clientId: APP.clientId, clientSecret: APP.secret, authMethod: 'client_secret_basic', redirectUris: [`${callbackPage.base}/callback`], responseTypes: ['code'], grantTypes: ['authorization_code'] }],
      }],
    });
    const orgs = document['orgs'] as Array<{ users?: unknown[] }>;
    orgs[1]!.users = [
      { id: CAROL_ELSEWHERE, userName: 'carol', password: PASSWORD, email: 'carol@elsewhere.test', emailVerified: true, givenName: 'Carol', familyName: 'Elsewhere' },
      { id: ALICE_ELSEWHERE, userName: 'alice', password: PASSWORD, email: 'alice@elsewhere.test', emailVerified: true, givenName: 'Alice', familyName: 'Elsewhere' },
    ];
    server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' });
    orgAdmin = await apiToken(server, 'orgAdmin');
    browser = await launchChromium();

    const options: Record<string, Record<string, unknown>> = {
      'Upstream Username': { autoLinking: 'AUTO_LINKING_OPTION_USERNAME', isLinkingAllowed: true, isCreationAllowed: true },
      'Upstream Username Create': { autoLinking: 'AUTO_LINKING_OPTION_USERNAME', isAutoCreation: true },
    };
    Object.assign(idps, await offerUpstreamProviders(server, orgAdmin, upstream.issuer, options));
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await upstream?.stop();
    await callbackPage?.stop();
  });

  const linksOf = (idpId: string) => server.running.gh.db.selectFrom('idp_links').select(['user_id', 'external_user_id']).where('idp_id', '=', idpId).orderBy('external_user_id').execute();
  const sessionsOf = (userId: string) => server.running.gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', userId).execute();

  /** From the application through `provider` as `account`, back at Gatehouse's page after the provider. */
  async function throughProvider(page: Page, provider: string, account: string): Promise<void> {
    await page.getByRole('button', { name: `Continue with ${provider}`, exact: true }).click();
    await pages.atUpstream(page, account);
  }

  describe('autoLinking username', () => {
    it('offers the application organization\'s user of that name, linked once the person signs in with its password; the next sign-in goes straight through', async () => {
      const { context, page } = await pages.freshPage();
      const flow = await pages.authorize(page);
      await throughProvider(page, 'Upstream Username', 'alice-up');
      await page.waitForURL(`${origin}/ui/login/idp/done**`);
      expect(await page.textContent('h1')).toBe('Link your account');
      expect(await page.textContent('main')).toContain('Sign in with your existing account to link it to your Upstream Username account.');
      expect(await page.inputValue('input[name="loginName"]')).toBe('alice@managed.test');
      // Nothing is linked before the person has signed in as that user.
      expect(await linksOf(idps['Upstream Username']!)).toEqual([]);
      await page.fill('input[name="password"]', 'wrong-password');
      await page.getByRole('button', { name: 'Link and sign in' }).click();
      expect(await page.textContent('[role="alert"]')).toBe('The login name or password is incorrect.');
      expect(await linksOf(idps['Upstream Username']!)).toEqual([]);
      await page.fill('input[name="password"]', PASSWORD);
      await page.getByRole('button', { name: 'Link and sign in' }).click();
      expect(await pages.tokensAt(page, flow)).toMatchObject({ sub: MGMT.alice, amr: ['fed', 'pwd'] });
      expect(await linksOf(idps['Upstream Username']!)).toEqual([{ user_id: MGMT.alice, external_user_id: 'alice-up' }]);
      await context.close();

      // The link now: no page between the provider and the application, no password.
      const again = await pages.freshPage();
      const second = await pages.authorize(again.page);
      await throughProvider(again.page, 'Upstream Username', 'alice-up');
      expect(await pages.tokensAt(again.page, second)).toMatchObject({ sub: MGMT.alice, amr: ['fed'] });
      await again.context.close();
    }, 60000);

    it('a name that matches no user falls through to the next option (here auto-creation)', async () => {
      const { context, page } = await pages.freshPage();
      const flow = await pages.authorize(page);
      await throughProvider(page, 'Upstream Username Create', 'nomad');
      const claims = await pages.tokensAt(page, flow);
      expect(claims['amr']).toEqual(['fed']);
      const user = await server.running.gh.db.selectFrom('users').select(['org_id', 'user_name', 'password_hash']).where('id', '=', String(claims.sub)).executeTakeFirstOrThrow();
      expect(user).toEqual({ org_id: MGMT.org, user_name: 'nomad', password_hash: null });
      expect(await linksOf(idps['Upstream Username Create']!)).toEqual([{ user_id: String(claims.sub), external_user_id: 'nomad' }]);
      await context.close();
    }, 60000);

    it('never offers a user of an organization the provider does not serve', async () => {
      const { context, page } = await pages.freshPage();
      await pages.authorize(page);
      await throughProvider(page, 'Upstream Username', 'carol-up');
      await page.waitForURL(`${origin}/ui/login/idp/done**`);
      // The provider's next option: the person chooses; nothing names the other organization's user.
      expect(await page.textContent('h1')).toBe('No account linked');
      expect(await page.getByRole('button', { name: 'Link an existing account' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Create an account' }).count()).toBe(1);
      expect(await page.content()).not.toContain('elsewhere.test');
      await page.getByRole('button', { name: 'Link an existing account' }).click();
      expect(await page.inputValue('input[name="loginName"]')).toBe('');
      expect((await linksOf(idps['Upstream Username']!)).map((link) => link.user_id)).not.toContain(CAROL_ELSEWHERE);
      await context.close();
    }, 60000);
  });

  describe('a linked user who may not sign in', () => {
    beforeAll(async () => {
      const linked = await rest(server, 'POST', `/v2/users/${DORA}/links`, orgAdmin, { idpLink: { idpId: idps['Upstream Username']!, userId: 'dora-up', userName: 'dora.up' } });
      expect(linked.status).toBe(200);
    });

    /** Through the provider as `dora-up`: the page after it, its status, and whether a session came of it. */
    async function refusedPage(locale = 'en-US'): Promise<{ status: number | undefined; alert: string | null; title: string | null; signedIn: boolean }> {
      const { context, page } = await pages.freshPage(locale);
      await pages.authorize(page);
      const done = page.waitForResponse((response) => response.url().startsWith(`${origin}/ui/login/idp/done`));
      await page.getByRole('button', { name: /Upstream Username$/ }).click(); // "Continue with", "Weiter mit"
      await pages.atUpstream(page, 'dora-up');
      const status = (await done).status();
      await page.waitForURL(`${origin}/ui/login/idp/done**`);
      const alert = await page.textContent('[role="alert"]');
      const title = await page.textContent('h1');
      // The browser's cookies sign nobody in: the application's prompt=none comes back login_required.
      await pages.authorize(page, { prompt: 'none', waitFor: '' });
      await page.waitForURL(`${callbackPage.base}/callback**`);
      const signedIn = new URL(page.url()).searchParams.get('error') !== 'login_required';
      await context.close();
      return { status, alert, title, signedIn };
    }

    it('signs in while the user is active', async () => {
      const { context, page } = await pages.freshPage();
      const flow = await pages.authorize(page);
      await throughProvider(page, 'Upstream Username', 'dora-up');
      expect(await pages.tokensAt(page, flow)).toMatchObject({ sub: DORA, amr: ['fed'] });
      await context.close();
    }, 60000);

    it('deactivated: a 403 page that says so, in English and German, and no session', async () => {
      expect((await rest(server, 'POST', `/v2/users/${DORA}/deactivate`, orgAdmin, {})).status).toBe(200);
      const before = await sessionsOf(DORA);
      expect(await refusedPage()).toEqual({ status: 403, alert: 'This account is deactivated. Please contact your administrator.', title: 'Sign-in failed', signedIn: false });
      expect(await refusedPage('de-DE')).toEqual({
        status: 403, alert: 'Dieses Konto ist deaktiviert. Bitte wenden Sie sich an Ihre Administration.', title: 'Anmeldung fehlgeschlagen', signedIn: false,
      });
      expect(await sessionsOf(DORA)).toEqual(before);
      expect((await rest(server, 'POST', `/v2/users/${DORA}/reactivate`, orgAdmin, {})).status).toBe(200);
    }, 90000);

    it('locked by an administrator: a 403 page that says so, and no session', async () => {
      expect((await rest(server, 'POST', `/v2/users/${DORA}/lock`, orgAdmin, {})).status).toBe(200);
      const before = await sessionsOf(DORA);
      expect(await refusedPage()).toEqual({ status: 403, alert: 'This account is locked. Please contact your administrator.', title: 'Sign-in failed', signedIn: false });
      expect(await sessionsOf(DORA)).toEqual(before);
      expect((await rest(server, 'POST', `/v2/users/${DORA}/unlock`, orgAdmin, {})).status).toBe(200);
    }, 60000);

    it('locked out after failed attempts: the lockout sentence with the minutes left, and no session', async () => {
      // The lockout the password step sets after too many failures (lockout.ts), ten minutes from now.
      await server.running.gh.db.updateTable('users').set({ locked_until: new Date(Date.now() + 10 * 60_000) }).where('id', '=', DORA).execute();
      const before = await sessionsOf(DORA);
      expect(await refusedPage()).toEqual({
        status: 403, alert: 'Too many failed sign-in attempts: this account is locked. Try again in 10 minutes.', title: 'Sign-in failed', signedIn: false,
      });
      expect(await sessionsOf(DORA)).toEqual(before);
      await server.running.gh.db.updateTable('users').set({ locked_until: null }).where('id', '=', DORA).execute();
    }, 60000);
  });
});
