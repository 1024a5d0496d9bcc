/**
 * Account selection with several sessions in one browser (prompt, max_age) and registration
 * (prompt=create): the visible password policy, field errors, a taken user name, and the new user
 * continuing the sign-in.
 */
import { verifySecret } from '../../src/domain/kernel/crypto.ts';
import { IDS } from '../support/fixtures.ts';
import {
  addHuman,
  ALICE,
  authRequest,
  Browser,
  callbackOf,
  csrfIn,
  signIn,
  startLoginServer,
  stepOf,
  submit,
  type LoginServer,
} from './support.ts';

let ls: LoginServer;
beforeAll(async () => {
  ls = await startLoginServer();
  await addHuman(ls.gh, { userName: 'hank', password: 'Hank-pass-1', givenName: 'Hank', familyName: 'Hill' });
});
afterAll(() => ls?.stop());

async function sessionsOf(b: Browser) {
  return ls.gh.db.selectFrom('user_sessions').selectAll().where('browser_hash', '=', b.hash).where('ended_at', 'is', null).execute();
}

async function requestRow(id: string) {
  return ls.gh.db.selectFrom('auth_requests').select(['user_id', 'session_id']).where('id', '=', id).executeTakeFirstOrThrow();
}

describe('account selection', () => {
  let b: Browser;
  beforeAll(async () => {
    b = new Browser(ls.base);
    for (const [name, password] of [
      ['alice', ALICE.password],
      ['hank@acme.test', 'Hank-pass-1'],
    ] as const) {
      const request = await authRequest(ls.gh, b);
      expect((await signIn(b, request.id, name, password)).status).toBe(303);
    }
    expect(await sessionsOf(b)).toHaveLength(2);
  });

  it('lists the browser’s sessions with display and login names, and "use another account"', async () => {
    const request = await authRequest(ls.gh, b, { prompt: ['select_account'] });
    const page = await b.get(stepOf('accounts', request.id));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="title">Choose an account</h1>');
    expect(page.text).toContain('<span class="name">Alice Example</span><span class="login">alice@acme.test</span>');
    expect(page.text).toContain('<span class="name">Hank Hill</span><span class="login">hank@acme.test</span>');
    expect(page.text).toContain(`<a href="/ui/login/login?authRequestID=${request.id}">Use another account</a>`);
    const sessions = await sessionsOf(b);
    for (const session of sessions) expect(page.text).toContain(`name="sessionID" value="${session.id}"`);
  });

  it('answers the request with the chosen session', async () => {
    const hank = (await sessionsOf(b)).find((s) => s.user_id !== IDS.alice)!;
    const request = await authRequest(ls.gh, b, { prompt: ['select_account'] });
    const reply = await submit(b, 'accounts', request.id, { sessionID: hank.id });
    expect(reply).toMatchObject({ status: 303, location: callbackOf(request.id) });
    expect(await requestRow(request.id)).toEqual({ user_id: hank.user_id, session_id: hank.id });
  });

  it('sends the chosen user to the password step when prompt=login asks for a fresh login', async () => {
    const alice = (await sessionsOf(b)).find((s) => s.user_id === IDS.alice)!;
    const request = await authRequest(ls.gh, b, { prompt: ['login'] });
    const chosen = await submit(b, 'accounts', request.id, { sessionID: alice.id });
    expect(chosen).toMatchObject({ status: 303, location: stepOf('password', request.id) });
    const page = await b.get(stepOf('password', request.id));
    expect(page.text).toContain('Signing in as <strong>alice@acme.test</strong>');
    expect(await submit(b, 'password', request.id, { password: ALICE.password })).toMatchObject({ status: 303, location: callbackOf(request.id) });
    const after = (await sessionsOf(b)).find((s) => s.user_id === IDS.alice)!;
    expect(after.id).toBe(alice.id); // the same session, authenticated again
    expect(after.auth_time.getTime()).toBeGreaterThan(alice.auth_time.getTime());
    expect(await requestRow(request.id)).toEqual({ user_id: IDS.alice, session_id: alice.id });
  });

  it('sends the chosen user to the password step when the session is older than max_age', async () => {
    const alice = (await sessionsOf(b)).find((s) => s.user_id === IDS.alice)!;
    await ls.gh.db.updateTable('user_sessions').set({ auth_time: new Date(Date.now() - 120_000) }).where('id', '=', alice.id).execute();
    const stale = await authRequest(ls.gh, b, { maxAge: 60 });
    expect(await submit(b, 'accounts', stale.id, { sessionID: alice.id })).toMatchObject({ status: 303, location: stepOf('password', stale.id) });
    const recent = await authRequest(ls.gh, b, { maxAge: 600 });
    expect(await submit(b, 'accounts', recent.id, { sessionID: alice.id })).toMatchObject({ status: 303, location: callbackOf(recent.id) });
  });

  it('sends the chosen user to the password step when the session predates an authenticator app', async () => {
    const alice = (await sessionsOf(b)).find((s) => s.user_id === IDS.alice)!;
    await ls.gh.db
      .insertInto('otp_factors')
      .values({ user_id: IDS.alice, secret: ls.gh.masterKey.encrypt('JBSWY3DPEHPK3PXP'), state: 'ready', created_at: new Date(), changed_at: new Date() })
      .execute();
    try {
      const request = await authRequest(ls.gh, b);
      expect(await submit(b, 'accounts', request.id, { sessionID: alice.id })).toMatchObject({ status: 303, location: stepOf('password', request.id) });
    } finally {
      await ls.gh.db.deleteFrom('otp_factors').where('user_id', '=', IDS.alice).execute();
    }
  });

  it('asks again when the chosen session is not one of this browser’s', async () => {
    const other = new Browser(ls.base);
    const theirs = await authRequest(ls.gh, other);
    await signIn(other, theirs.id, 'alice', ALICE.password);
    const foreign = (await sessionsOf(other))[0]!;
    const request = await authRequest(ls.gh, b);
    const reply = await submit(b, 'accounts', request.id, { sessionID: foreign.id });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('That account is no longer signed in. Please choose again.');
    expect(await requestRow(request.id)).toEqual({ user_id: null, session_id: null });
  });

  it('goes to the login name step when the browser has no session', async () => {
    const fresh = new Browser(ls.base);
    const request = await authRequest(ls.gh, fresh);
    expect(await fresh.get(stepOf('accounts', request.id))).toMatchObject({ status: 303, location: stepOf('login', request.id) });
  });

  it('offers the signed-in accounts from the login name step', async () => {
    const request = await authRequest(ls.gh, b);
    const page = await b.get(stepOf('login', request.id));
    expect(page.text).toContain(`<a href="/ui/login/accounts?authRequestID=${request.id}">Choose a signed-in account</a>`);
  });
});

