/**
 * Login name → password → callback (docs/decisions.md#sign-in): sessions recorded, login names with
 * and without the domain, no user enumeration (unknown user and wrong password answer byte for byte
 * alike), brute-force lockout, inactive users, CSRF, and requests that are unknown, expired or of
 * another browser.
 */
import { sql } from 'kysely';
import { IDS } from '../support/fixtures.ts';
import { verifySecret } from '../../src/domain/kernel/crypto.ts';
import { LOCKOUT_SECONDS, LOCKOUT_THRESHOLD } from '../../src/domain/sign-in/lockout.ts';
import {
  addHuman,
  ALICE,
  authRequest,
  Browser,
  callbackOf,
  csrfIn,
  normalized,
  signIn,
  startLoginServer,
  stepOf,
  submit,
  type LoginServer,
  type Reply,
} from './support.ts';

let ls: LoginServer;
beforeAll(async () => {
  // more than the 20 failures a minute per address this suite makes on purpose (docs/security.md 10.11; security.test.ts tests the limit)
  ls = await startLoginServer({ GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' });
});
afterAll(() => ls?.stop());

function browser(): Browser {
  return new Browser(ls.base);
}

async function userRow(id: string) {
  return ls.gh.db.selectFrom('users').select(['failed_attempts', 'locked_until', 'state']).where('id', '=', id).executeTakeFirstOrThrow();
}

describe('login name and password', () => {
  it('shows the login name step prefilled from login_hint, with a CSRF field bound to the browser cookie', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b, { loginHint: 'alice@acme.test' });
    const page = await b.get(stepOf('login', request.id));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<html lang="en">');
    expect(page.text).toMatch(/<label for="f-loginName">Login name<\/label>/);
    expect(page.text).toMatch(/<input id="f-loginName" name="loginName" type="text" value="alice@acme.test" autocomplete="username"/);
    expect(page.text).toContain(`name="authRequestID" value="${request.id}"`);
    // docs/security.md 10.7: no CSRF cookie of its own; the token is an HMAC of the browser cookie
    expect(page.headers.getSetCookie()).toEqual([]);
    expect(csrfIn(page.text)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfIn(page.text)).not.toContain(b.browserCookie!.split('.')[0]!);
  });

  it('signs alice in: 303 to the callback, a session with amr pwd bound to the request', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    const named = await submit(b, 'login', request.id, { loginName: 'alice' });
    expect(named).toMatchObject({ status: 303, location: stepOf('password', request.id) });
    const passwordPage = await b.get(stepOf('password', request.id));
    expect(passwordPage.status).toBe(200);
    expect(passwordPage.text).toContain('Signing in as <strong>alice</strong>');
    expect(passwordPage.text).toMatch(/<input id="f-password" name="password" type="password" autocomplete="current-password"/);

    const done = await b.post('/ui/login/password', { authRequestID: request.id, csrfToken: csrfIn(passwordPage.text), password: ALICE.password });
    expect(done).toMatchObject({ status: 303, location: callbackOf(request.id) });

    const sessions = await ls.gh.db.selectFrom('user_sessions').selectAll().where('browser_hash', '=', b.hash).execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ user_id: IDS.alice, amr: ['pwd'], ended_at: null });
    const row = await ls.gh.db.selectFrom('auth_requests').select(['user_id', 'session_id']).where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ user_id: IDS.alice, session_id: sessions[0]!.id });
  });

  it.each(['alice@acme.test', 'ALICE@Acme.Test', 'Alice', '  alice  '])('accepts the login name %p', async (loginName) => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    expect(await signIn(b, request.id, loginName, ALICE.password)).toMatchObject({ status: 303, location: callbackOf(request.id) });
  });

  it('accepts a bare user name only when exactly one human user has it', async () => {
    await addHuman(ls.gh, { userName: 'dora', password: 'Dora-pass-1', orgId: IDS.org });
    await addHuman(ls.gh, { userName: 'dora', password: 'Dora-pass-2', orgId: IDS.otherOrg });
    const b = browser();
    const ambiguous = await authRequest(ls.gh, b);
    expect((await signIn(b, ambiguous.id, 'dora', 'Dora-pass-1')).status).toBe(400);
    const exact = await authRequest(ls.gh, b);
    expect(await signIn(b, exact.id, 'dora@other.test', 'Dora-pass-2')).toMatchObject({ status: 303, location: callbackOf(exact.id) });
  });

  it('asks again for an empty login name, marking the field', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    const reply = await submit(b, 'login', request.id, { loginName: '   ' });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('<div class="alert" role="alert"><p>Please correct the marked fields.</p></div>');
    expect(reply.text).toMatch(/aria-describedby="f-loginName-hint f-loginName-error" aria-invalid="true"/);
    expect(reply.text).toContain('<p class="field-error" id="f-loginName-error">Fill in this field.</p>');
  });

  it('sends the password step back to the login name step when no name was given', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    expect(await b.get(stepOf('password', request.id))).toMatchObject({ status: 303, location: stepOf('login', request.id) });
  });
});

