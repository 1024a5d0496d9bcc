/**
 * The email verification page /ui/login/verify-email over HTTP with a cookie jar, and the whole way
 * of a code: issued with `sendCode`, delivered by the server's mail worker to a real SMTP server,
 * its link opened and the form posted.
 */
import { createEmailCode, defaultVerifyEmailTemplate, issueEmailCode } from '../../src/domain/credentials/email-codes.ts';
import { addHuman, Browser, csrfIn, startLoginServer, type LoginServer } from '../login/support.ts';
import { IDS } from '../support/fixtures.ts';
import { Mailbox, partOf } from './mailbox.ts';

const PATH = '/ui/login/verify-email';
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

async function emailVerified(userId: string): Promise<boolean> {
  const row = await login.gh.db.selectFrom('users').select('email_verified').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.email_verified;
}

function linkPath(userId: string, code: string): string {
  return `${PATH}?userID=${encodeURIComponent(userId)}&code=${encodeURIComponent(code)}&orgID=${IDS.org}`;
}

/** Opens the link and posts its form as a browser would (the prefilled fields, `code` possibly changed). */
async function verify(browser: Browser, userId: string, linkCode: string, typed = linkCode) {
  const form = await browser.get(linkPath(userId, linkCode));
  expect(form.status).toBe(200);
  return browser.post(PATH, { csrfToken: csrfIn(form.text), userID: userId, orgID: IDS.org, code: typed });
}

test('GET shows the form prefilled from the link, with a CSRF token, in English or German', async () => {
  const browser = new Browser(login.base);
  const page = await browser.get(linkPath('user-123', 'AB12CD'));
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
  expect(page.text).toContain('<html lang="en">');
  expect(page.text).toContain('Verify your email address');
  expect(page.text).toContain('<input type="hidden" name="userID" value="user-123">');
  expect(page.text).toContain(`<input type="hidden" name="orgID" value="${IDS.org}">`);
  expect(page.text).toMatch(/name="code" type="text" value="AB12CD" autocomplete="one-time-code"/);
  expect(page.text).toContain(`<form method="post" action="${PATH}?userID=user-123&amp;orgID=${IDS.org}">`); // the link's address, without the code
  expect(csrfIn(page.text)).toMatch(/^[A-Za-z0-9_-]{43}$/);

  browser.acceptLanguage = 'de-CH, en;q=0.5';
  const german = await browser.get(linkPath('user-123', 'AB12CD'));
  expect(german.text).toContain('<html lang="de">');
  expect(german.text).toContain('E-Mail-Adresse bestätigen');
  expect(german.text).toContain('Bestätigungscode');

  const bare = await browser.get(PATH); // a link without userID: the field is shown
  expect(bare.status).toBe(200);
  expect(bare.text).toMatch(/name="userID" type="text" value=""/);

  const escaped = await browser.get(`${PATH}?userID=%22%3E%3Cscript%3E&code=%3Cb%3E`);
  expect(escaped.text).not.toContain('<script>');
  expect(escaped.text).toContain('value="&quot;&gt;&lt;script&gt;"');
});

test('a valid code marks the email verified; the code is used up', async () => {
  const userId = await addHuman(login.gh, { userName: 'vera' });
  const code = await createEmailCode(login.gh.db, userId);
  expect(await emailVerified(userId)).toBe(false);
  const browser = new Browser(login.base);
  const done = await verify(browser, userId, code.toLowerCase()); // typed in lower case
  expect(done.status).toBe(200);
  expect(done.text).toContain('Email address verified');
  expect(await emailVerified(userId)).toBe(true);
  const again = await verify(browser, userId, code);
  expect(again.status).toBe(400);
  expect(again.text).toContain('The code is incorrect or no longer valid.');
});

