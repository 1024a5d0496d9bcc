/**
 * Verification mail as a relay (docs/security.md 10.2), attacked through the real server with
 * real user tokens, over REST and gRPC, with a real SMTP server as the recipients' mailboxes: the
 * link must lead to Gatehouse or to an application of the user's organization, and code mails are
 * limited per user (5 an hour) and per recipient address (3 in 10 minutes), counted from the outbox.
 */
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { UserService } from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import { CODE_MAILS_PER_RECIPIENT, CODE_MAILS_PER_USER } from '../../src/domain/credentials/email-codes.ts';
import { enqueueMail } from '../../src/domain/kernel/outbox.ts';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { codeMail, Mailbox, nthMailTo } from './mailbox.ts';

const REDIRECT_URI = 'http://localhost:3000/callback';
const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const USERS = { mallory: '200000000000000011', trudy: '200000000000000012', peggy: '200000000000000013', victor: '200000000000000014' } as const;

let server: TestServer;
const mailbox = new Mailbox();
const tokens: Record<keyof typeof USERS, string> = { mallory: '', trudy: '', peggy: '', victor: '' };

function document(): Record<string, unknown> {
  const doc = structuredClone(fixture().document) as { orgs: Array<{ users?: unknown[] }> };
  for (const [name, id] of Object.entries(USERS)) {
    doc.orgs[0]!.users!.push({ id, userName: name, password: 'Correct-Horse-9', email: `${name}@acme.test`, emailVerified: false });
  }
  return doc;
}

