/**
 * The mail worker against a real SMTP server (smtp-server) and a real database: delivery with both
 * bodies and a stable Message-ID, SMTP down then back on the same port, two workers on one database,
 * no SMTP configured, a clean stop, and what stays of a sent mail (docs/security.md 10.2).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { newId } from '../../src/domain/kernel/ids.ts';
import { enqueueMail } from '../../src/domain/kernel/outbox.ts';
import { LOGGED_WITHOUT_SMTP, startMailWorker, type MailWorker } from '../../src/mail/worker.ts';
import { openDatabase, type DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { Mailbox, partOf } from './mailbox.ts';

const FROM = 'Gatehouse <noreply@example.test>';

let database: FreshDatabase;
const mailbox = new Mailbox();
const workers: MailWorker[] = [];
const logLines: Record<string, unknown>[] = [];

function logger() {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

function configWith(env: Record<string, string>): Config {
  return loadConfig({ GATEHOUSE_EXTERNAL_URL: 'https://login.example.test', GATEHOUSE_SMTP_FROM: FROM, ...env });
}

/** The workers here poll every 100 ms instead of every second, so "later polls" take a fraction of a second to happen. */
const POLL_MS = 100;
/** Long enough for several polls, even when timers run late on a busy machine. */
const SEVERAL_POLLS_MS = 6 * POLL_MS;

function worker(db: DB, instanceId: string, config: Config): MailWorker {
  const started = startMailWorker({ config, db, log: logger(), instanceId }, { intervalMs: POLL_MS });
  workers.push(started);
  return started;
}

function mail(instanceId: string, n = 1) {
  return {
    instanceId,
    to: `user${n}@example.test`,
    subject: `Verify your email ${n}`,
    text: `Your code is CODE${n}.\nhttps://login.example.test/ui/login/verify-email?code=CODE${n}`,
    html: `<p>Your code is <b>CODE${n}</b>.</p>`,
  };
}

async function row(id: string) {
  return database.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  database = await freshDatabase();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await mailbox.stop();
  mailbox.messages.length = 0;
  await database.db.deleteFrom('outbox').execute();
  logLines.length = 0;
});

afterAll(async () => {
  await database.close();
});

test('a queued message is delivered with text and HTML, From, To, Subject and its Message-ID', async () => {
  await mailbox.start(0);
  const instanceId = newId();
  const w = worker(database.db, instanceId, configWith({ GATEHOUSE_SMTP_URL: mailbox.url }));
  const id = await enqueueMail(database.db, { ...mail(instanceId), subject: 'Bestätigen Sie Ihre E-Mail' });
  w.kick();
  const [received] = await mailbox.waitFor(1);
  expect(received!.from).toBe('noreply@example.test');
  expect(received!.to).toEqual(['user1@example.test']);
  expect(received!.headers.get('from')).toBe(FROM);
  expect(received!.headers.get('to')).toBe('user1@example.test');
  expect(received!.headers.get('subject')).toMatch(/^=\?UTF-8\?/i); // encoded word: the umlaut survives
  expect(received!.raw).not.toContain('Bestätigen');
  expect(received!.headers.get('message-id')).toBe(`<${id}@login.example.test>`);
  expect(received!.headers.get('content-type')).toMatch(/^multipart\/alternative/);
  expect(partOf(received!.raw, 'text/plain')).toContain('Your code is CODE1.\r\nhttps://login.example.test/ui/login/verify-email?code=CODE1');
  expect(partOf(received!.raw, 'text/html')).toContain('<p>Your code is <b>CODE1</b>.</p>');
  await until(async () => (await row(id)).sent_at !== null, 5000, 'sent_at');
  const sent = await row(id);
  expect(sent.last_error).toBeNull();
  expect(sent.attempts).toBe(0);
  // docs/security.md 10.2: a sent mail leaves recipient, subject and times, not its code
  expect(sent).toMatchObject({ recipient: 'user1@example.test', subject: 'Bestätigen Sie Ihre E-Mail', text_body: '', html_body: '' });
  expect(sent.created_at).toBeInstanceOf(Date);
  expect(JSON.stringify(await database.db.selectFrom('outbox').selectAll().execute())).not.toContain('CODE1');
  await new Promise((resolve) => setTimeout(resolve, SEVERAL_POLLS_MS)); // a later poll does not send it again
  expect(mailbox.messages).toHaveLength(1);
});

test('SMTP down: the row waits with attempts and last_error, and goes out when SMTP is back on its port', async () => {
  await mailbox.start(0);
  const url = mailbox.url;
  await mailbox.stop();
  const instanceId = newId();
  const w = worker(database.db, instanceId, configWith({ GATEHOUSE_SMTP_URL: url.replace('smtp://', 'smtp://gatehouse:s3cret-pw@') }));
  const id = await enqueueMail(database.db, mail(instanceId));
  w.kick();
  await until(async () => (await row(id)).attempts >= 1, 10_000, 'a failed attempt');
  const failed = await row(id);
  expect(failed.sent_at).toBeNull();
  expect(failed.last_error).toMatch(/ECONNREFUSED|ECONNECTION/);
  expect(failed.last_error).not.toContain('s3cret-pw');
  expect(failed.last_error!.length).toBeLessThanOrEqual(200);
  expect(failed.next_attempt_at.getTime()).toBeGreaterThan(Date.now());

  const back = Date.now();
  await mailbox.start(Number(new URL(url).port));
  const [received] = await mailbox.waitFor(1, 35_000);
  expect(Date.now() - back).toBeLessThan(31_000);
  expect(received!.headers.get('message-id')).toBe(`<${id}@login.example.test>`);
  await until(async () => (await row(id)).sent_at !== null, 5000, 'sent_at');
}, 60_000);

