/**
 * "Forgot your password?" over HTTP like a browser without JavaScript (docs/login-ui.md#forgot-your-password):
 * the request page, the mail through the server's worker to a real SMTP server, the link's page
 * and every way it refuses. The whole way in Chromium, with old sessions ended, is in
 * test/browser/password-reset.test.ts.
 */
import { requestResetLink } from '../../src/domain/credentials/password-reset.ts';
import { Mailbox, nthMailTo, partOf, mailsTo } from '../mail/mailbox.ts';
import { addHuman, authRequest, Browser, csrfIn, normalized, signIn, startLoginServer, stepOf, submit, type LoginServer } from './support.ts';

const mailbox = new Mailbox();
let login: LoginServer;

beforeAll(async () => {
  await mailbox.start(0);
  login = await startLoginServer({ GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_SMTP_FROM: 'noreply@acme.test' });
});

afterAll(async () => {
  await login?.stop();
  await mailbox.stop();
});

/** A human with a password and (unless `verified: false`) a verified address `<name>@example.test`. */
async function person(userName: string, options: { verified?: boolean; preferredLanguage?: string } = {}): Promise<string> {
  const id = await addHuman(login.gh, { userName, password: 'Old-Horse-1', givenName: 'Pat' });
  await login.gh.db
    .updateTable('users')
    .set({ email_verified: options.verified ?? true, preferred_language: options.preferredLanguage ?? null })
    .where('id', '=', id)
    .execute();
  return id;
}

/** A request whose login name step named `loginName`, and the browser on it. */
async function atPasswordStep(loginName: string): Promise<{ browser: Browser; requestId: string }> {
  const browser = new Browser(login.base);
  const request = await authRequest(login.gh, browser);
  const named = await submit(browser, 'login', request.id, { loginName });
  expect(named.status).toBe(303);
  return { browser, requestId: request.id };
}

/** The reset mail's link, as a path of the server. */
function linkOf(raw: string): { path: string; code: string; text: string } {
  const text = partOf(raw, 'text/plain') ?? '';
  const link = /^https?:\/\/\S+\/ui\/login\/set-password\?\S+$/m.exec(text)?.[0];
  const code = /: ([A-Z0-9]{6})$/m.exec(text)?.[1];
  if (link === undefined || code === undefined) throw new Error(`no reset link in:\n${text}`);
  const url = new URL(link);
  return { path: `${url.pathname}${url.search}`, code, text };
}

async function attempts(userId: string): Promise<number | undefined> {
  const row = await login.gh.db.selectFrom('password_reset_codes').select('attempts').where('user_id', '=', userId).executeTakeFirst();
  return row?.attempts;
}

/** Opens the link's page and posts its form with these passwords. */
async function setPassword(browser: Browser, path: string, password: string, confirmation = password, change: Record<string, string> = {}) {
  const form = await browser.get(path);
  expect(form.status).toBe(200);
  const fields = Object.fromEntries(new URL(path, login.base).searchParams);
  return browser.post(path, { ...fields, csrfToken: csrfIn(form.text), password, passwordConfirmation: confirmation, ...change });
}

test('the password step links to the request page, which names the account and the application', async () => {
  await person('rita');
  const { browser, requestId } = await atPasswordStep('rita');
  const password = await browser.get(stepOf('password', requestId));
  expect(password.text).toContain(`<a href="/ui/login/password-reset?authRequestID=${requestId}">Forgot your password?</a>`);
  const page = await browser.get(stepOf('password-reset', requestId));
  expect(page.status).toBe(200);
  expect(page.text).toContain('<h1 id="title">Reset your password</h1>');
  expect(page.text).toContain('<p class="application">Sign in to web</p>');
  expect(page.text).toContain('<strong>rita</strong>');
  expect(page.text).toContain(`<form method="post" action="/ui/login/password-reset?authRequestID=${requestId}">`);

  browser.acceptLanguage = 'de';
  const german = await browser.get(stepOf('password-reset', requestId));
  expect(german.text).toContain('Passwort zurücksetzen');
  expect(german.text).toContain('Anmelden bei web');
});

test('an unknown name, an unverified address and a known user get the same answer; only the last gets mail', async () => {
  await person('uma', { verified: false });
  const known = await person('kim', { preferredLanguage: 'de' });
  const answers: string[] = [];
  for (const name of ['nobody-here', 'uma', 'kim']) {
    const { browser, requestId } = await atPasswordStep(name);
    const sent = await submit(browser, 'password-reset', requestId, {});
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`${stepOf('password-reset', requestId)}&sent`);
    const page = await browser.get(sent.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Check your email');
    answers.push(page.text.replaceAll(requestId, '{request}'));
  }
  expect(answers[1]).toBe(answers[0]);
  expect(answers[2]).toBe(answers[0]);

  const mail = await nthMailTo(mailbox, 'kim@example.test', 1);
  expect(mail.headers.get('subject')).toContain('=?'); // German subject, encoded
  const { path, text } = linkOf(mail.raw);
  expect(text).toContain('Hallo Pat,');
  expect(path).toMatch(new RegExp(`^/ui/login/set-password\\?userID=${known}&code=[A-Z0-9]{6}&codeID=[\\w-]{22}&authRequestID=\\d+$`));
  expect(mailsTo(mailbox.messages, 'uma@example.test')).toHaveLength(0);
});