describe('no user enumeration', () => {
  /** The password step's answer after the login name step, normalized for byte comparison. */
  async function attempt(loginName: string, password: string): Promise<{ named: Reply; page: Reply; answer: Reply; normalized: string; normalizedPage: string }> {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    const named = await submit(b, 'login', request.id, { loginName });
    const page = await b.get(stepOf('password', request.id));
    const csrf = csrfIn(page.text);
    const answer = await b.post('/ui/login/password', { authRequestID: request.id, csrfToken: csrf, password });
    const normal = (text: string) => normalized(text, request.id, csrf).replaceAll(loginName, '{name}');
    return { named, page, answer, normalized: normal(answer.text), normalizedPage: normal(page.text) };
  }

  it('answers an unknown user exactly like a wrong password', async () => {
    await addHuman(ls.gh, { userName: 'erin', password: 'Erin-pass-1' });
    const wrong = await attempt('erin@acme.test', 'not-the-password');
    const unknown = await attempt('nobody@acme.test', 'not-the-password');
    for (const r of [wrong, unknown]) {
      expect(r.named.status).toBe(303);
      expect(r.page.status).toBe(200);
      expect(r.answer.status).toBe(400);
      expect(r.answer.text).toContain('The login name or password is incorrect.');
    }
    expect(unknown.normalized).toBe(wrong.normalized);
    expect(unknown.normalizedPage).toBe(wrong.normalizedPage);
    expect(unknown.named.location!.replace(/\d+$/, '')).toBe(wrong.named.location!.replace(/\d+$/, ''));
    const headerNames = (r: Reply) => [...r.headers.keys()].filter((k) => k !== 'date' && k !== 'x-request-id' && k !== 'content-length').sort();
    expect(headerNames(unknown.answer)).toEqual(headerNames(wrong.answer));
    expect(unknown.answer.headers.get('content-security-policy')).toBe(wrong.answer.headers.get('content-security-policy'));
  });

  it('spends comparable time on an unknown user and on a wrong password (argon2 either way)', async () => {
    await addHuman(ls.gh, { userName: 'ivan', password: 'Ivan-pass-1' });
    const timed = async (loginName: string) => {
      const b = browser();
      const request = await authRequest(ls.gh, b);
      await submit(b, 'login', request.id, { loginName });
      const page = await b.get(stepOf('password', request.id));
      const started = performance.now();
      await b.post('/ui/login/password', { authRequestID: request.id, csrfToken: csrfIn(page.text), password: 'wrong-password' });
      return performance.now() - started;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await timed('ivan'));
      unknown.push(await timed('nobody-at-all'));
    }
    // Loose bounds: both include one argon2id verification (tens of milliseconds).
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.4);
    expect(median(known)).toBeGreaterThan(median(unknown) * 0.4);
  });

  it('refuses an inactive user with the same answer, even with the right password', async () => {
    await addHuman(ls.gh, { userName: 'gina', password: 'Gina-pass-1', state: 'inactive' });
    const inactive = await attempt('gina@acme.test', 'Gina-pass-1');
    const unknown = await attempt('nobody@acme.test', 'Gina-pass-1');
    expect(inactive.answer.status).toBe(400);
    expect(inactive.normalized).toBe(unknown.normalized);
  });
});