test('two workers on one database send each row once', async () => {
  await mailbox.start(0);
  const instanceId = newId();
  const config = configWith({ GATEHOUSE_SMTP_URL: mailbox.url });
  // A second process: its own connection pool on the same PostgreSQL database (PGlite: the same one).
  const other = database.databaseUrl ? (await openDatabase({ databaseUrl: database.databaseUrl, dataDir: '' })).db : database.db;
  try {
    const ids: string[] = [];
    for (let n = 0; n < 30; n++) ids.push(await enqueueMail(database.db, mail(instanceId, n)));
    const a = worker(database.db, instanceId, config);
    const b = worker(other, instanceId, config);
    a.kick();
    b.kick();
    await mailbox.waitFor(30);
    await until(async () => {
      const left = await database.db.selectFrom('outbox').select('id').where('sent_at', 'is', null).execute();
      return left.length === 0;
    }, 10_000, 'all rows sent');
    await new Promise((resolve) => setTimeout(resolve, SEVERAL_POLLS_MS));
    const messageIds = mailbox.messages.map((m) => m.headers.get('message-id'));
    expect(messageIds).toHaveLength(30);
    expect(new Set(messageIds).size).toBe(30);
    expect(new Set(messageIds)).toEqual(new Set(ids.map((id) => `<${id}@login.example.test>`)));
  } finally {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    if (other !== database.db) await other.destroy();
  }
});

// docs/decisions.md#mail-delivery and docs/security.md 10.2: without SMTP, the log line is the delivery; the row stays, its code does not
test('without SMTP the message is logged once (text included) and kept in the outbox as delivered to the log, without bodies', async () => {
  const instanceId = newId();
  const w = worker(database.db, instanceId, configWith({}));
  const id = await enqueueMail(database.db, mail(instanceId));
  w.kick();
  const logged = () => logLines.filter((l) => l['outboxId'] === id);
  await until(async () => logged().length > 0, 5000, 'the log line');
  await new Promise((resolve) => setTimeout(resolve, SEVERAL_POLLS_MS)); // more polls
  expect(logged()).toHaveLength(1);
  expect(logged()[0]).toMatchObject({ level: 30, to: 'user1@example.test', subject: 'Verify your email 1' });
  expect(String(logged()[0]!['text'])).toContain('CODE1');
  const kept = await row(id);
  expect(kept).toMatchObject({ recipient: 'user1@example.test', subject: 'Verify your email 1', text_body: '', html_body: '', last_error: LOGGED_WITHOUT_SMTP });
  expect(kept.sent_at).not.toBeNull();

  // SMTP configured later (a restart): the logged message was delivered already, and is not mailed.
  await w.stop();
  await mailbox.start(0);
  worker(database.db, instanceId, configWith({ GATEHOUSE_SMTP_URL: mailbox.url })).kick();
  await new Promise((resolve) => setTimeout(resolve, SEVERAL_POLLS_MS));
  expect(mailbox.messages).toHaveLength(0);
});

// docs/security.md 10.2: sent rows are pruned after 7 days
test('sent rows older than 7 days are pruned; newer, unsent and other instances\' rows stay', async () => {
  await mailbox.start(0);
  const instanceId = newId();
  const days = (n: number) => new Date(Date.now() - n * 86400_000);
  const later = new Date(Date.now() + 3600_000); // not due: the worker leaves it alone
  const insert = async (instance: string, sentAt: Date | null, createdAt: Date) => {
    const id = await enqueueMail(database.db, mail(instance));
    await database.db.updateTable('outbox').set({ sent_at: sentAt, created_at: createdAt, next_attempt_at: later }).where('id', '=', id).execute();
    return id;
  };
  const old = await insert(instanceId, days(8), days(8));
  const recent = await insert(instanceId, days(6), days(6));
  const unsent = await insert(instanceId, null, days(9));
  const foreign = await insert(newId(), days(8), days(8));
  worker(database.db, instanceId, configWith({ GATEHOUSE_SMTP_URL: mailbox.url })).kick();
  await until(async () => (await database.db.selectFrom('outbox').select('id').where('id', '=', old).executeTakeFirst()) === undefined, 5000, 'the old row pruned');
  const left = (await database.db.selectFrom('outbox').select('id').execute()).map((r) => r.id);
  expect(left.sort()).toEqual([recent, unsent, foreign].sort());
  expect(mailbox.messages).toHaveLength(0);
});

test('stop() waits for the send in progress, then polls no more; unsent rows stay for the next start', async () => {
  await mailbox.start(0);
  const instanceId = newId();
  const config = configWith({ GATEHOUSE_SMTP_URL: mailbox.url });
  const w = worker(database.db, instanceId, config);
  const first = await enqueueMail(database.db, mail(instanceId, 1));
  w.kick();
  await w.stop();
  // Whatever was claimed before stop() finished has been sent and recorded, or not started at all.
  const afterStop = await row(first);
  expect(afterStop.sent_at === null ? 0 : 1).toBe(mailbox.messages.length);

  const second = await enqueueMail(database.db, mail(instanceId, 2));
  await new Promise((resolve) => setTimeout(resolve, SEVERAL_POLLS_MS));
  expect((await row(second)).sent_at).toBeNull();
  expect(mailbox.messages.filter((m) => m.to[0] === 'user2@example.test')).toHaveLength(0);

  // A new worker (a restart) delivers what is left.
  worker(database.db, instanceId, config).kick();
  await until(async () => (await row(first)).sent_at !== null && (await row(second)).sent_at !== null, 10_000, 'both sent');
  expect(mailbox.messages).toHaveLength(2);
});
