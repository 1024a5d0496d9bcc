/**
 * The one-time-password step (docs/decisions.md#sign-in): a user with a verified OTP factor is
 * asked for a code after the password; a valid code finishes with amr pwd, otp, mfa (seen in the ID
 * token of the real token endpoint); wrong and replayed codes are refused and count towards the
 * lockout; the step cannot be reached without the password of the user it asks for.
 */
import { decodeJwt } from 'jose';
import { addOtpFactor, verifyOtpFactor } from '../../src/domain/credentials/otp.ts';
import { LOCKOUT_THRESHOLD } from '../../src/domain/sign-in/lockout.ts';
import { codeFor, wrongCode } from '../support/totp.ts';
import { IDS, SECRETS } from '../support/fixtures.ts';
import { basic, postForm } from '../support/http.ts';
import { addHuman, ALICE, authRequest, Browser, callbackOf, REDIRECT_URI, signIn, stepOf, submit, type LoginServer } from './support.ts';
import { startLoginServer } from './support.ts';

let ls: LoginServer;
let aliceSecret: string;



/** A ready factor, verified two steps in the past so that the current code is still unused. */
async function readyFactor(userId: string, loginName: string): Promise<string> {
  const user = { id: userId, orgId: IDS.org, loginName };
  const added = await addOtpFactor(ls.gh, user);
  if (added.kind !== 'added') throw new Error('factor exists');
  const past = new Date(Date.now() - 60_000);
  const verified = await verifyOtpFactor(ls.gh, user, codeFor(added.otp.secret, past.getTime()), past, async () => undefined);
  if (verified.kind !== 'verified') throw new Error(`not verified: ${verified.kind}`);
  return added.otp.secret;
}

