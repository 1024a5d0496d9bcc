/**
 * Passkeys in the login UI (docs/passkeys.md): a headless Chromium with a virtual authenticator
 * (the DevTools protocol's WebAuthn domain: ctap2, internal transport, resident keys, user
 * verification) signs in through the login UI; openid-client is the relying party. Passkeys are
 * registered through the API (RegisterPasskey over REST, `navigator.credentials.create` on a page of
 * Gatehouse's origin, VerifyPasskeyRegistration). The server's external URL is on localhost, the only
 * http origin browsers allow WebAuthn on. Screenshots for the README go to docs/screenshots/ when GATEHOUSE_SCREENSHOTS=1.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { Mailbox, nthMailTo, partOf } from '../mail/mailbox.ts';
import { pageWithAuthenticator as withAuthenticator } from '../support/virtual-authenticator.ts';
import { describeWithChromium, launchChromium, screenshot } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiToken, managementDocument, MGMT, rest } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { codeFor } from '../support/totp.ts';

const PASSWORD = 'Correct-Horse-9';
const APP = { clientId: 'passkey-shop', secret: 'passkey-shop-secret' };
const USERS = {
  /** Signs in username-less. */
  nomad: '281000000000000001',
  /** Types its login name and is offered the passkey first. */
  typist: '281000000000000002',
  /** German pages. */
  deutsch: '281000000000000003',
  /** Uses the self-service page. */
  selfie: '281000000000000004',
  /** Comes back to the self-service page after more than 10 minutes. */
  later: '281000000000000005',
  /** Its passkey is copied to an authenticator whose counter starts over. */
  twin: '281000000000000006',
  /** Picks its passkey from the login name field's autofill. */
  filler: '281000000000000007',
  /** Adds its first passkey through a mailed registration link, without a password. */
  linked: '281000000000000008',
} as const;
const REFUSED = 'Signing in with a passkey did not work. Try again, or sign in another way.';