test('the link sets a new password: policy and confirmation first, then back to the sign-in with a notice', async () => {
  const userId = await person('lena');
  const { browser, requestId } = await atPasswordStep('lena');
  await submit(browser, 'password-reset', requestId, {});
  const { path } = linkOf((await nthMailTo(mailbox, 'lena@example.test', 1)).raw);

  const form = await browser.get(path);
  expect(form.text).toContain('<h1 id="title">Set a new password</h1>');
  expect(form.text).toContain('Sign in to web'); // the sign-in is pending in this browser
  expect(form.text).toContain('<li>at least 8 characters</li>');
  expect(form.text).toContain('name="passwordConfirmation"');
  expect(form.text).toContain(`action="${path.replaceAll('&', '&amp;')}"`);

  const mismatch = await setPassword(browser, path, 'New-Horse-2', 'New-Horse-3');
  expect(mismatch.status).toBe(400);
  expect(mismatch.text).toContain('The passwords do not match.');
  const weak = await setPassword(browser, path, 'short');
  expect(weak.status).toBe(400);
  expect(weak.text).toContain('The password does not meet the policy. It still needs: at least 8 characters;');
  expect(await attempts(userId)).toBe(0); // nothing was tried

  const done = await setPassword(browser, path, 'New-Horse-2');
  expect(done.status).toBe(303);
  expect(done.location).toBe(`${stepOf('password', requestId)}&notice=password-changed`);
  const notice = await browser.get(done.location!);
  expect(notice.text).toContain('<div class="notice" role="status"><p>Your password has been changed. Sign in with your new password.</p></div>');
  // any other word is no notice
  expect((await browser.get(`${stepOf('password', requestId)}&notice=%3Cb%3Ehi`)).text).not.toContain('class="notice"');

  const old = new Browser(login.base);
  expect((await signIn(old, (await authRequest(login.gh, old)).id, 'lena', 'Old-Horse-1')).status).toBe(400);
  const fresh = new Browser(login.base);
  const request = await authRequest(login.gh, fresh);
  expect((await signIn(fresh, request.id, 'lena', 'New-Horse-2')).status).toBe(303);

  // the link is used
  const again = await setPassword(browser, path, 'Other-Horse-4');
  expect(again.status).toBe(400);
  expect(again.text).toContain('This link is not valid');
});

test('a link opened in another browser ends on the password-changed page', async () => {
  await person('otto');
  const { browser, requestId } = await atPasswordStep('otto');
  await submit(browser, 'password-reset', requestId, {});
  const { path } = linkOf((await nthMailTo(mailbox, 'otto@example.test', 1)).raw);
  const elsewhere = new Browser(login.base);
  elsewhere.acceptLanguage = 'de';
  const form = await elsewhere.get(path);
  expect(form.text).not.toContain('class="application"'); // no sign-in of this browser
  const done = await setPassword(elsewhere, path, 'Neues-Pferd-5');
  expect(done.status).toBe(303);
  expect(done.location).toBe('/ui/login/password-changed?ui_locales=de');
  const changed = await elsewhere.get(done.location!);
  expect(changed.text).toContain('Passwort geändert');
});

test('a forged id checks nothing; a wrong code with the id counts; an expired link says so; a bad link is 400', async () => {
  const userId = await person('fred');
  const { browser, requestId } = await atPasswordStep('fred');
  await submit(browser, 'password-reset', requestId, {});
  const { path, code } = linkOf((await nthMailTo(mailbox, 'fred@example.test', 1)).raw);
  const wrong = code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ';

  const forged = await setPassword(browser, path, 'New-Horse-2', 'New-Horse-2', { codeID: 'AAAAAAAAAAAAAAAAAAAAAA' });
  expect(forged.status).toBe(400);
  expect(forged.text).toContain('This link is not valid');
  expect(await attempts(userId)).toBe(0); // a stranger cannot void the code

  const guessed = await setPassword(browser, path, 'New-Horse-2', 'New-Horse-2', { code: wrong });
  expect(guessed.status).toBe(400);
  expect(await attempts(userId)).toBe(1);

  // the right code still works after that
  expect((await setPassword(browser, path, 'New-Horse-2')).status).toBe(303);

  // an expired code (issued two hours ago)
  const late = await person('lars');
  const past = new Date(Date.now() - 2 * 3600_000);
  expect(await requestResetLink(login.gh.db, { instanceId: login.gh.instanceId, externalUrl: login.gh.config.externalUrl, linkKey: login.gh.masterKey.derive('password reset link') }, late, undefined, past)).toEqual({ kind: 'mailed' });
  const expired = linkOf((await nthMailTo(mailbox, 'lars@example.test', 1)).raw);
  const answer = await setPassword(new Browser(login.base), expired.path, 'New-Horse-2');
  expect(answer.status).toBe(400);
  expect(answer.text).toContain('This link has expired.');

  const incomplete = await new Browser(login.base).get('/ui/login/set-password?userID=1');
  expect(incomplete.status).toBe(400);
  expect(incomplete.text).toContain('This link is not valid');
});

test('the forms need their CSRF token', async () => {
  await person('cora');
  const { browser, requestId } = await atPasswordStep('cora');
  const forged = await browser.post(stepOf('password-reset', requestId), { authRequestID: requestId, csrfToken: 'x' });
  expect(forged.status).toBe(403);
  const setForged = await browser.post('/ui/login/set-password?userID=1&code=AAAAAA&codeID=x', { password: 'New-Horse-2', passwordConfirmation: 'New-Horse-2' });
  expect(setForged.status).toBe(403);
});

test('the same page, byte for byte, for an unknown and a known name', async () => {
  await person('bea');
  const pages: string[] = [];
  for (const name of ['bea', 'not-bea']) {
    const { browser, requestId } = await atPasswordStep(name);
    const page = await browser.get(stepOf('password-reset', requestId));
    pages.push(normalized(page.text.replace(name, '{name}'), requestId, csrfIn(page.text)));
  }
  expect(pages[1]).toBe(pages[0]);
});