describe('registration', () => {
  const valid = { userName: 'newbie', email: 'newbie@example.test', givenName: 'New', familyName: 'Bie', password: 'Fresh-Start-42', passwordConfirmation: 'Fresh-Start-42' };

  it('shows the form with the password policy stated next to the password field', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'] });
    const page = await b.get(stepOf('register', request.id));
    expect(page.status).toBe(200);
    for (const name of ['userName', 'email', 'givenName', 'familyName', 'password', 'passwordConfirmation']) {
      expect(page.text).toContain(`<label for="f-${name}">`);
      expect(page.text).toContain(`<input id="f-${name}" name="${name}"`);
    }
    expect(page.text).toContain('<p>The password must contain:</p>');
    for (const rule of ['at least 8 characters', 'an uppercase letter', 'a lowercase letter', 'a digit', 'a symbol, for example ! ? # -']) {
      expect(page.text).toContain(`<li>${rule}</li>`);
    }
    expect(page.text).toMatch(/<input id="f-password" name="password" type="password" autocomplete="new-password" required maxlength="256" aria-describedby="f-password-hint"/);
  });

  it('creates the user in the default organization and continues the sign-in as that user', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'], uiLocales: ['de'] });
    const reply = await submit(b, 'register', request.id, valid);
    expect(reply).toMatchObject({ status: 303, location: callbackOf(request.id) });

    const user = await ls.gh.db.selectFrom('users').selectAll().where('user_name', '=', 'newbie').executeTakeFirstOrThrow();
    expect(user).toMatchObject({
      org_id: IDS.org,
      kind: 'human',
      state: 'active',
      email: 'newbie@example.test',
      email_verified: false,
      given_name: 'New',
      family_name: 'Bie',
      display_name: 'New Bie',
      preferred_language: 'de',
    });
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    expect(await verifySecret(user.password_hash!, valid.password)).toBe(true);
    const event = await ls.gh.db.selectFrom('events').selectAll().where('aggregate_id', '=', user.id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ event_type: 'user.human.added', aggregate_type: 'user', resource_owner: IDS.org });

    const sessions = await sessionsOf(b);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ user_id: user.id, amr: ['pwd'] });
    expect(await requestRow(request.id)).toEqual({ user_id: user.id, session_id: sessions[0]!.id });

    // and the new user signs in like anyone else
    const again = new Browser(ls.base);
    const next = await authRequest(ls.gh, again);
    expect(await signIn(again, next.id, 'newbie@acme.test', valid.password)).toMatchObject({ status: 303, location: callbackOf(next.id) });
  });

  it.each([
    ['Alice', 'userName', 'This user name is taken. Please choose another one.'],
    ['alice', 'userName', 'This user name is taken. Please choose another one.'],
    ['has space', 'userName', 'Use only letters, digits and . _ - @ +, at most 100 characters.'],
  ])('refuses the user name %p with a field error', async (userName, fieldName, message) => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'] });
    const reply = await submit(b, 'register', request.id, { ...valid, userName });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('<div class="alert" role="alert"><p>Please correct the marked fields.</p></div>');
    expect(reply.text).toContain(`<p class="field-error" id="f-${fieldName}-error">${message}</p>`);
    expect(reply.text).toContain('value="newbie@example.test"'); // what was typed stays
    expect(reply.text).not.toContain(valid.password); // passwords are never echoed
  });

  it.each([
    ['short', 'at least 8 characters'],
    ['alllowercase1!', 'an uppercase letter'],
    ['ALLUPPERCASE1!', 'a lowercase letter'],
    ['No-Digits-Here', 'a digit'],
    ['NoSymbols123', 'a symbol, for example ! ? # -'],
  ])('enforces the password policy: %p lacks %s', async (password, rule) => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'] });
    const reply = await submit(b, 'register', request.id, { ...valid, userName: 'policy-test', password, passwordConfirmation: password });
    expect(reply.status).toBe(400);
    expect(reply.text).toMatch(new RegExp(`<p class="field-error" id="f-password-error">The password does not meet the policy\\. It still needs: [^<]*${rule.replace(/[?!#.-]/g, '\\$&')}`));
    expect(await ls.gh.db.selectFrom('users').select('id').where('user_name', '=', 'policy-test').executeTakeFirst()).toBeUndefined();
  });

  it('reports every missing field, a bad email and a mismatched confirmation', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'] });
    const empty = await submit(b, 'register', request.id, {});
    expect(empty.status).toBe(400);
    for (const name of ['userName', 'email', 'givenName', 'familyName', 'password', 'passwordConfirmation']) {
      expect(empty.text).toContain(`<p class="field-error" id="f-${name}-error">Fill in this field.</p>`);
    }
    const mixed = await submit(b, 'register', request.id, { ...valid, userName: 'mixed', email: 'not-an-email', passwordConfirmation: 'Fresh-Start-43' });
    expect(mixed.text).toContain('<p class="field-error" id="f-email-error">Enter a valid email address.</p>');
    expect(mixed.text).toContain('<p class="field-error" id="f-passwordConfirmation-error">The passwords do not match.</p>');
  });

  it('speaks German when the request asks for it', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { prompt: ['create'], uiLocales: ['de-CH'] });
    const page = await b.get(stepOf('register', request.id));
    expect(page.text).toContain('<html lang="de">');
    expect(page.text).toContain('<h1 id="title">Konto erstellen</h1>');
    expect(page.text).toContain('<li>mindestens 8 Zeichen</li>');
    const reply = await b.post('/ui/login/register', { authRequestID: request.id, csrfToken: csrfIn(page.text), ...valid, userName: 'ALICE' });
    expect(reply.text).toContain('Dieser Benutzername ist bereits vergeben.');
  });
});