async function userToken(userId: string): Promise<string> {
  const issued = await signedInCode(server, { clientId: 'shop-web', redirectUri: REDIRECT_URI, scopes: ['openid', API_SCOPE], userId });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: REDIRECT_URI }, { authorization: basic('shop-web', SECRETS.web) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

beforeAll(async () => {
  await mailbox.start(0);
  server = await startTestServer(document(), { GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_SMTP_FROM: 'noreply@acme.test' });
  for (const [name, id] of Object.entries(USERS)) tokens[name as keyof typeof USERS] = await userToken(id);
});
afterAll(async () => {
  await server?.stop();
  await mailbox.stop();
});

function call(method: 'POST' | 'PUT', path: string, token: string, body: unknown): Promise<Reply> {
  return request(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
const resend = (userId: string, token: string, body: unknown = {}) => call('POST', `/v3alpha/users/${userId}/email/resend`, token, body);
const setEmail = (userId: string, token: string, address: string) => call('PUT', `/v3alpha/users/${userId}/email`, token, { email: { address } });
const verify = (userId: string, token: string, code: string) => call('POST', `/v3alpha/users/${userId}/email/verify`, token, { verificationCode: code });

async function mailTo(address: string, n: number) {
  server.running.mail.kick();
  return codeMail(await nthMailTo(mailbox, address, n));
}

function outboxRows(recipient: string) {
  return server.running.gh.db.selectFrom('outbox').select('id').where('recipient', '=', recipient).execute();
}

// docs/security.md 10.2
describe('the link of a verification mail', () => {
  it.each([
    ['a phishing site', 'https://evil.test/login?code={{.Code}}'],
    ['a look-alike of the application', 'http://localhost.evil.test:3000/v?c={{.Code}}'],
    ['the application\'s host on another port', 'http://localhost:3001/v?c={{.Code}}'],
    ['the application\'s host over another scheme', 'https://localhost:3000/v?c={{.Code}}'],
    ['a host made of the code', 'http://{{.Code}}.evil.test/'],
  ])('may not lead to %s: InvalidArgument, nothing mailed', async (_name, urlTemplate) => {
    const reply = await resend(USERS.mallory, tokens.mallory, { sendCode: { urlTemplate } });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: Code.InvalidArgument, details: [{ id: 'EMAIL-Template' }] });
    expect(await outboxRows('mallory@acme.test')).toHaveLength(0);
  });

  it('may lead to the application of the user\'s organization', async () => {
    const reply = await resend(USERS.mallory, tokens.mallory, { sendCode: { urlTemplate: 'http://localhost:3000/verify?c={{.Code}}' } });
    expect(reply.status).toBe(200);
    expect((await mailTo('mallory@acme.test', 1)).link).toMatch(/^http:\/\/localhost:3000\/verify\?c=[A-Z0-9]{6}$/);
  });
});

// docs/security.md 10.2
describe('code mails to one address', () => {
  it(`are limited to ${CODE_MAILS_PER_RECIPIENT.limit} in 10 minutes (429 with Retry-After), and the pending code stays valid`, async () => {
    for (let n = 1; n <= CODE_MAILS_PER_RECIPIENT.limit; n++) expect((await resend(USERS.trudy, tokens.trudy)).status).toBe(200);
    const last = await mailTo('trudy@acme.test', CODE_MAILS_PER_RECIPIENT.limit);
    const refused = await resend(USERS.trudy, tokens.trudy);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: Code.ResourceExhausted, details: [{ id: 'EMAIL-TooManyMails' }] });
    expect(String(refused.json['message'])).toMatch(/^too many code mails \(at most 5 an hour for a user, 3 in 10 minutes to an address\): try again in (10|9) minute\(s\)$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(500);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    // over gRPC too
    const users = createClient(UserService, createGrpcTransport({ baseUrl: server.url }));
    const grpc = await users.resendContactEmailCode({ userId: USERS.trudy }, { headers: { authorization: `Bearer ${tokens.trudy}` } }).catch((e: unknown) => ConnectError.from(e));
    expect(grpc).toBeInstanceOf(ConnectError);
    expect((grpc as ConnectError).code).toBe(Code.ResourceExhausted);
    expect(await outboxRows('trudy@acme.test')).toHaveLength(CODE_MAILS_PER_RECIPIENT.limit);
    // the refused resends replaced nothing: the last mailed code verifies
    expect((await verify(USERS.trudy, tokens.trudy, last.code)).status).toBe(200);
  });

  it('count across users and letter case: two users cannot take turns at flooding one victim', async () => {
    expect((await setEmail(USERS.peggy, tokens.peggy, 'victim@bank.test')).status).toBe(200);
    expect((await resend(USERS.peggy, tokens.peggy)).status).toBe(200);
    expect((await setEmail(USERS.victor, tokens.victor, 'Victim@Bank.test')).status).toBe(200);
    const refused = await resend(USERS.victor, tokens.victor);
    expect(refused.status).toBe(429);
    expect((await outboxRows('victim@bank.test')).length + (await outboxRows('Victim@Bank.test')).length).toBe(3);
  });

  it('count what other processes queued: the count is read from the outbox', async () => {
    // as another Gatehouse process on the same database would have written them
    for (let n = 0; n < CODE_MAILS_PER_RECIPIENT.limit; n++) {
      await enqueueMail(server.running.gh.db, { instanceId: server.running.gh.instanceId, to: 'shared@acme.test', subject: 's', text: 't', html: 'h' });
    }
    const reply = await setEmail(USERS.mallory, tokens.mallory, 'shared@acme.test');
    expect(reply.status).toBe(429);
    // refused as a whole: the address did not change
    const row = await server.running.gh.db.selectFrom('users').select('email').where('id', '=', USERS.mallory).executeTakeFirstOrThrow();
    expect(row.email).toBe('mallory@acme.test');
  });
});

// docs/security.md 10.2
describe('code mails for one user', () => {
  it(`are limited to ${CODE_MAILS_PER_USER.limit} an hour, whatever the addresses; the last code stays valid`, async () => {
    const { db } = server.running.gh;
    const before = (await db.selectFrom('outbox').select('id').where('user_id', '=', USERS.mallory).execute()).length;
    for (let n = before + 1; n <= CODE_MAILS_PER_USER.limit; n++) {
      expect((await setEmail(USERS.mallory, tokens.mallory, `mallory.${n}@acme.test`)).status).toBe(200);
    }
    const last = `mallory.${CODE_MAILS_PER_USER.limit}@acme.test`;
    const { code } = await mailTo(last, 1);
    const refused = await setEmail(USERS.mallory, tokens.mallory, 'mallory.next@acme.test');
    expect(refused.status).toBe(429);
    expect(String(refused.json['message'])).toMatch(/^too many code mails \(at most 5 an hour for a user, 3 in 10 minutes to an address\): try again in \d+ minute\(s\)$/);
    expect(await outboxRows('mallory.next@acme.test')).toHaveLength(0);
    expect((await verify(USERS.mallory, tokens.mallory, code)).status).toBe(200);
    const row = await db.selectFrom('users').select(['email', 'email_verified']).where('id', '=', USERS.mallory).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: last, email_verified: true });
  });
});