describe('brute-force lockout', () => {
  it(`locks a user after ${LOCKOUT_THRESHOLD} failed passwords for ${LOCKOUT_SECONDS / 60} minutes, and only then says so`, async () => {
    expect([LOCKOUT_THRESHOLD, LOCKOUT_SECONDS]).toEqual([10, 900]);
    const frank = await addHuman(ls.gh, { userName: 'frank', password: 'Frank-pass-1' });
    const b = browser();
    const request = await authRequest(ls.gh, b);
    await submit(b, 'login', request.id, { loginName: 'frank' });
    for (let i = 1; i < LOCKOUT_THRESHOLD; i++) {
      const reply = await submit(b, 'password', request.id, { password: `wrong-${i}` });
      expect(reply.status).toBe(400);
      expect(reply.text).toContain('The login name or password is incorrect.');
      expect(reply.text).not.toContain('locked');
    }
    expect((await userRow(frank)).failed_attempts).toBe(LOCKOUT_THRESHOLD - 1);

    // docs/security.md 10.11: the failure that locks is answered like any other; only the right password learns of the lock
    const tenth = await submit(b, 'password', request.id, { password: 'wrong-10' });
    expect(tenth.status).toBe(400);
    expect(tenth.text).toContain('The login name or password is incorrect.');
    expect(tenth.text).not.toContain('locked');
    const locked = await userRow(frank);
    expect(locked.failed_attempts).toBe(0);
    expect(locked.locked_until!.getTime()).toBeGreaterThan(Date.now() + (LOCKOUT_SECONDS - 60) * 1000);
    const event = await ls.gh.db.selectFrom('events').selectAll().where('aggregate_id', '=', frank).where('event_type', '=', 'user.locked').executeTakeFirst();
    expect(event).toMatchObject({ resource_owner: IDS.org, aggregate_type: 'user' });

    // Locked: a wrong password is answered as before; the right one is refused with the lock message, and no session.
    const wrongWhileLocked = await submit(b, 'password', request.id, { password: 'wrong-11' });
    expect(wrongWhileLocked.text).toContain('The login name or password is incorrect.');
    const right = await submit(b, 'password', request.id, { password: 'Frank-pass-1' });
    expect(right.status).toBe(400);
    expect(right.text).toContain('Too many failed sign-in attempts: this account is locked. Try again in 15 minutes.');
    expect(await ls.gh.db.selectFrom('user_sessions').select('id').where('user_id', '=', frank).execute()).toEqual([]);

    // The lock expires: the right password signs in and clears the counters.
    await ls.gh.db.updateTable('users').set({ locked_until: new Date(Date.now() - 1000), failed_attempts: 4 }).where('id', '=', frank).execute();
    expect(await submit(b, 'password', request.id, { password: 'Frank-pass-1' })).toMatchObject({ status: 303, location: callbackOf(request.id) });
    expect(await userRow(frank)).toMatchObject({ failed_attempts: 0, locked_until: null });
  });

  it('a success resets the count of failures', async () => {
    const hugo = await addHuman(ls.gh, { userName: 'hugo', password: 'Hugo-pass-1' });
    const b = browser();
    const request = await authRequest(ls.gh, b);
    await submit(b, 'login', request.id, { loginName: 'hugo@acme.test' });
    for (let i = 0; i < 3; i++) await submit(b, 'password', request.id, { password: 'wrong' });
    expect((await userRow(hugo)).failed_attempts).toBe(3);
    expect((await submit(b, 'password', request.id, { password: 'Hugo-pass-1' })).status).toBe(303);
    expect((await userRow(hugo)).failed_attempts).toBe(0);
    const counted = await ls.gh.db.selectFrom('auth_requests').select('failed_passwords').where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(counted.failed_passwords).toBe(3);
  });

  it('records a sign-in in one transaction: the reset count, the session, the bound request and the renewed browser', async () => {
    const irma = await addHuman(ls.gh, { userName: 'irma', password: 'Irma-pass-1' });
    const b = browser();
    const request = await authRequest(ls.gh, b);
    await submit(b, 'login', request.id, { loginName: 'irma@acme.test' });
    await submit(b, 'password', request.id, { password: 'wrong' });
    const before = b.hash;
    expect((await submit(b, 'password', request.id, { password: 'Irma-pass-1' })).status).toBe(303);
    expect(b.hash).not.toBe(before); // docs/security.md 10.7: a fresh cookie, set after the commit
    const session = await ls.gh.db.selectFrom('user_sessions').select(['id', 'browser_hash']).where('user_id', '=', irma).executeTakeFirstOrThrow();
    expect(session.browser_hash).toBe(b.hash);
    const bound = await ls.gh.db.selectFrom('auth_requests').select(['user_id', 'session_id', 'browser_hash']).where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(bound).toEqual({ user_id: irma, session_id: session.id, browser_hash: b.hash });
    expect(await userRow(irma)).toMatchObject({ failed_attempts: 0 });
    // Every row the sign-in wrote carries the id of the one transaction that wrote it last.
    const { rows } = await sql<{ xmin: string }>`
      select xmin::text from users where id = ${irma}
      union all select xmin::text from user_sessions where id = ${session.id}
      union all select xmin::text from auth_requests where id = ${request.id}`.execute(ls.gh.db);
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((row) => row.xmin)).size).toBe(1);
  });

  it('an unknown login name is never told it is locked', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    await submit(b, 'login', request.id, { loginName: 'ghost@acme.test' });
    for (let i = 0; i <= LOCKOUT_THRESHOLD; i++) {
      const reply = await submit(b, 'password', request.id, { password: 'wrong' });
      expect(reply.text).toContain('The login name or password is incorrect.');
    }
  });
});

