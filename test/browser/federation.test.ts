/**
 * Signing in with an external identity provider in the login UI (docs/federation.md#signing-in-with-a-provider):
 * a real upstream OpenID provider (node-oidc-provider, driven through its own login and consent
 * pages), a headless Chromium, openid-client as the relying party, the providers configured through
 * the management API over REST by the organization's owner.
 */
import type { Browser, Page } from 'playwright-core';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { federationPages, offerUpstreamProviders, startCallbackPage, type FederationSite } from '../support/federation-browser.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { codeFor, wrongCode } from '../support/totp.ts';
import { authorizeAtOidcProvider, startOidcUpstream, type OidcUpstream } from '../support/upstreams.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'fed-shop', secret: 'fed-shop-secret' };
const OTHER_APP = { clientId: 'fed-elsewhere', secret: 'fed-elsewhere-secret' };
/** A user of the organization whose verified address is the upstream account's. */
const ADA_HERE = '293000000000000001';
/** A user with an authenticator app. */
const OTTO = '293000000000000002';

describeWithChromium('signing in with an external identity provider', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let browser: Browser;
  let callbackPage: { base: string; stop(): Promise<void> };
  let rpBase: string;
  let origin: string;
  let orgAdmin: string;
  /** Provider ids by name. */
  const idps: Record<string, string> = {};
  const { freshPage, authorize, atUpstream, tokensAt } = federationPages((): FederationSite => ({ browser, origin, rpBase, upstreamIssuer: upstream.issuer, app: APP }));

  beforeAll(async () => {
    callbackPage = await startCallbackPage();
    rpBase = callbackPage.base;
    const port = await freePort();
    origin = `http://localhost:${port}`;
    upstream = await startOidcUpstream(`${origin}/idps/callback`);
    const app = (name: string, creds: { clientId: string; secret: string }) => ({
      name, clientId: creds.clientId, clientSecret: creds.secret, authMethod: 'client_secret_basic', redirectUris: [`${rpBase}/callback`], responseTypes: ['code'], grantTypes: ['authorization_code'],
    });
    const document = managementDocument({
      users: [
        { id: ADA_HERE, userName: 'ada-here', password: PASSWORD, email: 'ada@example.org', emailVerified: true, givenName: 'Ada', familyName: 'Here' },
        { id: OTTO, userName: 'otto', password: PASSWORD, email: 'otto@example.net', emailVerified: true, givenName: 'Otto', familyName: 'App' },
      ],
      projects: [{ name: 'shop', apps: [app('Federated Shop', APP)] }],
    });
    const orgs = document['orgs'] as Array<{ projects: Array<{ apps?: unknown[] }> }>;
    orgs[1]!.projects[0]!.apps = [app('Elsewhere Shop', OTHER_APP)];
    server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' });
    orgAdmin = await apiToken(server, 'orgAdmin');
    browser = await launchChromium();

    // The organization's own login policy, allowing external sign-in, and four providers at the same upstream.
    const options: Record<string, Record<string, unknown>> = {
      'Upstream Create': { isAutoCreation: true, isCreationAllowed: true },
      'Upstream Email': { autoLinking: 'AUTO_LINKING_OPTION_EMAIL' },
      'Upstream Link': { isLinkingAllowed: true },
      'Upstream Form': { isCreationAllowed: true },
    };
    Object.assign(idps, await offerUpstreamProviders(server, orgAdmin, upstream.issuer, options));
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await upstream?.stop();
    await callbackPage?.stop();
  });

  const buttons = (page: Page) => page.locator('div.idps button').allTextContents();

  it('shows a button per provider the application\'s organization offers, in English and German, and none elsewhere', async () => {
    const { context, page } = await freshPage();
    await authorize(page);
    expect(await buttons(page)).toEqual(['Continue with Upstream Create', 'Continue with Upstream Email', 'Continue with Upstream Form', 'Continue with Upstream Link']);
    await screenshot(page, 'login-idp.png');
    // The buttons' redirect to the upstream is admitted by the page's form-action.
    expect((await page.request.get(page.url())).headers()['content-security-policy']).toContain(`form-action 'self' ${rpBase} ${upstream.issuer}`);
    await context.close();

    const german = await freshPage('de-DE');
    await authorize(german.page);
    expect(await buttons(german.page)).toContain('Weiter mit Upstream Create');
    await screenshot(german.page, 'login-idp-de.png');
    await german.context.close();

    const other = await freshPage();
    await authorize(other.page, { creds: OTHER_APP });
    expect(await buttons(other.page)).toEqual([]);
    await other.context.close();
  }, 60000);

  it('auto-linking by email: the one user with the verified address is linked (before auto-creation makes a second one)', async () => {
    const { context, page } = await freshPage();
    const flow = await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Email' }).click();
    await atUpstream(page);
    expect((await tokensAt(page, flow)).sub).toBe(ADA_HERE);
    await context.close();
  }, 60000);

  it('auto-creation: the first sign-in makes a linked Gatehouse user, the next one finds the link', async () => {
    const { context, page } = await freshPage();
    const flow = await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(page);
    const claims = await tokensAt(page, flow);
    expect(claims['amr']).toEqual(['fed']);
    const sub = String(claims.sub);
    expect(sub).not.toBe('ada');
    const user = await server.running.gh.db.selectFrom('users').select(['org_id', 'user_name', 'email', 'email_verified', 'password_hash']).where('id', '=', sub).executeTakeFirstOrThrow();
    expect(user).toEqual({ org_id: MGMT.org, user_name: 'ada.l', email: 'ada@example.org', email_verified: true, password_hash: null });
    const link = await server.running.gh.db.selectFrom('idp_links').select(['idp_id', 'external_user_id']).where('user_id', '=', sub).execute();
    expect(link).toEqual([{ idp_id: idps['Upstream Create'], external_user_id: 'ada' }]);
    // Nothing of the upstream beyond amr: not its issuer, not its subject.
    expect(JSON.stringify(claims)).not.toContain(upstream.issuer);
    await context.close();

    const again = await freshPage();
    const second = await authorize(again.page);
    await again.page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(again.page);
    expect((await tokensAt(again.page, second)).sub).toBe(sub);
    await again.context.close();
  }, 60000);

  it('no account linked: a user with an authenticator app is not linked on its password alone', async () => {
    const gh = server.running.gh;
    const otto = { id: OTTO, orgId: MGMT.org, loginName: 'otto@managed.test' };
    const added = await addOtpFactor(gh, otto);
    if (added.kind !== 'added') throw new Error('otto already has a factor');
    expect((await verifyOtpFactor(gh, otto, codeFor(added.otp.secret), new Date(), async () => undefined)).kind).toBe('verified');
    const { context, page } = await freshPage();
    await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Link' }).click();
    await atUpstream(page);
    await page.waitForURL(`${origin}/ui/login/idp/done**`);
    await page.getByRole('button', { name: 'Link an existing account' }).click();
    await page.fill('input[name="loginName"]', 'otto@managed.test');
    await page.fill('input[name="password"]', PASSWORD);
    const [answer] = await Promise.all([page.waitForResponse((response) => response.url().includes('/ui/login/idp/link')), page.getByRole('button', { name: 'Link and sign in' }).click()]);
    expect(answer.status()).toBe(403);
    expect(await page.textContent('[role="alert"]')).toContain('its password alone cannot link it');
    expect(await gh.db.selectFrom('idp_links').select('user_id').where('user_id', '=', OTTO).execute()).toEqual([]);
    expect(await gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', OTTO).execute()).toEqual([]);
    await context.close();
  }, 60000);

  it('no account linked: link an existing account with its password', async () => {
    const { context, page } = await freshPage();
    const flow = await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Link' }).click();
    await atUpstream(page);
    await page.waitForURL(`${origin}/ui/login/idp/done**`);
    expect(await page.textContent('h1')).toBe('No account linked');
    expect(await page.textContent('main')).toContain('No account is linked to this Upstream Link account.');
    expect(await page.getByRole('button', { name: 'Create an account' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Link an existing account' }).click();
    await page.fill('input[name="loginName"]', 'alice@managed.test');
    await page.fill('input[name="password"]', 'wrong-password');
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    expect(await page.textContent('[role="alert"]')).toBe('The login name or password is incorrect.');
    expect(await page.textContent('h1')).toBe('Link your account');
    expect(await server.running.gh.db.selectFrom('idp_links').select('user_id').where('idp_id', '=', idps['Upstream Link']!).execute()).toEqual([]);
    await page.fill('input[name="password"]', PASSWORD);
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    const claims = await tokensAt(page, flow);
    expect(claims).toMatchObject({ sub: MGMT.alice, amr: ['fed', 'pwd'] });
    expect(await server.running.gh.db.selectFrom('idp_links').select('user_id').where('idp_id', '=', idps['Upstream Link']!).execute()).toEqual([{ user_id: MGMT.alice }]);
    await context.close();
  }, 60000);

  it('no account linked: create an account from the prefilled form, without a password', async () => {
    const { context, page } = await freshPage();
    const flow = await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Form' }).click();
    await atUpstream(page);
    await page.getByRole('button', { name: 'Create an account' }).click();
    expect(await page.inputValue('input[name="givenName"]')).toBe('Ada');
    expect(await page.inputValue('input[name="email"]')).toBe('ada@example.org');
    await page.fill('input[name="userName"]', 'ada.form');
    await page.getByRole('button', { name: 'Create an account' }).click();
    const claims = await tokensAt(page, flow);
    const user = await server.running.gh.db.selectFrom('users').select(['user_name', 'password_hash', 'email_verified']).where('id', '=', String(claims.sub)).executeTakeFirstOrThrow();
    expect(user).toEqual({ user_name: 'ada.form', password_hash: null, email_verified: true });
    await context.close();
  }, 60000);

  it('the provider scope goes straight to the provider; for another organization\'s application it is invalid_scope', async () => {
    const { context, page } = await freshPage();
    const flow = await authorize(page, { scope: `openid urn:gatehouse:iam:org:idp:id:${idps['Upstream Create']!}`, waitFor: '' });
    await atUpstream(page);
    expect((await tokensAt(page, flow)).amr).toEqual(['fed']);
    await context.close();

    const other = await freshPage();
    await authorize(other.page, { creds: OTHER_APP, scope: `openid urn:gatehouse:iam:org:idp:id:${idps['Upstream Create']!}`, waitFor: '' });
    await other.page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(other.page.url()).searchParams.get('error')).toBe('invalid_scope');
    await other.context.close();
  }, 60000);

  it('refuses an intent of another browser carried into this one', async () => {
    const victim = await freshPage();
    await authorize(victim.page);
    const attacker = await freshPage();
    await authorize(attacker.page);
    // The attacker's sign-in at the upstream, finished outside its browser: the done URL it would have gone to.
    const authorization = attacker.page.waitForRequest((request) => request.url().startsWith(`${upstream.issuer}/auth?`));
    await attacker.page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    const callback = await authorizeAtOidcProvider((await authorization).url(), 'ada', `${origin}/idps/callback`);
    const answered = await fetch(callback, { redirect: 'manual' });
    const carried = new URL(answered.headers.get('location')!);
    expect(carried.pathname).toBe('/ui/login/idp/done');
    const sessionsBefore = await server.running.gh.db.selectFrom('user_sessions').select('id').execute();
    const victimRequest = new URL(victim.page.url()).searchParams.get('authRequestID')!;
    const injected = await victim.page.goto(`${origin}/ui/login/idp/done?authRequestID=${victimRequest}&id=${carried.searchParams.get('id')}&token=${carried.searchParams.get('token')}`);
    expect(injected?.status()).toBe(400);
    expect(await victim.page.textContent('[role="alert"]')).toContain('cannot be used here');
    // No session was made, and the intent is not used up by the refusal.
    expect(await server.running.gh.db.selectFrom('user_sessions').select('id').execute()).toEqual(sessionsBefore);
    expect((await server.running.gh.db.selectFrom('idp_intents').select('status').where('id', '=', carried.searchParams.get('id')!).executeTakeFirstOrThrow()).status).toBe('succeeded');
    // Nor does the victim's browser get anywhere with the attacker's request id (not its request).
    const foreign = await victim.page.goto(carried.href);
    expect(foreign?.status()).toBe(400);
    await victim.context.close();
    await attacker.context.close();
  }, 60000);

  it('an upstream error ends on Gatehouse\'s error page naming the provider, with no session', async () => {
    const { context, page } = await freshPage();
    await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await page.waitForURL(`${upstream.issuer}/**`);
    await page.click('text=[ Cancel ]');
    await page.waitForURL(`${origin}/ui/login/idp/failed**`);
    expect(await page.textContent('h1')).toBe('Sign-in failed');
    expect(await page.textContent('[role="alert"]')).toBe('Signing in with Upstream Create did not succeed.');
    expect(await page.textContent('main')).toContain('access_denied');
    expect(await page.locator('nav.links a').allTextContents()).toEqual(['Back to sign-in']);
    expect((await context.cookies()).filter((c) => c.name.includes('session'))).toEqual([]);
    await page.click('text=Back to sign-in');
    await page.waitForSelector('input[name="loginName"]');
    await context.close();

    const german = await freshPage('de-DE');
    await authorize(german.page);
    await german.page.getByRole('button', { name: 'Weiter mit Upstream Create' }).click();
    await german.page.waitForURL(`${upstream.issuer}/**`);
    await german.page.click('text=[ Cancel ]');
    await german.page.waitForURL(`${origin}/ui/login/idp/failed**`);
    expect(await german.page.textContent('h1')).toBe('Anmeldung fehlgeschlagen');
    expect(await german.page.textContent('[role="alert"]')).toBe('Die Anmeldung mit Upstream Create ist nicht gelungen.');
    expect(await german.page.locator('nav.links a').allTextContents()).toEqual(['Zurück zur Anmeldung']);
    await german.context.close();
  }, 60000);

  it('forceMfa asks a sign-in with a provider for a local second factor (set up on the way, then asked for); forceMfaLocalOnly exempts it', async () => {
    const base = { allowUsernamePassword: true, allowExternalIdp: true, passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' };
    const policy = async (forceMfa: boolean, forceMfaLocalOnly: boolean) =>
      expect((await rest(server, 'PUT', '/management/v1/policies/login', orgAdmin, { ...base, forceMfa, forceMfaLocalOnly })).status).toBe(200);
    await policy(false, true);
    const { context, page } = await freshPage();
    const flow = await authorize(page);
    await page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(page);
    const exempt = await tokensAt(page, flow);
    expect(exempt.amr).toEqual(['fed']);
    await context.close();

    // forceMfa: the linked user has no second factor yet, and sets up an authenticator app before any code is issued.
    await policy(true, false);
    const strict = await freshPage();
    const strictFlow = await authorize(strict.page);
    await strict.page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(strict.page);
    await strict.page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    expect(await strict.page.textContent('p.identity strong')).toBe((await server.running.gh.directory.user(String(exempt.sub)))?.loginName);
    const secret = ((await strict.page.textContent('code.otp-secret')) ?? '').replace(/\s+/g, '');
    await strict.page.fill('input[name="code"]', wrongCode(secret));
    await strict.page.click('button[type="submit"].primary');
    await strict.page.waitForSelector('[role="alert"]');
    expect(await strict.page.textContent('[role="alert"]')).toContain('incorrect');
    await strict.page.fill('input[name="code"]', codeFor(secret));
    await strict.page.click('button[type="submit"].primary');
    const enrolled = await tokensAt(strict.page, strictFlow);
    expect(enrolled).toMatchObject({ sub: exempt.sub, amr: ['fed', 'otp', 'mfa'] });
    await strict.context.close();

    // The factor now set up is asked for at every sign-in with the provider, forceMfaLocalOnly or not
    // (a factor the user has is never skipped), in the code step.
    await policy(false, true);
    const again = await freshPage();
    const againFlow = await authorize(again.page);
    await again.page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(again.page);
    await again.page.waitForURL(new RegExp('/ui/login/otp\\?authRequestID=\\d+$'));
    await again.page.fill('input[name="code"]', codeFor(secret, Date.now() + 30_000));
    await again.page.click('button[type="submit"].primary');
    expect(await tokensAt(again.page, againFlow)).toMatchObject({ sub: exempt.sub, amr: ['fed', 'otp', 'mfa'] });
    await again.context.close();

    // Leaving the setup page half-way signs nobody in: no session is made before the second factor.
    expect((await rest(server, 'DELETE', `/v2/users/${String(exempt.sub)}/totp`, orgAdmin)).status).toBe(200);
    await policy(true, false);
    const sessionsOf = () => server.running.gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', String(exempt.sub)).execute();
    const sessionsBefore = await sessionsOf();
    const leaver = await freshPage();
    await authorize(leaver.page);
    await leaver.page.getByRole('button', { name: 'Continue with Upstream Create' }).click();
    await atUpstream(leaver.page);
    await leaver.page.waitForURL(new RegExp('/ui/login/mfa-setup\\?authRequestID=\\d+$'));
    await leaver.context.close();
    expect(await sessionsOf()).toEqual(sessionsBefore);
    await policy(false, false);
  }, 90000);

  it('meets bad input with a clear 4xx page', async () => {
    const { context, page } = await freshPage();
    await authorize(page);
    const requestId = new URL(page.url()).searchParams.get('authRequestID')!;
    const csrfToken = (await page.getAttribute('input[name="csrfToken"]', 'value')) ?? '';
    const post = (path: string, form: Record<string, string>) => page.request.post(`${origin}${path}?authRequestID=${requestId}`, { form: { authRequestID: requestId, csrfToken, ...form }, maxRedirects: 0 });
    // another organization's provider, or an id that names none: the same answer
    for (const idpId of ['999999999999999999', '']) {
      const started = await post('/ui/login/idp', { idpId });
      expect(started.status()).toBe(400);
      expect(await started.text()).toContain('cannot be used here');
    }
    expect((await page.request.post(`${origin}/ui/login/idp`, { form: { authRequestID: requestId, idpId: idps['Upstream Create']! }, maxRedirects: 0 })).status()).toBe(403); // no CSRF token
    expect((await page.request.get(`${origin}/ui/login/idp?authRequestID=${requestId}`)).status()).toBe(405);
    expect((await page.request.get(`${origin}/ui/login/idp/done?authRequestID=${requestId}`)).status()).toBe(400);
    expect((await page.request.get(`${origin}/ui/login/idp/done?authRequestID=${requestId}&id=1&token=x`)).status()).toBe(400);
    // a choice page's sealed account, made up
    for (const path of ['/ui/login/idp/link', '/ui/login/idp/create']) {
      const forged = await post(path, { pending: 'v1.AAAA.BBBB.CCCC', show: '1' });
      expect(forged.status()).toBe(400);
      expect(await forged.text()).toContain('cannot be used here');
    }
    // the failure page without an intent of this request names no provider, and says the reason as text
    const failed = await page.request.get(`${origin}/ui/login/idp/failed?authRequestID=${requestId}&id=1&error=%3Cb%3Ex%3C%2Fb%3E`);
    expect(failed.status()).toBe(400);
    expect(await failed.text()).toContain('&lt;b&gt;x&lt;/b&gt;');
    await context.close();
  }, 60000);
});