beforeAll(async () => {
  // more than the 20 failures a minute per address this suite makes on purpose (docs/security.md 10.11; security.test.ts tests the limit)
  ls = await startLoginServer({ GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' });
  aliceSecret = await readyFactor(IDS.alice, ALICE.loginName);
});
afterAll(() => ls?.stop());

async function toOtpStep(b: Browser, requestId: string, loginName: string, password: string): Promise<void> {
  const afterPassword = await signIn(b, requestId, loginName, password);
  expect(afterPassword).toMatchObject({ status: 303, location: stepOf('otp', requestId) });
}

describe('the OTP step', () => {
  let acceptedCode: string;

  it('follows a valid password; a valid code finishes with amr pwd, otp, mfa in the ID token', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { nonce: 'n-1' });
    await toOtpStep(b, request.id, ALICE.loginName, ALICE.password);
    const page = await b.get(stepOf('otp', request.id));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Enter your one-time code');
    expect(page.text).toMatch(/<input id="f-code" name="code" type="text" value="" autocomplete="one-time-code"/);
    expect(page.text).toContain(ALICE.loginName);

    acceptedCode = codeFor(aliceSecret);
    const done = await submit(b, 'otp', request.id, { code: acceptedCode });
    expect(done).toMatchObject({ status: 303, location: callbackOf(request.id) });
    const sessions = await ls.gh.db.selectFrom('user_sessions').select(['user_id', 'amr']).where('browser_hash', '=', b.hash).execute();
    expect(sessions).toEqual([{ user_id: IDS.alice, amr: ['pwd', 'otp', 'mfa'] }]);

    const callback = await b.get(callbackOf(request.id));
    expect(callback.status).toBe(303);
    const code = new URL(callback.headers.get('location')!).searchParams.get('code');
    expect(code).toBeTruthy();
    const tokens = await postForm(
      `${ls.server.url}/oauth/v2/token`,
      { grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT_URI },
      { authorization: basic('shop-web', SECRETS.web) },
    );
    expect(tokens.status).toBe(200);
    const claims = decodeJwt(String(tokens.json['id_token']));
    expect(claims['amr']).toEqual(expect.arrayContaining(['pwd', 'otp', 'mfa']));
  });

  it('refuses a right code already used in its time step, saying to wait for the next one; a wrong code is incorrect', async () => {
    // The code of this moment is used once: here, or already by the test before within the same step.
    const code = codeFor(aliceSecret);
    const first = new Browser(ls.base);
    const firstRequest = await authRequest(ls.gh, first);
    await toOtpStep(first, firstRequest.id, ALICE.loginName, ALICE.password);
    // accepted (303), or refused as just used (400) when the test before used it
    expect([303, 400]).toContain((await submit(first, 'otp', firstRequest.id, { code })).status);

    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    await toOtpStep(b, request.id, ALICE.loginName, ALICE.password);
    const replayed = await submit(b, 'otp', request.id, { code });
    expect(replayed.status).toBe(400);
    expect(replayed.text).toContain('This code was just used. Wait for the next code.');
    expect(await ls.gh.db.selectFrom('user_sessions').select('id').where('browser_hash', '=', b.hash).execute()).toEqual([]);
    const wrong = await submit(b, 'otp', request.id, { code: wrongCode(aliceSecret) });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The code is incorrect or has expired.');

    const german = new Browser(ls.base);
    german.acceptLanguage = 'de';
    const germanRequest = await authRequest(ls.gh, german);
    await toOtpStep(german, germanRequest.id, ALICE.loginName, ALICE.password);
    expect((await submit(german, 'otp', germanRequest.id, { code })).text).toContain('Dieser Code wurde gerade verwendet. Warten Sie auf den nächsten Code.');

    const empty = await submit(b, 'otp', request.id, { code: '' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Fill in this field.');
  });

  it('speaks German', async () => {
    const b = new Browser(ls.base);
    b.acceptLanguage = 'de';
    const request = await authRequest(ls.gh, b);
    await toOtpStep(b, request.id, ALICE.loginName, ALICE.password);
    const page = await b.get(stepOf('otp', request.id));
    expect(page.text).toContain('<html lang="de">');
    expect(page.text).toContain('Einmalcode eingeben');
    const refused = await submit(b, 'otp', request.id, { code: wrongCode(aliceSecret) });
    expect(refused.text).toContain('Der Code ist falsch oder abgelaufen.');
  });

  it('a user without a verified factor finishes after the password', async () => {
    const userId = await addHuman(ls.gh, { userName: 'nofactor', password: 'Nofactor-pass-1' });
    await addOtpFactor(ls.gh, { id: userId, orgId: IDS.org, loginName: 'nofactor@acme.test' }); // unverified: does not count
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    expect(await signIn(b, request.id, 'nofactor', 'Nofactor-pass-1')).toMatchObject({ status: 303, location: callbackOf(request.id) });
  });

  it('cannot be reached without the password, nor for another user named afterwards', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    expect(await b.get(stepOf('otp', request.id))).toMatchObject({ status: 303, location: stepOf('login', request.id) });

    const bobId = await addHuman(ls.gh, { userName: 'bob', password: 'Bob-pass-12' });
    const bobSecret = await readyFactor(bobId, 'bob@acme.test');
    await toOtpStep(b, request.id, ALICE.loginName, ALICE.password);
    // alice's password is checked; now the browser names bob and jumps to the code step
    const named = await submit(b, 'login', request.id, { loginName: 'bob' });
    expect(named).toMatchObject({ status: 303, location: stepOf('password', request.id) });
    expect(await b.get(stepOf('otp', request.id))).toMatchObject({ status: 303, location: stepOf('login', request.id) });
    const page = await b.get(stepOf('password', request.id));
    const csrf = /name="csrfToken" value="([^"]+)"/.exec(page.text)![1]!;
    const posted = await b.post('/ui/login/otp', { authRequestID: request.id, csrfToken: csrf, code: codeFor(bobSecret) });
    expect(posted).toMatchObject({ status: 303, location: stepOf('login', request.id) });
    const sessions = await ls.gh.db.selectFrom('user_sessions').select('user_id').where('browser_hash', '=', b.hash).execute();
    expect(sessions).toEqual([]);
  });

  it('refuses the right code of a user deactivated since the password step, like a wrong one', async () => {
    const userId = await addHuman(ls.gh, { userName: 'gina', password: 'Gina-pass-12' });
    const secret = await readyFactor(userId, 'gina@acme.test');
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    await toOtpStep(b, request.id, 'gina', 'Gina-pass-12');
    await ls.gh.db.updateTable('users').set({ state: 'inactive' }).where('id', '=', userId).execute();
    const refused = await submit(b, 'otp', request.id, { code: codeFor(secret) });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('The code is incorrect or has expired.');
    expect(await ls.gh.db.selectFrom('user_sessions').select('id').where('browser_hash', '=', b.hash).execute()).toEqual([]);
  });

  it('refuses a form without a valid CSRF token', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    await toOtpStep(b, request.id, ALICE.loginName, ALICE.password);
    const posted = await b.post('/ui/login/otp', { authRequestID: request.id, csrfToken: 'forged', code: codeFor(aliceSecret) });
    expect(posted.status).toBe(403);
  });

  it(`locks the user after ${LOCKOUT_THRESHOLD} wrong codes, with the lockout message`, async () => {
    const userId = await addHuman(ls.gh, { userName: 'erin', password: 'Erin-pass-12' });
    const secret = await readyFactor(userId, 'erin@acme.test');
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    await toOtpStep(b, request.id, 'erin', 'Erin-pass-12');
    const wrong = wrongCode(secret);
    for (let i = 1; i < LOCKOUT_THRESHOLD; i++) {
      const refused = await submit(b, 'otp', request.id, { code: wrong });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('The code is incorrect or has expired.');
    }
    const locked = await submit(b, 'otp', request.id, { code: wrong });
    expect(locked.status).toBe(400);
    expect(locked.text).toContain('Too many failed sign-in attempts: this account is locked. Try again in 15 minutes.');
    // the right code does not help while locked, and neither does the password step
    const stillLocked = await submit(b, 'otp', request.id, { code: codeFor(secret) });
    expect(stillLocked.text).toContain('this account is locked');
    const password = await submit(b, 'password', request.id, { password: 'Erin-pass-12' });
    expect(password.text).toContain('this account is locked');
    const event = await ls.gh.db.selectFrom('events').select('payload').where('aggregate_id', '=', userId).where('event_type', '=', 'user.locked').executeTakeFirstOrThrow();
    expect(event.payload).toMatchObject({ reason: 'failed_otp_codes' });
  });
});