describe('CSRF', () => {
  async function preparedRequest(): Promise<{ b: Browser; id: string; csrf: string }> {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    const page = await b.get(stepOf('login', request.id));
    return { b, id: request.id, csrf: csrfIn(page.text) };
  }

  async function loginNameOf(id: string): Promise<string | null> {
    return (await ls.gh.db.selectFrom('auth_requests').select('login_name').where('id', '=', id).executeTakeFirstOrThrow()).login_name;
  }

  it('refuses a form without the token with 403', async () => {
    const { b, id } = await preparedRequest();
    const reply = await b.post('/ui/login/login', { authRequestID: id, loginName: 'alice' });
    expect(reply.status).toBe(403);
    expect(reply.text).toContain('The form has expired or was sent from another site.');
    expect(await loginNameOf(id)).toBeNull();
  });

  it('refuses a token that does not match the cookie with 403', async () => {
    const { b, id, csrf } = await preparedRequest();
    const forged = `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`;
    expect((await b.post('/ui/login/login', { authRequestID: id, csrfToken: forged, loginName: 'alice' })).status).toBe(403);
    expect(await loginNameOf(id)).toBeNull();
  });

  it('refuses the token of another browser with 403', async () => {
    const { b, id } = await preparedRequest();
    const other = await preparedRequest();
    expect((await b.post('/ui/login/login', { authRequestID: id, csrfToken: other.csrf, loginName: 'alice' })).status).toBe(403);
    expect(await loginNameOf(id)).toBeNull();
  });

  it('keeps the token across pages so that other tabs stay valid', async () => {
    const { b, id, csrf } = await preparedRequest();
    const again = await b.get(stepOf('login', id));
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(csrfIn(again.text)).toBe(csrf);
  });
});

describe('requests the login UI cannot use', () => {
  it.each([
    ['an unknown id', async (_b: Browser) => '999999999999999999'],
    ['a malformed id', async (_b: Browser) => 'abc'],
    ['another browser’s request', async (_b: Browser) => (await authRequest(ls.gh, browser())).id],
    [
      'an expired request',
      async (b: Browser) => {
        const request = await authRequest(ls.gh, b);
        await ls.gh.db.updateTable('auth_requests').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', request.id).execute();
        return request.id;
      },
    ],
  ])('shows the error page (400) for %s', async (_name, idFor) => {
    const b = browser();
    const id = await idFor(b);
    for (const step of ['login', 'password', 'accounts', 'register']) {
      const page = await b.get(stepOf(step, id));
      expect(page.status).toBe(400);
      expect(page.text).toContain('This sign-in request is unknown or has expired');
      expect(page.text).toContain('<code>invalid_request</code>');
    }
    const posted = await b.post('/ui/login/login', { authRequestID: id, csrfToken: 'x'.repeat(43), loginName: 'alice' });
    expect(posted.status).toBe(400);
  });

  it('shows the error page for a browser without its cookie', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    b.cookies.clear();
    expect((await b.get(stepOf('login', request.id))).status).toBe(400);
  });

  it('shows the error page once the request has been answered', async () => {
    const b = browser();
    const request = await authRequest(ls.gh, b);
    await ls.gh.db.updateTable('auth_requests').set({ code_hash: 'answered' }).where('id', '=', request.id).execute();
    expect((await b.get(stepOf('login', request.id))).status).toBe(400);
  });

  it('keeps the password verifiable after everything (alice was never locked)', async () => {
    const row = await ls.gh.db.selectFrom('users').select(['password_hash', 'failed_attempts']).where('id', '=', IDS.alice).executeTakeFirstOrThrow();
    expect(await verifySecret(row.password_hash!, ALICE.password)).toBe(true);
  });
});