test('a wrong code shows the error and leaves the email unverified; an unknown user gets the same page', async () => {
  const userId = await addHuman(login.gh, { userName: 'wanda' });
  const code = await createEmailCode(login.gh.db, userId);
  const browser = new Browser(login.base);
  const wrong = await verify(browser, userId, code, code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ');
  expect(wrong.status).toBe(400);
  expect(wrong.text).toContain('The code is incorrect or no longer valid.');
  expect(wrong.text).toContain('aria-invalid="true"');
  expect(wrong.text).toContain(`<input type="hidden" name="userID" value="${userId}">`);
  expect(await emailVerified(userId)).toBe(false);

  const unknown = await verify(browser, 'no-such-user', 'ZZZZZZ');
  expect(unknown.status).toBe(400);
  expect(unknown.text.replaceAll('no-such-user', userId)).toBe(wrong.text);

  browser.acceptLanguage = 'de';
  const german = await verify(browser, userId, 'ZZZZZZ');
  expect(german.text).toContain('Der Code ist falsch oder nicht mehr gültig.');

  // The right code still works after a few wrong tries.
  browser.acceptLanguage = undefined;
  expect((await verify(browser, userId, code)).status).toBe(200);
  expect(await emailVerified(userId)).toBe(true);
});

test('an expired code says so', async () => {
  const userId = await addHuman(login.gh, { userName: 'ed' });
  const code = await createEmailCode(login.gh.db, userId, new Date(Date.now() - 2 * 3600_000));
  const reply = await verify(new Browser(login.base), userId, code);
  expect(reply.status).toBe(400);
  expect(reply.text).toContain('The code has expired.');
  expect(await emailVerified(userId)).toBe(false);
});

test('a POST without the CSRF token, or with another browser\'s, is refused with 403', async () => {
  const userId = await addHuman(login.gh, { userName: 'carl' });
  const code = await createEmailCode(login.gh.db, userId);
  const browser = new Browser(login.base);
  await browser.get(linkPath(userId, code));
  const missing = await browser.post(PATH, { userID: userId, code });
  expect(missing.status).toBe(403);
  expect(missing.text).toContain('The form has expired or was sent from another site.');

  const other = new Browser(login.base);
  const otherPage = await other.get(linkPath(userId, code));
  const forged = await browser.post(PATH, { csrfToken: csrfIn(otherPage.text), userID: userId, code });
  expect(forged.status).toBe(403);

  const noCookie = new Browser(login.base);
  expect((await noCookie.post(PATH, { csrfToken: csrfIn(otherPage.text), userID: userId, code })).status).toBe(403);
  expect(await emailVerified(userId)).toBe(false);

  expect((await browser.get(PATH, {}, 'PUT')).status).toBe(405);
});

test('the mailed link leads to the page: issue with sendCode, delivered by SMTP, opened, verified', async () => {
  const userId = await addHuman(login.gh, { userName: 'mia' });
  await login.gh.db.updateTable('users').set({ preferred_language: 'de' }).where('id', '=', userId).execute();
  const before = mailbox.messages.length;
  const { outboxId } = await issueEmailCode(
    login.gh.db,
    { id: userId, instanceId: login.gh.instanceId, orgId: IDS.org, email: 'mia@example.test', preferredLanguage: 'de' },
    { kind: 'send', urlTemplate: defaultVerifyEmailTemplate(login.gh.config.externalUrl) },
    { externalUrl: login.gh.config.externalUrl },
  );
  login.server.running.mail.kick();
  const messages = await mailbox.waitFor(before + 1);
  const received = messages[before]!;
  expect(received.to).toEqual(['mia@example.test']);
  expect(received.headers.get('message-id')).toBe(`<${outboxId}@127.0.0.1>`);
  const text = partOf(received.raw, 'text/plain')!;
  const html = partOf(received.raw, 'text/html')!;
  const link = /https?:\/\/\S+\/ui\/login\/verify-email\?\S+/.exec(text)?.[0];
  expect(link).toBeDefined();
  expect(html).toContain('/ui/login/verify-email?');
  const url = new URL(link!);
  expect(url.origin).toBe(login.gh.config.externalUrl);
  expect(url.searchParams.get('userID')).toBe(userId);

  const browser = new Browser(login.base);
  browser.acceptLanguage = 'de';
  const page = await browser.get(`${url.pathname}${url.search}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`value="${url.searchParams.get('code')}"`);
  const done = await browser.post(PATH, { csrfToken: csrfIn(page.text), userID: userId, orgID: IDS.org, code: url.searchParams.get('code')! });
  expect(done.status).toBe(200);
  expect(done.text).toContain('E-Mail-Adresse bestätigt');
  expect(await emailVerified(userId)).toBe(true);
  // docs/security.md 10.2: once sent, the row keeps recipient, subject and times, not the code
  const sentRow = () => login.gh.db.selectFrom('outbox').selectAll().where('id', '=', outboxId!).executeTakeFirstOrThrow();
  for (let tries = 0; (await sentRow()).sent_at === null && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
  const row = await sentRow();
  expect(row).toMatchObject({ recipient: 'mia@example.test', subject: 'Bestätige deine E-Mail-Adresse', text_body: '', html_body: '' });
  expect(row.sent_at).not.toBeNull();
});
