/**
 * The login UI's findings of the outside security review (rules in docs/security.md), each
 * reproduced as the attack through the real server: a cookie-jar browser drives /oauth/v2/authorize
 * and the login pages, openid-client is the relying party. Every test here failed on the code
 * before the fix.
 */
import * as client from 'openid-client';
import { loadConfig } from '../../src/config/index.ts';
import { FailureThrottle } from '../../src/domain/sign-in/failure-throttle.ts';
import { randomToken } from '../../src/domain/kernel/ids.ts';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { rememberLoginName } from '../../src/store/auth-requests.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { whileHashingQueueFull } from '../support/hashing.ts';
import { codeFor, wrongCode } from '../support/totp.ts';
import {
  addHuman,
  ALICE,
  authRequest,
  Browser,
  callbackOf,
  csrfIn,
  normalized,
  REDIRECT_URI,
  signIn,
  startLoginServer,
  stepOf,
  submit,
  type LoginServer,
  type Reply,
} from './support.ts';

let ls: LoginServer;
let rp: client.Configuration;

beforeAll(async () => {
  // the lockout attacks fail far more than 20 times a minute; the throttle has its own server below
  ls = await startLoginServer({ GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' });
  rp = await client.discovery(new URL(ls.server.url), 'shop-web', undefined, client.ClientSecretBasic(SECRETS.web), { execute: [client.allowInsecureRequests] });
});
afterAll(() => ls?.stop());

/** A browser that has no cookie yet (as a first visit). */
function cookieless(server: LoginServer = ls): Browser {
  const b = new Browser(server.base);
  b.cookies.clear();
  return b;
}

/** The browser follows the relying party's authorization URL: returns the authorization request id. */
async function authorize(b: Browser, extra: Record<string, string> = {}): Promise<{ reply: Reply; requestId: string | undefined; state: string; nonce: string }> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(rp, { redirect_uri: REDIRECT_URI, scope: 'openid', state, nonce, ...extra });
  const reply = await b.get(`${url.pathname}${url.search}`);
  const requestId = /authRequestID=(\d+)/.exec(reply.location ?? '')?.[1];
  return { reply, requestId, state, nonce };
}

/** A whole sign-in in this browser, the code redeemed by openid-client: the tokens. */
async function signInAt(b: Browser, loginName: string, password: string) {
  const { requestId, state, nonce } = await authorize(b);
  expect(requestId).toBeDefined();
  expect(await signIn(b, requestId!, loginName, password)).toMatchObject({ status: 303, location: callbackOf(requestId!) });
  const callback = await b.get(callbackOf(requestId!));
  expect(callback.status).toBe(303);
  return client.authorizationCodeGrant(rp, new URL(callback.headers.get('location')!), { expectedState: state, expectedNonce: nonce });
}

/** What prompt=none answers this browser: a code, or the error. */
async function silently(b: Browser): Promise<{ code: string | null; error: string | null }> {
  const { reply } = await authorize(b, { prompt: 'none' });
  expect(reply.status).toBe(303);
  const answer = new URL(reply.headers.get('location')!).searchParams;
  return { code: answer.get('code'), error: answer.get('error') };
}

/**
 * For each test of the describe around: the default limit of failures per address (20 a minute) on a
 * fresh throttle whose one-minute window begins with the test, so that no window ends in the middle
 * of it; the lockout suites' own limit comes back afterwards. (Waiting for the next minute instead
 * took up to 15 s per test.)
 */
function withDefaultThrottle(): void {
  let saved: FailureThrottle | undefined;
  beforeEach(() => {
    saved = ls.gh.throttle;
    ls.gh.throttle = new FailureThrottle(loadConfig({}).failedAuthRateLimit, { phaseMs: (Date.now() - 1000) % 60_000 });
  });
  afterEach(() => {
    if (saved) ls.gh.throttle = saved;
  });
}

async function userRow(id: string) {
  return ls.gh.db.selectFrom('users').select(['failed_attempts', 'locked_until']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function activeSessionsOf(userId: string) {
  return ls.gh.db.selectFrom('user_sessions').select(['id', 'browser_hash']).where('user_id', '=', userId).where('ended_at', 'is', null).execute();
}

describe('second-factor lockout (docs/security.md 10.3)', () => {
  // docs/security.md 10.3: re-entering the right password after 9 wrong codes no longer buys 9 more
  it('keeps counting wrong codes across a re-entered password: the 10th wrong code locks', async () => {
    const userId = await addHuman(ls.gh, { userName: 'otto', password: 'Otto-pass-12' });
    const user = { id: userId, orgId: IDS.org, loginName: 'otto@acme.test' };
    const added = await addOtpFactor(ls.gh, user);
    if (added.kind !== 'added') throw new Error('factor exists');
    const past = new Date(Date.now() - 60_000);
    expect((await verifyOtpFactor(ls.gh, user, codeFor(added.otp.secret, past.getTime()), past, async () => undefined)).kind).toBe('verified');
    const wrong = wrongCode(added.otp.secret);

    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    expect(await signIn(b, request.id, 'otto', 'Otto-pass-12')).toMatchObject({ status: 303, location: stepOf('otp', request.id) });
    for (let i = 1; i < 10; i++) expect((await submit(b, 'otp', request.id, { code: wrong })).text).toContain('The code is incorrect or has expired.');
    expect((await userRow(userId)).failed_attempts).toBe(9);

    // the dodge: the attacker knows the password and enters it again
    expect(await submit(b, 'password', request.id, { password: 'Otto-pass-12' })).toMatchObject({ status: 303, location: stepOf('otp', request.id) });
    expect((await userRow(userId)).failed_attempts).toBe(9);
    const tenth = await submit(b, 'otp', request.id, { code: wrong });
    expect(tenth.text).toContain('Too many failed sign-in attempts: this account is locked. Try again in 15 minutes.');
    expect((await userRow(userId)).locked_until!.getTime()).toBeGreaterThan(Date.now());

    // neither the right code nor the password helps now, in this request or a new one
    expect((await submit(b, 'otp', request.id, { code: codeFor(added.otp.secret) })).text).toContain('this account is locked');
    const fresh = await authRequest(ls.gh, b);
    expect((await signIn(b, fresh.id, 'otto', 'Otto-pass-12')).text).toContain('this account is locked');
    expect(await activeSessionsOf(userId)).toEqual([]);
  });

  // docs/security.md 10.3: only the completed sign-in ends the run of failures
  it('resets the count only when the sign-in is complete', async () => {
    const userId = await addHuman(ls.gh, { userName: 'paula', password: 'Paula-pass-12' });
    const user = { id: userId, orgId: IDS.org, loginName: 'paula@acme.test' };
    const added = await addOtpFactor(ls.gh, user);
    if (added.kind !== 'added') throw new Error('factor exists');
    const past = new Date(Date.now() - 60_000);
    await verifyOtpFactor(ls.gh, user, codeFor(added.otp.secret, past.getTime()), past, async () => undefined);

    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    await submit(b, 'login', request.id, { loginName: 'paula' });
    for (let i = 0; i < 3; i++) await submit(b, 'password', request.id, { password: 'wrong' });
    expect(await submit(b, 'password', request.id, { password: 'Paula-pass-12' })).toMatchObject({ status: 303, location: stepOf('otp', request.id) });
    expect((await userRow(userId)).failed_attempts).toBe(3); // a right password alone does not reset
    expect(await submit(b, 'otp', request.id, { code: codeFor(added.otp.secret) })).toMatchObject({ status: 303, location: callbackOf(request.id) });
    expect((await userRow(userId)).failed_attempts).toBe(0);
  });

  // docs/security.md 10.3: guesses sent in parallel do not all pass the lock check first
  it('counts parallel wrong codes one after another: 15 at once check at most 10 codes', async () => {
    const userId = await addHuman(ls.gh, { userName: 'quentin', password: 'Quentin-pass-12' });
    const user = { id: userId, orgId: IDS.org, loginName: 'quentin@acme.test' };
    const added = await addOtpFactor(ls.gh, user);
    if (added.kind !== 'added') throw new Error('factor exists');
    const past = new Date(Date.now() - 60_000);
    await verifyOtpFactor(ls.gh, user, codeFor(added.otp.secret, past.getTime()), past, async () => undefined);
    const wrong = wrongCode(added.otp.secret);

    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    expect(await signIn(b, request.id, 'quentin', 'Quentin-pass-12')).toMatchObject({ status: 303, location: stepOf('otp', request.id) });
    const answers = await Promise.all(Array.from({ length: 15 }, () => submit(b, 'otp', request.id, { code: wrong })));
    const incorrect = answers.filter((a) => a.text.includes('The code is incorrect or has expired.')).length;
    const locked = answers.filter((a) => a.text.includes('this account is locked')).length;
    expect(incorrect).toBe(9); // the 10th locks, and every guess after it meets the lock unchecked
    expect(locked).toBe(6);
    expect((await userRow(userId)).locked_until!.getTime()).toBeGreaterThan(Date.now());
  });
});

describe('browser cookie and CSRF (docs/security.md 10.7)', () => {
  // docs/security.md 10.7: a value the server never issued is ignored and replaced
  it('ignores and replaces a planted cookie value it never issued; the planter rides nothing', async () => {
    const planted = randomToken(32); // the shape the old code accepted
    const victim = new Browser(ls.base, planted);
    const { reply, requestId } = await authorize(victim);
    expect(reply.location).toBe(stepOf('login', requestId!));
    expect(reply.headers.getSetCookie()).toEqual([expect.stringMatching(/^gh_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Path=\/; /)]);
    expect(victim.browserCookie).not.toBe(planted);

    expect(await signIn(victim, requestId!, 'alice', ALICE.password)).toMatchObject({ status: 303, location: callbackOf(requestId!) });
    expect((await silently(victim)).code).toEqual(expect.any(String));
    // the attacker's copy of the planted value
    const attacker = new Browser(ls.base, planted);
    expect(await silently(attacker)).toEqual({ code: null, error: 'login_required' });
    // and a forged MAC is no better
    const forged = new Browser(ls.base, `${randomToken(32)}.${randomToken(32)}`);
    expect(await silently(forged)).toEqual({ code: null, error: 'login_required' });
  });

  // docs/security.md 10.7: a sign-in moves the browser to a fresh cookie value
  it('gives the browser a fresh cookie at sign-in: an issued value planted before carries nothing after', async () => {
    const attacker = cookieless();
    await authorize(attacker); // the server issues the attacker a value...
    const planted = attacker.browserCookie!;
    const victim = new Browser(ls.base, planted); // ...which the attacker plants in the victim's browser
    const other = await authorize(victim); // a second tab's pending request

    const tokens = await signInAt(victim, 'alice', ALICE.password);
    expect(tokens.claims()!.sub).toBe(IDS.alice);
    expect(victim.browserCookie).not.toBe(planted);
    expect(victim.browserCookie).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);

    expect(await silently(attacker)).toEqual({ code: null, error: 'login_required' });
    expect((await attacker.get(stepOf('login', other.requestId!))).status).toBe(400);
    // the victim keeps the session and the other tab's request under the new value
    expect((await silently(victim)).code).toEqual(expect.any(String));
    expect((await victim.get(stepOf('login', other.requestId!))).status).toBe(200);
  });

  // docs/security.md 10.7: the CSRF token is bound to the browser cookie, not a free double submit
  it('refuses a CSRF field that matches a planted csrf cookie but not the browser cookie', async () => {
    const victim = new Browser(ls.base);
    const request = await authRequest(ls.gh, victim);
    const chosen = randomToken(32);
    victim.cookies.set('gh_csrf', chosen); // planted by the attacker, with the field the attacker's page posts
    const forged = await victim.post('/ui/login/login', { authRequestID: request.id, csrfToken: chosen, loginName: 'mallory' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('The form has expired or was sent from another site.');
    const row = await ls.gh.db.selectFrom('auth_requests').select('login_name').where('id', '=', request.id).executeTakeFirstOrThrow();
    expect(row.login_name).toBeNull();
  });
});

describe('logout (docs/security.md 10.10)', () => {
  async function endSession(b: Browser, params: Record<string, string>): Promise<Reply> {
    return b.get(`/oidc/v1/end_session?${new URLSearchParams(params).toString()}`);
  }

  // docs/security.md 10.10: an attacker's own ID token does not sign the victim out
  it('asks first when the id_token_hint names no session of this browser (the attacker’s own token)', async () => {
    await addHuman(ls.gh, { userName: 'mallory', password: 'Mallory-pass-1' });
    const attackerTokens = await signInAt(new Browser(ls.base), 'mallory', 'Mallory-pass-1');
    const victim = new Browser(ls.base);
    await signInAt(victim, 'alice', ALICE.password);

    const reply = await endSession(victim, { id_token_hint: attackerTokens.id_token! });
    expect(reply.status).toBe(303);
    expect(reply.location).toBe('/ui/login/logout?client_id=shop-web');
    expect((await silently(victim)).code).toEqual(expect.any(String)); // still signed in
    const confirm = await victim.get(reply.location!);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Sign out?');
  });

  // docs/security.md 10.10: an (expired) ID token of the same user from another browser does not either
  it('asks first when the hint’s sid is a session of another browser, even for the same user', async () => {
    const elsewhere = await signInAt(new Browser(ls.base), 'alice', ALICE.password);
    const victim = new Browser(ls.base);
    const own = await signInAt(victim, 'alice', ALICE.password);
    expect(elsewhere.claims()!['sid']).not.toBe(own.claims()!['sid']);
    const now = Math.floor(Date.now() / 1000);
    const { jwt: expired } = await ls.gh.tokens.sign(
      { iss: ls.server.url, sub: IDS.alice, aud: ['shop-web'], azp: 'shop-web', iat: now - 13 * 3600, exp: now - 3600, auth_time: now - 13 * 3600, sid: elsewhere.claims()!['sid'] },
      'JWT',
    );
    for (const hint of [elsewhere.id_token!, expired]) {
      const reply = await endSession(victim, { id_token_hint: hint });
      expect(reply.location).toBe('/ui/login/logout?client_id=shop-web');
    }
    expect((await silently(victim)).code).toEqual(expect.any(String));

    // the browser's own ID token still signs it out at once
    const done = await endSession(victim, { id_token_hint: own.id_token! });
    expect(done.location).toBe('/ui/login/logged-out');
    expect(await silently(victim)).toEqual({ code: null, error: 'login_required' });
  });
});

describe('lockout without enumeration (docs/security.md 10.11)', () => {
  // docs/security.md 10.11: the lock is told only to the right password
  it('answers a locked account like a wrong password unless the password is right', async () => {
    const userId = await addHuman(ls.gh, { userName: 'quinn', password: 'Quinn-pass-12' });
    const known = new Browser(ls.base);
    const unknown = new Browser(ls.base);
    const knownRequest = await authRequest(ls.gh, known);
    const unknownRequest = await authRequest(ls.gh, unknown);
    await submit(known, 'login', knownRequest.id, { loginName: 'quinn@acme.test' });
    await submit(unknown, 'login', unknownRequest.id, { loginName: 'ghost@acme.test' });
    const answer = async (b: Browser, requestId: string, loginName: string, password: string) => {
      const page = await b.get(stepOf('password', requestId));
      const csrf = csrfIn(page.text);
      const reply = await b.post('/ui/login/password', { authRequestID: requestId, csrfToken: csrf, password });
      return { status: reply.status, text: normalized(reply.text, requestId, csrf).replaceAll(loginName, '{name}') };
    };
    for (let i = 1; i <= 12; i++) {
      const fromKnown = await answer(known, knownRequest.id, 'quinn@acme.test', `wrong-${i}`);
      const fromUnknown = await answer(unknown, unknownRequest.id, 'ghost@acme.test', `wrong-${i}`);
      expect(fromKnown).toEqual(fromUnknown);
      expect(fromKnown.text).toContain('The login name or password is incorrect.');
    }
    expect((await userRow(userId)).locked_until!.getTime()).toBeGreaterThan(Date.now());
    const right = await answer(known, knownRequest.id, 'quinn@acme.test', 'Quinn-pass-12');
    expect(right.status).toBe(400);
    expect(right.text).toContain('Too many failed sign-in attempts: this account is locked. Try again in 15 minutes.');
  });

  // docs/security.md 10.11: a full hashing queue is a 503 page with Retry-After, never a 500
  it('answers 503 with Retry-After when the password-hashing queue is full', async () => {
    // A full queue is a state the test holds (test/support/hashing.ts), whatever the machine's load.
    const busy = await whileHashingQueueFull(async () => {
      const b = new Browser(ls.base);
      for (let attempt = 0; attempt < 10; attempt++) {
        const request = await authRequest(ls.gh, b);
        const csrf = csrfIn((await b.get(stepOf('login', request.id))).text);
        await rememberLoginName(ls.gh.db, request.id, `nobody-${attempt}`, null);
        const reply = await b.post('/ui/login/password', { authRequestID: request.id, csrfToken: csrf, password: 'wrong-password' });
        expect([400, 503]).toContain(reply.status);
        if (reply.status === 503) return reply;
      }
      return undefined;
    });
    expect(busy).toBeDefined();
    expect(busy!.headers.get('retry-after')).toBe('1');
    expect(busy!.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(busy!.text).toContain('<code>temporarily_unavailable</code>');
    expect(busy!.text).toContain('The service is temporarily unavailable. Please try again in a moment.');
  }, 60_000);

  describe('with the default limit of 20 failures a minute per address', () => {
    withDefaultThrottle();

    // docs/security.md 10.11: the 21st failure of a minute is refused before any hash, right password or not
    it('refuses further sign-ins from the address with 429, Retry-After and a page saying to wait', async () => {
      const failedBefore = (await userRow(IDS.alice)).failed_attempts;
      const b = new Browser(ls.base);
      const request = await authRequest(ls.gh, b);
      await submit(b, 'login', request.id, { loginName: 'nobody@acme.test' });
      for (let i = 0; i < 20; i++) expect((await submit(b, 'password', request.id, { password: `wrong-${i}` })).status).toBe(400);

      const alice = await authRequest(ls.gh, b);
      const refused = await signIn(b, alice.id, 'alice', ALICE.password);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.text).toContain(`Too many failed sign-in attempts from your network. Please wait ${retryAfter} second`);
      expect(refused.text).toContain('name="password"'); // the password page, ready for later
      // nothing was checked or counted, and nobody signed in
      const row = await ls.gh.db.selectFrom('auth_requests').select(['failed_passwords', 'session_id']).where('id', '=', alice.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ failed_passwords: 0, session_id: null });
      expect((await userRow(IDS.alice)).failed_attempts).toBe(failedBefore);
    }, 60_000);
  });

  describe('guesses sent in parallel', () => {
    withDefaultThrottle();

    // docs/security.md 10.11: an attempt counts from the moment it is taken, not once it failed
    it('checks at most 20 of 30 wrong passwords sent at once; the rest are 429 unchecked', async () => {
      const b = new Browser(ls.base);
      const request = await authRequest(ls.gh, b);
      await submit(b, 'login', request.id, { loginName: 'nobody@acme.test' });
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => submit(b, 'password', request.id, { password: `wrong-${i}` })));
      expect(answers.filter((a) => a.status === 400)).toHaveLength(20);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(10);
      const row = await ls.gh.db.selectFrom('auth_requests').select('failed_passwords').where('id', '=', request.id).executeTakeFirstOrThrow();
      expect(row.failed_passwords).toBe(20);
    }, 60_000);
  });
});

describe('registration (docs/security.md 10.12)', () => {
  const valid = { email: 'new@example.test', givenName: 'New', familyName: 'Comer', password: 'Fresh-Start-42', passwordConfirmation: 'Fresh-Start-42' };

  // docs/security.md 10.12: a newcomer cannot make another organization's short login name ambiguous
  it('refuses a user name another organization’s user has, with the same answer as any taken name', async () => {
    await addHuman(ls.gh, { userName: 'olga', password: 'Olga-pass-12', orgId: IDS.otherOrg });
    const before = new Browser(ls.base);
    const first = await authRequest(ls.gh, before);
    expect(await signIn(before, first.id, 'olga', 'Olga-pass-12')).toMatchObject({ status: 303, location: callbackOf(first.id) });

    const register = async (userName: string) => {
      const b = new Browser(ls.base);
      const request = await authRequest(ls.gh, b, { prompt: ['create'] });
      const page = await b.get(stepOf('register', request.id));
      const csrf = csrfIn(page.text);
      const reply = await b.post('/ui/login/register', { authRequestID: request.id, csrfToken: csrf, ...valid, userName });
      return { status: reply.status, text: normalized(reply.text, request.id, csrf).replaceAll(userName, '{name}') };
    };
    const shadow = await register('Olga');
    const taken = await register('Alice'); // taken in the default organization itself
    expect(shadow.status).toBe(400);
    expect(shadow.text).toContain('This user name is taken. Please choose another one.');
    expect(shadow).toEqual(taken);
    expect(await ls.gh.db.selectFrom('users').select('id').where('org_id', '=', IDS.org).where('user_name', '=', 'Olga').execute()).toEqual([]);

    const after = new Browser(ls.base);
    const second = await authRequest(ls.gh, after);
    expect(await signIn(after, second.id, 'olga', 'Olga-pass-12')).toMatchObject({ status: 303, location: callbackOf(second.id) });
  });

  describe('probing user names', () => {
    withDefaultThrottle();

    // docs/security.md 10.11-10.12: "taken" answers name users instance-wide, so they are throttled
    it('counts "taken" answers with failed sign-ins: the 21st probe of a minute is 429', async () => {
      const b = new Browser(ls.base);
      const request = await authRequest(ls.gh, b, { prompt: ['create'] });
      const csrf = csrfIn((await b.get(stepOf('register', request.id))).text);
      const probe = (userName: string) => b.post('/ui/login/register', { authRequestID: request.id, csrfToken: csrf, ...valid, userName });
      for (let i = 0; i < 20; i++) expect((await probe('alice')).status).toBe(400);
      const throttled = await probe('alice');
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(throttled.text).toContain('Please wait');
      expect(throttled.text).not.toContain('This user name is taken');
    }, 60_000);
  });

  describe('switched off in the bootstrap file', () => {
    let closed: LoginServer;
    beforeAll(async () => {
      const document = fixture().document as { orgs: Array<Record<string, unknown>> };
      document.orgs[0]!['allowRegister'] = false;
      closed = await startLoginServer({}, document);
    });
    afterAll(() => closed?.stop());

    // docs/security.md 10.12: allowRegister: false closes prompt=create and the register page
    it('refuses prompt=create and the register form clearly, and hides the register link', async () => {
      const b = cookieless(closed);
      const url = new URL(`${closed.server.url}/oauth/v2/authorize`);
      url.search = new URLSearchParams({ client_id: 'shop-web', redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid', prompt: 'create', state: 's' }).toString();
      const start = await b.get(`${url.pathname}${url.search}`);
      expect(start.location).toMatch(/^\/ui\/login\/register\?authRequestID=\d+$/);
      const page = await b.get(start.location!);
      expect(page.status).toBe(403);
      expect(page.text).toContain('Creating an account is not available here. Sign in with an existing account.');
      expect(page.text).not.toContain('name="userName"');
      const requestId = /authRequestID=(\d+)/.exec(start.location!)![1]!;
      expect(page.text).toContain(`<a href="${stepOf('login', requestId)}">I already have an account</a>`);

      const login = await b.get(stepOf('login', requestId));
      expect(login.status).toBe(200);
      expect(login.text).not.toContain('Create an account');
      const posted = await b.post('/ui/login/register', { authRequestID: requestId, csrfToken: csrfIn(login.text), ...valid, userName: 'intruder' });
      expect(posted.status).toBe(403);
      expect(await closed.gh.db.selectFrom('users').select('id').where('user_name', '=', 'intruder').execute()).toEqual([]);

      // the default elsewhere: the fixture's default organization leaves it out, so it is open
      const open = new Browser(ls.base);
      const openRequest = await authRequest(ls.gh, open);
      expect((await open.get(stepOf('login', openRequest.id))).text).toContain(`<a href="${stepOf('register', openRequest.id)}">Create an account</a>`);
    });
  });
});