describeWithChromium('passkeys in the login UI', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let origin: string;
  let admin: string;
  const mailbox = new Mailbox();

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));

    const port = await freePort();
    origin = `http://localhost:${port}`;
    const human = (id: string, userName: string) => ({ id, userName, password: PASSWORD, email: `${userName}@managed.test`, emailVerified: true, givenName: userName });
    const document = managementDocument({
      users: [
        human(USERS.nomad, 'nomad'),
        human(USERS.typist, 'typist'),
        human(USERS.deutsch, 'deutsch'),
        human(USERS.selfie, 'selfie'),
        human(USERS.later, 'later'),
        human(USERS.twin, 'twin'),
        human(USERS.filler, 'filler'),
        { id: USERS.linked, userName: 'linked', email: 'linked@managed.test', emailVerified: true, givenName: 'linked' },
      ],
      projects: [
        {
          name: 'shop',
          apps: [
            {
              name: 'passkey-shop',
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
    await mailbox.start(0);
    server = await startTestServer(document, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_SMTP_URL: mailbox.url });
    admin = await apiToken(server, 'iamAdmin');
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await mailbox.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  async function relyingParty(): Promise<client.Configuration> {
    return client.discovery(new URL(origin), APP.clientId, undefined, client.ClientSecretBasic(APP.secret), { execute: [client.allowInsecureRequests] });
  }

  /** A page with a virtual authenticator of its own (support/virtual-authenticator.ts). */
  const pageWithAuthenticator = (locale?: string, options?: { autofill?: boolean }) => withAuthenticator(browser, locale, options);

  /** RegisterPasskey over REST, the ceremony in the page (on Gatehouse's origin), VerifyPasskeyRegistration. */
  async function registerPasskey(page: Page, userId: string, name: string): Promise<string> {
    await page.goto(`${origin}/ui/login/logged-out`);
    const registered = await rest(server, 'POST', `/v2/users/${userId}/passkeys`, admin, {});
    expect(registered.status).toBe(200);
    const options = (registered.json['publicKeyCredentialCreationOptions'] as { publicKey: unknown }).publicKey;
    const credential: unknown = await page.evaluate(
      `(async (json) => {
        const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(json);
        const created = await navigator.credentials.create({ publicKey });
        return created.toJSON();
      })(${JSON.stringify(options)})`,
    );
    const passkeyId = String(registered.json['passkeyId']);
    const verified = await rest(server, 'POST', `/v2/users/${userId}/passkeys/${passkeyId}`, admin, { publicKeyCredential: credential, passkeyName: name });
    expect(verified.status).toBe(200);
    return passkeyId;
  }

  async function authorize(config: client.Configuration, page: Page, extra: Record<string, string> = {}): Promise<{ state: string; nonce: string }> {
    const state = client.randomState();
    const nonce = client.randomNonce();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid', state, nonce, ...extra }).href);
    return { state, nonce };
  }

  /** Waits until the page's error area has a message. */
  async function alertShown(page: Page): Promise<void> {
    await page.locator('[role="alert"] p').waitFor({ timeout: 20000 });
  }

  const passkeyButton = (page: Page, name: RegExp = /passkey/i) => page.getByRole('button', { name });

  it('signs in username-less from the login name page: amr user+mfa, auth_time of the assertion', async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator();
    const passkeyId = await registerPasskey(page, USERS.nomad, 'Laptop');
    const { state, nonce } = await authorize(config, page);
    await page.waitForSelector('input[name="loginName"]');
    await expect(passkeyButton(page).isVisible()).resolves.toBe(true);
    expect(await passkeyButton(page).textContent()).toBe('Sign in with a passkey');
    await screenshot(page, 'passkey-button.png');

    const before = Math.floor(Date.now() / 1000);
    await passkeyButton(page).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const after = Math.ceil(Date.now() / 1000);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ sub: USERS.nomad, iss: origin, aud: [APP.clientId], amr: ['user', 'mfa'] });
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(claims.auth_time).toBeLessThanOrEqual(after);

    // prompt=login asks again; a removed passkey no longer signs in, and is told with the one message
    expect((await rest(server, 'DELETE', `/v2/users/${USERS.nomad}/passkeys/${passkeyId}`, admin)).status).toBe(200);
    await authorize(config, page, { prompt: 'login' });
    await page.waitForSelector('input[name="loginName"]');
    await passkeyButton(page).click();
    // the assertion was posted and refused by the server: its page, with the one message
    await page.waitForURL(new RegExp(`/ui/login/passkey\\?authRequestID=\\d+$`));
    await alertShown(page);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe(REFUSED);
    await expect(passkeyButton(page).isVisible()).resolves.toBe(true);
    await context.close();
  }, 60000);

  it("offers the passkeys in the login name field's autofill (conditional mediation); a refused one is not tried again by itself", async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator('en-US', { autofill: true });
    const passkeyId = await registerPasskey(page, USERS.filler, 'Phone');
    const { state, nonce } = await authorize(config, page);
    // the virtual authenticator picks the passkey from the autofill as soon as the page offers it
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.filler, amr: ['user', 'mfa'] });

    // a removed passkey picked from the autofill: the one refusal, and the page does not offer it again
    expect((await rest(server, 'DELETE', `/v2/users/${USERS.filler}/passkeys/${passkeyId}`, admin)).status).toBe(200);
    await authorize(config, page, { prompt: 'login' });
    await page.waitForURL(new RegExp(`/ui/login/passkey\\?authRequestID=\\d+$`));
    await alertShown(page);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe(REFUSED);
    expect(await page.getAttribute('input[name="loginName"]', 'autocomplete')).toBe('username webauthn');
    expect(await page.locator('form.passkey[data-autofill]').count()).toBe(0);
    const challenges = async () => (await server.running.gh.db.selectFrom('passkey_challenges').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n;
    const before = await challenges();
    await page.waitForTimeout(1000);
    expect(await challenges()).toBe(before);
    expect(new URL(page.url()).pathname).toBe('/ui/login/passkey');
    await context.close();
  }, 60000);

  it('a mailed registration link adds a passkey without a sign-in; the code works once, for this browser', async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator('en-US', { autofill: true });
    const sent = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys/registration_link`, admin, { sendLink: {} });
    expect(sent.status).toBe(200);
    // read from the mail as delivered: once sent, the outbox keeps no body
    const text = partOf((await nthMailTo(mailbox, 'linked@managed.test', 1)).raw, 'text/plain') ?? '';
    const link = new RegExp(`${origin}/ui/login/passkeys\\?[^\\s]+`).exec(text)?.[0];
    if (link === undefined) throw new Error(`no link in ${text}`);
    const url = new URL(link);
    expect(url.searchParams.get('userID')).toBe(USERS.linked);

    // a wrong code shows the same page, and is refused with the one message
    const wrong = new URL(url);
    wrong.searchParams.set('code', 'AAAAAAAAAAAA');
    await page.goto(wrong.href);
    expect(await page.textContent('main')).not.toContain('linked');
    await page.fill('input[name="name"]', 'Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await alertShown(page);
    expect(await page.textContent('[role="alert"]')).toContain('the link may have expired or been used already');

    await page.goto(url.href);
    expect(await page.textContent('h1')).toBe('Your passkeys');
    await page.fill('input[name="name"]', 'Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Your passkey has been added.').waitFor();
    expect(await page.textContent('.identity strong')).toBe('linked@managed.test');
    const listed = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys/_search`, admin, {});
    expect(listed.json['result']).toEqual([{ id: expect.any(String), state: 'AUTH_FACTOR_STATE_READY', name: 'Phone' }]);

    // the link is used up
    await page.goto(url.href);
    await page.fill('input[name="name"]', 'Another');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await alertShown(page);
    expect(await page.textContent('[role="alert"]')).toContain('the link may have expired or been used already');

    // the user, who has no password, signs in with the new passkey (here from the autofill)
    const { state, nonce } = await authorize(config, page);
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.linked, amr: ['user', 'mfa'] });

    // a registration started with a code is finished by the browser that started it, not another one
    const returned = await rest(server, 'POST', `/v2/users/${USERS.linked}/passkeys/registration_link`, admin, { returnCode: {} });
    const code = returned.json['code'] as { id: string; code: string };
    const codeUrl = `${origin}/ui/login/passkeys?userID=${USERS.linked}&codeID=${code.id}&code=${code.code}`;
    const linkForm = async (p: Page) => {
      await p.goto(codeUrl);
      return { csrfToken: await p.inputValue('input[name="csrfToken"]'), userID: USERS.linked, codeID: code.id, code: code.code, name: 'Second' };
    };
    const fields = await linkForm(page);
    const options = await page.request.post(`${origin}/ui/login/passkeys/options`, { form: { ...fields, action: 'add-with-code' } });
    expect(options.status()).toBe(200);
    const { passkeyId, options: creation } = (await options.json()) as { passkeyId: string; options: unknown };
    const other = await pageWithAuthenticator();
    const otherFields = await linkForm(other.page);
    const credential = JSON.stringify(
      await other.page.evaluate(
        `(async (json) => (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json) })).toJSON())(${JSON.stringify(creation)})`,
      ),
    );
    const stolen = await other.page.request.post(`${origin}/ui/login/passkeys`, { form: { ...otherFields, action: 'add-with-code', passkeyId, credential } });
    expect(stolen.status()).toBe(400);
    expect(await stolen.text()).toContain('the link may have expired or been used already');
    const own = await page.request.post(`${origin}/ui/login/passkeys`, { form: { ...fields, action: 'add-with-code', passkeyId, credential } });
    expect(own.status()).toBe(200);
    expect(await own.text()).toContain('Your passkey has been added.');
    await other.context.close();
    await context.close();
  }, 60000);

  it('offers the passkey first after a login name that has one, with "Use password instead"; a passkey is the second factor', async () => {
    // an authenticator-app user: the passkey sign-in needs no one-time code, and its session serves later requests
    const gh = server.running.gh;
    const typist = { id: USERS.typist, orgId: MGMT.org, loginName: 'typist@managed.test' };
    const added = await addOtpFactor(gh, typist);
    if (added.kind !== 'added') throw new Error('typist already has a factor');
    expect((await verifyOtpFactor(gh, typist, codeFor(added.otp.secret), new Date(), async () => undefined)).kind).toBe('verified');
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator();
    await registerPasskey(page, USERS.typist, 'Phone');
    await authorize(config, page);
    await page.fill('input[name="loginName"]', 'typist');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkey?**`);
    expect(await page.textContent('h1')).toBe('Use your passkey');
    expect(await page.locator('input[type="password"]').count()).toBe(0);
    await expect(passkeyButton(page).isVisible()).resolves.toBe(true);
    // "Use password instead" leads to the password step, which still works
    await page.getByRole('link', { name: 'Use password instead' }).click();
    await page.waitForSelector('input[name="password"]');
    await page.goBack();
    await page.waitForURL(`${origin}/ui/login/passkey?**`);

    const { state, nonce } = await authorize(config, page, { prompt: 'login' });
    await page.fill('input[name="loginName"]', 'typist@managed.test');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkey?**`);
    await passkeyButton(page).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.typist, amr: ['user', 'mfa'] });
    // single sign-on: the passkey session meets the authenticator-app requirement
    const again = await authorize(config, page);
    await page.waitForURL(`${rpBase}/callback**`);
    const reused = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: again.state, expectedNonce: again.nonce });
    expect(reused.claims()).toMatchObject({ sub: USERS.typist, amr: ['user', 'mfa'] });
    // account selection offers the passkey session; past max_age, the chosen account signs in with its passkey again
    const chosen = await authorize(config, page, { prompt: 'select_account' });
    await page.getByRole('button', { name: /typist@managed\.test/ }).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const selected = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: chosen.state, expectedNonce: chosen.nonce });
    expect(selected.claims()).toMatchObject({ sub: USERS.typist, amr: ['user', 'mfa'], auth_time: tokens.claims()!.auth_time });
    await page.waitForTimeout(1100); // a later auth_time, in whole seconds
    const stale = await authorize(config, page, { prompt: 'select_account', max_age: '0' });
    await page.getByRole('button', { name: /typist@managed\.test/ }).click();
    await page.waitForURL(`${origin}/ui/login/passkey?**`);
    await passkeyButton(page).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const fresh = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: stale.state, expectedNonce: stale.nonce, maxAge: 0 });
    expect(fresh.claims()).toMatchObject({ sub: USERS.typist, amr: ['user', 'mfa'] });
    expect(fresh.claims()!.auth_time).toBeGreaterThan(tokens.claims()!.auth_time!);
    await context.close();
  }, 60000);

  it('refuses a credential whose sign counter went back (a cloned authenticator) and marks it possibly cloned', async () => {
    const config = await relyingParty();
    const { context, page, authenticator } = await pageWithAuthenticator();
    const passkeyId = await registerPasskey(page, USERS.twin, 'Laptop');
    const { state, nonce } = await authorize(config, page);
    await page.waitForSelector('input[name="loginName"]');
    await passkeyButton(page).click();
    await page.waitForURL(`${rpBase}/callback**`);
    await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });

    // The same key in an authenticator whose counter starts over, as a copy of it would.
    const { cdp, authenticatorId } = authenticator;
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const original = credentials[0]!;
    expect(original.signCount).toBeGreaterThan(0);
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: original.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...original, signCount: 0 } });

    await authorize(config, page, { prompt: 'login' });
    await page.waitForSelector('input[name="loginName"]');
    await passkeyButton(page).click();
    await alertShown(page);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe(REFUSED);
    const row = await server.running.gh.db.selectFrom('passkeys').select('possibly_cloned').where('id', '=', passkeyId).executeTakeFirstOrThrow();
    expect(row.possibly_cloned).toBe(true);
    const events = await server.running.gh.db.selectFrom('events').select('event_type').where('aggregate_id', '=', USERS.twin).execute();
    expect(events.map((e) => e.event_type)).toContain('user.human.passwordless.token.cloned');
    await context.close();
  }, 60000);

  it('a browser without the credential gets the one refusal message and stays on the page', async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator('en-US', { autofill: true });
    const autofillStarted = page.waitForResponse((r) => r.url().endsWith('/ui/login/passkey/options'));
    await authorize(config, page);
    await page.waitForSelector('input[name="loginName"]');
    // the autofill found no passkey: it says nothing, and the button still works
    await autofillStarted;
    await page.waitForTimeout(300);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe('');
    await passkeyButton(page).click();
    await alertShown(page);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe(REFUSED);
    expect(new URL(page.url()).pathname).toBe('/ui/login/login');
    await expect(passkeyButton(page).isEnabled()).resolves.toBe(true);
    await context.close();
  }, 60000);

  it('speaks German: the button, the passkey-first step and the refusal', async () => {
    const config = await relyingParty();
    const { context, page } = await pageWithAuthenticator('de-DE');
    // no credential yet: the refusal in German
    await authorize(config, page, { ui_locales: 'de' });
    await passkeyButton(page, /Passkey/).click();
    await alertShown(page);
    expect((await page.textContent('[role="alert"]'))?.trim()).toBe('Die Anmeldung mit dem Passkey hat nicht geklappt. Versuchen Sie es erneut oder melden Sie sich anders an.');

    await registerPasskey(page, USERS.deutsch, 'Schlüssel');
    const { state } = await authorize(config, page, { ui_locales: 'de' });
    await page.waitForSelector('input[name="loginName"]');
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await passkeyButton(page, /Passkey/).textContent()).toBe('Mit Passkey anmelden');
    await screenshot(page, 'passkey-button-de.png');
    await page.fill('input[name="loginName"]', 'deutsch');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkey?**`);
    expect(await page.textContent('h1')).toBe('Passkey verwenden');
    await expect(page.getByRole('link', { name: 'Stattdessen Passwort verwenden' }).isVisible()).resolves.toBe(true);
    await passkeyButton(page, /Passkey/).click();
    await page.waitForURL(`${rpBase}/callback**`);
    expect(new URL(page.url()).searchParams.get('state')).toBe(state);
    // the self-service page of the signed-in user, in the browser's language
    await page.goto(`${origin}/ui/login/passkeys`);
    await page.waitForSelector('h1');
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.textContent('main')).toContain('Schlüssel');
    await screenshot(page, 'passkeys-page-de.png');
    await context.close();
  }, 60000);

  it('the self-service page: sign in first, add a passkey with a name, sign in with it, remove it', async () => {
    const { context, page } = await pageWithAuthenticator();
    await page.goto(`${origin}/ui/login/passkeys`);
    // nobody signed in: the login UI first, then back
    await page.fill('input[name="loginName"]', 'selfie');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkeys**`);
    expect(await page.textContent('h1')).toBe('Your passkeys');
    await expect(page.getByText('You have no passkeys yet.').isVisible()).resolves.toBe(true);

    await page.fill('input[name="name"]', 'Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.selfie}&done=added`);
    expect((await page.textContent('[role="status"]'))?.trim()).toBe('Your passkey has been added. From now on you can sign in with it.');
    const item = page.locator('ul.accounts li');
    await expect(item.count()).resolves.toBe(1);
    expect(await item.locator('strong').textContent()).toBe('Work laptop');
    expect(await item.locator('dd').nth(1).textContent()).toBe('never');
    await screenshot(page, 'passkeys-page.png');
    // a reload shows the page again: nothing is posted twice
    await page.reload();
    await expect(item.count()).resolves.toBe(1);

    // the new passkey signs in, and the page shows when it was last used
    const config = await relyingParty();
    const { state, nonce } = await authorize(config, page, { prompt: 'login' });
    await passkeyButton(page).click();
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: USERS.selfie, amr: ['user', 'mfa'] });
    await page.goto(`${origin}/ui/login/passkeys`);
    expect(await item.locator('dd').nth(1).textContent()).not.toBe('never');

    // removing asks first; Cancel keeps the passkey
    await page.getByRole('link', { name: 'Remove passkey' }).click();
    expect(await page.textContent('h1')).toBe('Remove this passkey?');
    expect(await page.textContent('main')).toContain('Once “Work laptop” is removed, it no longer signs you in.');
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.selfie}`);
    await expect(item.count()).resolves.toBe(1);
    await page.getByRole('link', { name: 'Remove passkey' }).click();
    await screenshot(page, 'passkey-remove.png');
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.selfie}&done=removed`);
    expect((await page.textContent('[role="status"]'))?.trim()).toBe('The passkey has been removed. It no longer signs you in.');
    await expect(page.getByText('You have no passkeys yet.').isVisible()).resolves.toBe(true);
    expect((await rest(server, 'POST', `/v2/users/${USERS.selfie}/passkeys/_search`, admin, {})).json['result'] ?? []).toEqual([]);

    // "Done" goes back where the user came from when that is an application of the user's organization, else to a page of its own
    await page.goto(`${origin}/ui/login/passkeys?returnTo=${encodeURIComponent(`${rpBase}/settings`)}`);
    expect(await page.getAttribute('a:text-is("Done")', 'href')).toBe(`${rpBase}/settings`);
    await page.goto(`${origin}/ui/login/passkeys?returnTo=${encodeURIComponent('https://evil.test/')}`);
    expect(await page.getAttribute('a:text-is("Done")', 'href')).toBe('/ui/login/passkeys/done');
    await page.getByRole('link', { name: 'Done' }).click();
    expect(await page.textContent('h1')).toBe('All done');
    // "Sign out" ends the browser's sessions
    await page.goto(`${origin}/ui/login/passkeys`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/ui/login/logged-out`);
    await page.goto(`${origin}/ui/login/passkeys`);
    await page.waitForSelector('input[name="loginName"]'); // nobody signed in: the sign-in first
    await context.close();
  }, 60000);

  it('the self-service page asks for a fresh sign-in (10 minutes) before adding or removing, and which account when several', async () => {
    const { context, page } = await pageWithAuthenticator('de-DE');
    await page.goto(`${origin}/ui/login/passkeys?ui_locales=de`);
    await page.fill('input[name="loginName"]', 'later');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkeys**`);
    expect(await page.textContent('h1')).toBe('Ihre Passkeys');
    await expect(page.getByRole('button', { name: 'Passkey hinzufügen' }).isVisible()).resolves.toBe(true);

    // the sign-in is 11 minutes old: no adding, but "Sign in again" (prompt=login, the name prefilled)
    await server.running.gh.db
      .updateTable('user_sessions')
      .set({ auth_time: new Date(Date.now() - 11 * 60_000) })
      .where('user_id', '=', USERS.later)
      .execute();
    await page.goto(`${origin}/ui/login/passkeys`); // German from Accept-Language now
    expect(await page.getByRole('button', { name: 'Passkey hinzufügen' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Erneut anmelden' }).click();
    expect(await page.inputValue('input[name="loginName"]')).toBe('later@managed.test');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.later}**`);
    await expect(page.getByRole('button', { name: 'Passkey hinzufügen' }).isVisible()).resolves.toBe(true);

    // a link naming a user not signed in here: a sign-in first (no login name given away), then that user's page
    await page.goto(`${origin}/ui/login/passkeys?userID=${USERS.selfie}`);
    expect(await page.inputValue('input[name="loginName"]')).toBe('');
    await page.fill('input[name="loginName"]', 'selfie');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.selfie}**`);
    expect(await page.textContent('.identity strong')).toBe('selfie@managed.test');
    // two users signed in: the page asks which one
    await page.goto(`${origin}/ui/login/passkeys`);
    await page.getByRole('link', { name: /later@managed\.test/ }).click();
    await page.waitForURL(`${origin}/ui/login/passkeys?userID=${USERS.later}`);
    expect(await page.textContent('.identity strong')).toBe('later@managed.test');
    await context.close();
  }, 60000);

  it('answers bad requests to the new routes with 4xx pages, never 500', async () => {
    const post = (route: string, body: string) =>
      fetch(`${origin}${route}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
    expect((await post('/ui/login/passkey/options', 'authRequestID=1&csrfToken=x')).status).toBe(400);
    expect((await post('/ui/login/passkey', 'authRequestID=1&csrfToken=x&challengeId=1&credential=%7B')).status).toBe(400);
    expect((await post('/ui/login/passkeys', 'userID=1&action=remove&passkeyId=1')).status).toBe(403);
    expect((await post('/ui/login/passkeys/options', 'userID=1&name=x')).status).toBe(403);
    expect((await fetch(`${origin}/ui/login/passkeys/options`)).status).toBe(405);
    expect((await post('/ui/login/passkeys/options', `userID=${USERS.linked}&codeID=1&code=x&action=add-with-code&name=x`)).status).toBe(403);
    // a registration link's forms with a valid CSRF token, and bad fields: 400, nothing started
    const { context, page } = await pageWithAuthenticator();
    await page.goto(`${origin}/ui/login/passkeys?userID=${USERS.linked}&codeID=1&code=x`);
    const csrfToken = await page.inputValue('input[name="csrfToken"]');
    const linkForm = { csrfToken, userID: USERS.linked, codeID: '1', code: 'x', action: 'add-with-code', name: 'x' };
    for (const form of [
      linkForm,
      { ...linkForm, userID: '999999999999999999' },
      { ...linkForm, userID: 'not a number' },
      { ...linkForm, code: 'x'.repeat(10_000) },
      { ...linkForm, name: '' },
      { ...linkForm, codeID: '' },
    ]) {
      const options = await page.request.post(`${origin}/ui/login/passkeys/options`, { form });
      expect([form, options.status(), await options.json()]).toEqual([form, 400, { error: 'refused' }]);
      const finished = await page.request.post(`${origin}/ui/login/passkeys`, { form: { ...form, passkeyId: '1', credential: '{"id":1}' } });
      expect([form, finished.status()]).toEqual([form, 400]);
    }
    // codes are guessed like passwords: the address is throttled after 20 failures a minute (docs/security.md 10.11)
    let throttled: Awaited<ReturnType<typeof page.request.post>> | undefined;
    for (let i = 0; i < 25 && throttled === undefined; i++) {
      const tried = await page.request.post(`${origin}/ui/login/passkeys/options`, { form: { ...linkForm, code: `WRONG${i}` } });
      if (tried.status() === 429) throttled = tried;
      else expect(tried.status()).toBe(400);
    }
    expect(throttled?.headers()['retry-after']).toMatch(/^\d+$/);
    const pending = await server.running.gh.db.selectFrom('passkeys').select('id').where('user_id', '=', USERS.linked).where('state', '=', 'pending').execute();
    expect(pending).toEqual([]);
    await context.close();
    const script = await fetch(`${origin}/ui/login/assets/passkey.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });
});
