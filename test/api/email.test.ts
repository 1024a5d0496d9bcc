/**
 * UserService contact email calls (docs/endpoints.md#userservice-v3alpha-the-contact-email) against
 * the real server: REST with plain fetch and gRPC (h2c) for every error row, plus gRPC-web and
 * Connect for the main path. User tokens come from a browser sign-in through the domain exchanged
 * at the token endpoint; admin tokens from client_credentials. Mailed codes are read from a real
 * SMTP server the server delivers to; outbox rows and stored codes from the database. A user gets
 * its own codes by mail only (docs/security.md 10.1); `returnCode` is an administrator's (here the
 * IAM_OWNER machine user `reporter`).
 */
import { fromJson, toJson, type JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import {
  ResendContactEmailCodeRequestSchema,
  ResendContactEmailCodeResponseSchema,
  SetContactEmailRequestSchema,
  SetContactEmailResponseSchema,
  UserService,
  VerifyContactEmailResponseSchema,
} from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import { EMAIL_CODE_MAX_ATTEMPTS, verifyEmailCode } from '../../src/domain/credentials/email-codes.ts';
import { codeMail, Mailbox, nthMailTo, mailsTo } from '../mail/mailbox.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';

const REDIRECT_URI = 'http://localhost:3000/callback';
/** The origin of shop-web's redirect URI: verification links may lead there (docs/security.md 10.2). */
const APP_ORIGIN = 'http://localhost:3000';
const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const USERS = {
  carol: '200000000000000003', // other org, unverified
  dave: '200000000000000004', // no email
  erin: '200000000000000005', // unverified, German
  frank: '200000000000000006', // unverified, for replace / attempts
  unknown: '299999999999999999',
} as const;

let server: TestServer;
const mailbox = new Mailbox();
const tokens: Record<'alice' | 'bob' | 'reporter' | 'plainBot' | 'reporterNoApi', string> = { alice: '', bob: '', reporter: '', plainBot: '', reporterNoApi: '' };

function documentWithUsers(): Record<string, unknown> {
  const document = structuredClone(fixture().document) as { orgs: Array<{ users?: unknown[] }> };
  const [acme, other] = document.orgs;
  const human = (id: string, userName: string, extra: Record<string, unknown>) => ({ id, userName, password: 'Correct-Horse-9', ...extra });
  acme!.users!.push(
    human(IDS.bob, 'bob', { email: 'bob@acme.test', emailVerified: false }),
    human(USERS.dave, 'dave', {}),
    human(USERS.erin, 'erin', { email: 'erin@acme.test', emailVerified: false, preferredLanguage: 'de', givenName: 'Erin' }),
    human(USERS.frank, 'frank', { email: 'frank@acme.test', emailVerified: false }),
  );
  other!.users = [human(USERS.carol, 'carol', { email: 'carol@other.test', emailVerified: false })];
  return document;
}

async function userToken(userId: string): Promise<string> {
  const issued = await signedInCode(server, { clientId: 'shop-web', redirectUri: REDIRECT_URI, scopes: ['openid', 'email', API_SCOPE], userId });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: REDIRECT_URI }, { authorization: basic('shop-web', SECRETS.web) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

async function clientCredentials(user: string, secret: string, scope = `openid ${API_SCOPE}`): Promise<string> {
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

beforeAll(async () => {
  await mailbox.start(0);
  server = await startTestServer(documentWithUsers(), { GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_SMTP_FROM: 'noreply@acme.test' });
  tokens.alice = await userToken(IDS.alice);
  tokens.bob = await userToken(IDS.bob);
  tokens.reporter = await clientCredentials('reporter', SECRETS.reporter);
  tokens.plainBot = await clientCredentials('plain-bot', SECRETS.plainBot);
  tokens.reporterNoApi = await clientCredentials('reporter', SECRETS.reporter, 'openid');
});
afterAll(async () => {
  await server?.stop();
  await mailbox.stop();
});

/** The next code mail to `address` (the server's worker is kicked rather than awaited). */
async function nextMailTo(address: string) {
  const n = mailsTo(mailbox.messages, address).length + 1;
  server.running.mail.kick();
  return nthMailTo(mailbox, address, n);
}

/** The outcome of a call in one shape for every protocol: the gRPC code (undefined = OK) and the JSON body. */
interface Outcome {
  code: Code | undefined;
  body: JsonObject;
}

type Call = 'resend' | 'set' | 'verify';

interface Protocol {
  name: string;
  call(call: Call, userId: string, body: JsonObject, token: string): Promise<Outcome>;
}

const HTTP_STATUS: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.Unauthenticated]: 401,
  [Code.ResourceExhausted]: 429,
};

const REST: Protocol = {
  name: 'REST',
  async call(call, userId, body, token) {
    const [method, suffix] = call === 'resend' ? ['POST', '/email/resend'] : call === 'set' ? ['PUT', '/email'] : ['POST', '/email/verify'];
    const reply = await request(`${server.url}/v3alpha/users/${encodeURIComponent(userId)}${suffix}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    if (reply.status === 200) return { code: undefined, body: reply.json as JsonObject };
    const code = reply.json['code'] as Code;
    // The REST status follows the gRPC code (docs/errors.md#the-api), and the body carries the ErrorDetail.
    expect(reply.status).toBe(HTTP_STATUS[code]);
    expect(reply.json['details']).toEqual([expect.objectContaining({ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail', id: expect.any(String) })]);
    return { code, body: reply.json as JsonObject };
  },
};

function rpc(name: string, transport: () => Transport): Protocol {
  return {
    name,
    async call(call, userId, body, token) {
      const client = createClient(UserService, transport());
      const options = { headers: { authorization: `Bearer ${token}` } };
      try {
        if (call === 'resend') {
          const response = await client.resendContactEmailCode(fromJson(ResendContactEmailCodeRequestSchema, { ...body, userId }), options);
          return { code: undefined, body: toJson(ResendContactEmailCodeResponseSchema, response) as JsonObject };
        }
        if (call === 'set') {
          const response = await client.setContactEmail(fromJson(SetContactEmailRequestSchema, { ...body, userId }), options);
          return { code: undefined, body: toJson(SetContactEmailResponseSchema, response) as JsonObject };
        }
        const response = await client.verifyContactEmail({ userId, verificationCode: String(body['verificationCode'] ?? '') }, options);
        return { code: undefined, body: toJson(VerifyContactEmailResponseSchema, response) as JsonObject };
      } catch (error) {
        return { code: ConnectError.from(error).code, body: {} };
      }
    },
  };
}

const GRPC = rpc('gRPC', () => createGrpcTransport({ baseUrl: server.url }));
const ALL: Protocol[] = [
  REST,
  GRPC,
  rpc('gRPC-web', () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: '1.1' })),
  rpc('Connect JSON', () => createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: false })),
  rpc('Connect binary', () => createConnectTransport({ baseUrl: server.url, httpVersion: '2', useBinaryFormat: true })),
];

function outboxFor(recipient: string) {
  return server.running.gh.db.selectFrom('outbox').selectAll().where('recipient', '=', recipient).orderBy('created_at').execute();
}

async function emailVerified(userId: string): Promise<boolean> {
  const row = await server.running.gh.db.selectFrom('users').select('email_verified').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.email_verified;
}

/** A code of the right shape that differs from `code`. */
function otherCode(code: string): string {
  return code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
}

const SET_RETURN = (address: string): JsonObject => ({ email: { address, returnCode: {} } });

describe.each([REST, GRPC].map((p) => [p.name, p] as const))('error rows over %s', (_protocol, protocol) => {
  const rows: Array<[string, Call, string, () => string, JsonObject, Code]> = [
    ['resend: a machine user without a role', 'resend', IDS.alice, () => tokens.plainBot, { returnCode: {} }, Code.PermissionDenied],
    ['resend: another user of the same org without a role', 'resend', IDS.alice, () => tokens.bob, { returnCode: {} }, Code.PermissionDenied],
    ['resend: ORG_OWNER of another org', 'resend', USERS.carol, () => tokens.alice, { returnCode: {} }, Code.PermissionDenied],
    ['resend: an unknown user for IAM_OWNER', 'resend', USERS.unknown, () => tokens.reporter, { returnCode: {} }, Code.NotFound],
    ['resend: an unknown user for ORG_OWNER (no leak)', 'resend', USERS.unknown, () => tokens.alice, { returnCode: {} }, Code.PermissionDenied],
    ['resend: an unknown user for a caller without role (no leak)', 'resend', USERS.unknown, () => tokens.plainBot, { returnCode: {} }, Code.PermissionDenied],
    ['resend: a user without email', 'resend', USERS.dave, () => tokens.reporter, { returnCode: {} }, Code.FailedPrecondition],
    ['resend: an already verified email', 'resend', IDS.alice, () => tokens.reporter, { returnCode: {} }, Code.FailedPrecondition],
    ['resend: a machine user as target', 'resend', IDS.plainBot, () => tokens.reporter, { returnCode: {} }, Code.FailedPrecondition],
    ['resend: an unknown template field', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: 'https://app.test/v?c={{.Password}}' } }, Code.InvalidArgument],
    ['resend: a template function', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: 'https://app.test/v?c={{printf "%s" .Code}}' } }, Code.InvalidArgument],
    ['resend: an unclosed action', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: 'https://app.test/v?c={{.Code' } }, Code.InvalidArgument],
    ['resend: a javascript: template', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: 'javascript:alert("{{.Code}}")' } }, Code.InvalidArgument],
    ['resend: a relative template', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: '/verify?c={{.Code}}' } }, Code.InvalidArgument],
    // docs/security.md 10.2: links lead to Gatehouse or to an application of the user's organization only
    ['resend: a template leading to a foreign site', 'resend', IDS.bob, () => tokens.reporter, { sendCode: { urlTemplate: 'https://app.test/v?c={{.Code}}' } }, Code.InvalidArgument],
    ['resend: a template leading to an app of another org', 'resend', USERS.carol, () => tokens.reporter, { sendCode: { urlTemplate: 'http://localhost:3000/v?c={{.Code}}' } }, Code.InvalidArgument],
    // docs/security.md 10.1: a user gets its own code by mail only
    ['resend: the user itself with returnCode', 'resend', IDS.bob, () => tokens.bob, { returnCode: {} }, Code.PermissionDenied],
    ['resend: a token without the API audience scope', 'resend', IDS.bob, () => tokens.reporterNoApi, { returnCode: {} }, Code.PermissionDenied],
    ['set: a machine user without a role', 'set', IDS.bob, () => tokens.plainBot, SET_RETURN('bob2@acme.test'), Code.PermissionDenied],
    ['set: an unknown user for IAM_OWNER', 'set', USERS.unknown, () => tokens.reporter, SET_RETURN('x@acme.test'), Code.NotFound],
    ['set: an unknown user for ORG_OWNER', 'set', USERS.unknown, () => tokens.alice, SET_RETURN('x@acme.test'), Code.PermissionDenied],
    ['set: the user itself marking its address verified', 'set', IDS.bob, () => tokens.bob, { email: { address: 'bob@acme.test', isVerified: true } }, Code.PermissionDenied],
    ['set: the user itself with returnCode', 'set', IDS.bob, () => tokens.bob, SET_RETURN('bob@acme.test'), Code.PermissionDenied],
    ['set: an invalid address', 'set', IDS.bob, () => tokens.reporter, SET_RETURN('not an address'), Code.InvalidArgument],
    ['set: an address without domain dot', 'set', IDS.bob, () => tokens.reporter, SET_RETURN('bob@localhost'), Code.InvalidArgument],
    ['set: an over-long address', 'set', IDS.bob, () => tokens.reporter, SET_RETURN(`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.test`), Code.InvalidArgument],
    ['set: no email', 'set', IDS.bob, () => tokens.reporter, {}, Code.InvalidArgument],
    ['set: an invalid template', 'set', IDS.bob, () => tokens.reporter, { email: { address: 'bob@acme.test', sendCode: { urlTemplate: 'https://app.test/{{.Code}}}}' } } }, Code.InvalidArgument],
    ['set: a template leading to a foreign site', 'set', IDS.bob, () => tokens.bob, { email: { address: 'bob@acme.test', sendCode: { urlTemplate: 'https://evil.test/{{.Code}}' } } }, Code.InvalidArgument],
    ['set: a machine user as target', 'set', IDS.plainBot, () => tokens.reporter, SET_RETURN('bot@acme.test'), Code.FailedPrecondition],
    ['verify: a machine user without a role', 'verify', IDS.bob, () => tokens.plainBot, { verificationCode: 'AAAAAA' }, Code.PermissionDenied],
    ['verify: an unknown user for IAM_OWNER', 'verify', USERS.unknown, () => tokens.reporter, { verificationCode: 'AAAAAA' }, Code.NotFound],
    ['verify: an unknown user for ORG_OWNER', 'verify', USERS.unknown, () => tokens.alice, { verificationCode: 'AAAAAA' }, Code.PermissionDenied],
    ['verify: no code pending', 'verify', USERS.carol, () => tokens.reporter, { verificationCode: 'AAAAAA' }, Code.FailedPrecondition],
    ['verify: an empty code', 'verify', USERS.carol, () => tokens.reporter, { verificationCode: '' }, Code.InvalidArgument],
  ];

  it.each(rows)('%s', async (_name, call, userId, token, body, expected) => {
    const before = await outboxFor('bob@acme.test');
    const outcome = await protocol.call(call, userId, body, token());
    expect(outcome.code).toBe(expected);
    // Nothing was sent or changed by a refused call.
    expect(await outboxFor('bob@acme.test')).toHaveLength(before.length);
    expect(await emailVerified(IDS.bob)).toBe(false);
  });

  it('verify: a wrong code is InvalidArgument', async () => {
    const issued = await protocol.call('resend', USERS.carol, { returnCode: {} }, tokens.reporter);
    const code = String(issued.body['verificationCode']);
    expect((await protocol.call('verify', USERS.carol, { verificationCode: otherCode(code) }, tokens.reporter)).code).toBe(Code.InvalidArgument);
    // The wrong try did not void the code.
    expect((await protocol.call('verify', USERS.carol, { verificationCode: code }, tokens.reporter)).code).toBeUndefined();
    // Verified now: resend is FailedPrecondition, verify again has nothing pending.
    expect((await protocol.call('resend', USERS.carol, { returnCode: {} }, tokens.reporter)).code).toBe(Code.FailedPrecondition);
    expect((await protocol.call('verify', USERS.carol, { verificationCode: code }, tokens.reporter)).code).toBe(Code.FailedPrecondition);
    // Back to unverified for the next protocol.
    await server.running.gh.db.updateTable('users').set({ email_verified: false }).where('id', '=', USERS.carol).execute();
  });
});

describe('both sendCode and returnCode', () => {
  it('is refused by the JSON decoder with 400 over REST', async () => {
    const reply = await request(`${server.url}/v3alpha/users/${IDS.bob}/email/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.reporter}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sendCode: {}, returnCode: {} }),
    });
    expect(reply.status).toBe(400);
    expect(reply.json['code']).toBe(Code.InvalidArgument);
  });

  it('is refused with invalid_argument over Connect JSON', async () => {
    const reply = await request(`${server.url}/zitadel.user.v3alpha.UserService/ResendContactEmailCode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.reporter}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: IDS.bob, sendCode: {}, returnCode: {} }),
    });
    expect(reply.status).toBe(400);
    expect(reply.json['code']).toBe('invalid_argument');
    expect(await outboxFor('bob@acme.test')).toHaveLength(0);
  });
});

describe.each(ALL.map((p, i) => [p.name, p, i] as const))('the verification flow over %s', (_protocol, protocol, i) => {
  it('alice sets her own email, reads the code in the mail, verifies it, and userinfo and introspection show email_verified', async () => {
    const userinfo = async () => (await request(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.alice}` } })).json;
    const introspect = async () => (await postForm(`${server.url}/oauth/v2/introspect`, { token: tokens.alice }, { authorization: basic('shop-api', SECRETS.api) })).json;
    expect(await userinfo()).toMatchObject({ email_verified: true });

    // one address per protocol: the mail limits allow 3 mails to one address in 10 minutes
    const address = `alice+${i}@acme.test`;
    const set = await protocol.call('set', IDS.alice, { email: { address } }, tokens.alice);
    expect(set.code).toBeUndefined();
    expect(set.body['verificationCode']).toBeUndefined();
    expect(set.body['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), changeDate: expect.any(String), resourceOwner: IDS.org });
    expect(await userinfo()).toMatchObject({ email: address, email_verified: false });
    const { code } = codeMail(await nextMailTo(address));

    const verified = await protocol.call('verify', IDS.alice, { verificationCode: code }, tokens.alice);
    expect(verified.code).toBeUndefined();
    expect(verified.body['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), resourceOwner: IDS.org });
    expect(BigInt(String((verified.body['details'] as JsonObject)['sequence']))).toBeGreaterThan(BigInt(String((set.body['details'] as JsonObject)['sequence'])));
    expect(await userinfo()).toMatchObject({ email: address, email_verified: true });
    expect(await introspect()).toMatchObject({ active: true, email: address, email_verified: true });
    const event = await server.running.gh.db
      .selectFrom('events')
      .selectAll()
      .where('sequence', '=', String((verified.body['details'] as JsonObject)['sequence']) as never)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ event_type: 'user.human.email.verified', aggregate_id: IDS.alice, resource_owner: IDS.org });
    expect(await server.running.gh.db.selectFrom('email_codes').selectAll().where('user_id', '=', IDS.alice).execute()).toHaveLength(0);
  });

  it('an administrator sets a user\'s email with returnCode, and verifies it with the returned code', async () => {
    const set = await protocol.call('set', USERS.erin, SET_RETURN(`erin+${i}@acme.test`), tokens.reporter);
    expect(set.code).toBeUndefined();
    const code = String(set.body['verificationCode']);
    expect(code).toMatch(/^[A-Z0-9]{6}$/);
    expect(await emailVerified(USERS.erin)).toBe(false);
    expect((await protocol.call('verify', USERS.erin, { verificationCode: code }, tokens.reporter)).code).toBeUndefined();
    expect(await emailVerified(USERS.erin)).toBe(true);
    expect(mailsTo(mailbox.messages, `erin+${i}@acme.test`)).toHaveLength(0);
  });
});

describe('sending codes (REST)', () => {
  it('sendCode writes exactly one outbox row and mails the rendered link, in the user language, and the code verifies', async () => {
    await server.running.gh.db.updateTable('users').set({ email: 'erin@acme.test', email_verified: false }).where('id', '=', USERS.erin).execute();
    const before = await outboxFor('erin@acme.test');
    const template = `${APP_ORIGIN}/verify?user={{.UserID}}&code={{ .Code }}&org={{.OrgID}}`;
    const reply = await REST.call('resend', USERS.erin, { sendCode: { urlTemplate: template } }, tokens.alice);
    expect(reply.code).toBeUndefined();
    expect(reply.body['verificationCode']).toBeUndefined();
    expect(reply.body['details']).toMatchObject({ resourceOwner: IDS.org });
    const rows = await outboxFor('erin@acme.test');
    expect(rows).toHaveLength(before.length + 1);
    expect(rows[rows.length - 1]).toMatchObject({ instance_id: server.running.gh.instanceId, user_id: USERS.erin, subject: 'Bestätige deine E-Mail-Adresse' });
    const mail = await nextMailTo('erin@acme.test');
    expect(mail.headers.get('subject')).toMatch(/^=\?UTF-8\?/i);
    const { code, link, text, html } = codeMail(mail);
    const url = new URL(link);
    expect(url.origin).toBe(APP_ORIGIN);
    expect(url.searchParams.get('user')).toBe(USERS.erin);
    expect(url.searchParams.get('org')).toBe(IDS.org);
    expect(url.searchParams.get('code')).toBe(code);
    expect(text).toContain('Dein Bestätigungscode');
    expect(html).toContain(`href="${link.replaceAll('&', '&amp;')}"`);
    // The code is stored hashed with a salt, never in clear.
    const stored = await server.running.gh.db.selectFrom('email_codes').selectAll().where('user_id', '=', USERS.erin).executeTakeFirstOrThrow();
    expect(stored.code_hash).not.toContain(code);
    expect(stored.salt).toMatch(/^[0-9a-f]{32}$/);
    expect(stored.expires_at.getTime() - Date.now()).toBeGreaterThan(3500_000);
    expect((await REST.call('verify', USERS.erin, { verificationCode: code }, tokens.reporter)).code).toBeUndefined();
    expect(await emailVerified(USERS.erin)).toBe(true);
  });

  it('without sendCode or returnCode, mails the default link to the login UI verification page (English by default)', async () => {
    const before = await outboxFor('bob@acme.test');
    const reply = await REST.call('resend', IDS.bob, {}, tokens.bob);
    expect(reply.code).toBeUndefined();
    const rows = await outboxFor('bob@acme.test');
    expect(rows).toHaveLength(before.length + 1);
    expect(rows[rows.length - 1]!.subject).toBe('Verify your email address');
    const mail = await nextMailTo('bob@acme.test');
    expect(mail.headers.get('subject')).toBe('Verify your email address');
    const url = new URL(codeMail(mail).link);
    expect(`${url.origin}${url.pathname}`).toBe(`${server.url}/ui/login/verify-email`);
    expect(url.searchParams.get('userID')).toBe(IDS.bob);
    expect(url.searchParams.get('orgID')).toBe(IDS.org);
    expect(url.searchParams.get('code')).toBe(codeMail(mail).code);
    // sendCode without a template takes the same default.
    expect((await REST.call('resend', IDS.bob, { sendCode: {} }, tokens.bob)).code).toBeUndefined();
    expect(await outboxFor('bob@acme.test')).toHaveLength(before.length + 2);
    expect(codeMail(await nextMailTo('bob@acme.test')).link).toContain(`${server.url}/ui/login/verify-email?userID=${IDS.bob}&code=`);
  });

  it('a second resend replaces the code: the old one no longer verifies', async () => {
    const first = String((await REST.call('resend', USERS.frank, { returnCode: {} }, tokens.reporter)).body['verificationCode']);
    const second = String((await REST.call('resend', USERS.frank, { returnCode: {} }, tokens.reporter)).body['verificationCode']);
    expect(second).toMatch(/^[A-Z0-9]{6}$/);
    if (first !== second) expect((await REST.call('verify', USERS.frank, { verificationCode: first }, tokens.reporter)).code).toBe(Code.InvalidArgument);
    expect((await REST.call('verify', USERS.frank, { verificationCode: second }, tokens.reporter)).code).toBeUndefined();
    expect(await emailVerified(USERS.frank)).toBe(true);
  });

  it(`a code is void after ${EMAIL_CODE_MAX_ATTEMPTS} wrong tries`, async () => {
    const set = await REST.call('set', USERS.frank, SET_RETURN('frank@acme.test'), tokens.reporter);
    const code = String(set.body['verificationCode']);
    for (let i = 0; i < EMAIL_CODE_MAX_ATTEMPTS; i++) {
      expect((await REST.call('verify', USERS.frank, { verificationCode: otherCode(code) }, tokens.reporter)).code).toBe(Code.InvalidArgument);
    }
    expect((await REST.call('verify', USERS.frank, { verificationCode: code }, tokens.reporter)).code).toBe(Code.InvalidArgument);
    expect(await emailVerified(USERS.frank)).toBe(false);
  });

  it('an expired code is FailedPrecondition, and verifyEmailCode reports it', async () => {
    const code = String((await REST.call('resend', USERS.frank, { returnCode: {} }, tokens.reporter)).body['verificationCode']);
    await server.running.gh.db.updateTable('email_codes').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', USERS.frank).execute();
    expect((await REST.call('verify', USERS.frank, { verificationCode: code }, tokens.reporter)).code).toBe(Code.FailedPrecondition);
    expect(await verifyEmailCode(server.running.gh.db, USERS.frank, code)).toBe('expired');
  });

  it('verifyEmailCode (for the login UI) accepts a lower-case code and then has nothing pending', async () => {
    const code = String((await REST.call('resend', USERS.frank, { returnCode: {} }, tokens.reporter)).body['verificationCode']);
    expect(await verifyEmailCode(server.running.gh, USERS.frank, otherCode(code))).toBe('invalid');
    expect(await verifyEmailCode(server.running.gh, USERS.frank, code.toLowerCase())).toBe('verified');
    expect(await verifyEmailCode(server.running.gh, USERS.frank, code)).toBe('not_pending');
    expect(await verifyEmailCode(server.running.gh.db, USERS.unknown, code)).toBe('not_pending');
  });

  it('SetContactEmail with isVerified by an ORG_OWNER sets the address verified without a code', async () => {
    await REST.call('resend', USERS.frank, { returnCode: {} }, tokens.reporter).catch(() => undefined);
    const reply = await REST.call('set', USERS.frank, { email: { address: 'frank.new@acme.test', isVerified: true } }, tokens.alice);
    expect(reply.code).toBeUndefined();
    expect(reply.body['verificationCode']).toBeUndefined();
    const row = await server.running.gh.db.selectFrom('users').select(['email', 'email_verified']).where('id', '=', USERS.frank).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: 'frank.new@acme.test', email_verified: true });
    expect(await server.running.gh.db.selectFrom('email_codes').selectAll().where('user_id', '=', USERS.frank).execute()).toHaveLength(0);
  });

  it('SetContactEmail with sendCode mails the new address', async () => {
    const reply = await REST.call('set', USERS.frank, { email: { address: 'frank.other@acme.test', sendCode: { urlTemplate: `${APP_ORIGIN}/v/{{.Code}}` } } }, tokens.reporter);
    expect(reply.code).toBeUndefined();
    expect(await outboxFor('frank.other@acme.test')).toHaveLength(1);
    const { code, link } = codeMail(await nextMailTo('frank.other@acme.test'));
    expect(link).toBe(`${APP_ORIGIN}/v/${code}`);
    expect(await emailVerified(USERS.frank)).toBe(false);
  });

  it('a template may lead to the origin of any redirect URI of the user\'s organization, or to Gatehouse itself', async () => {
    const backend = await REST.call('set', USERS.frank, { email: { address: 'frank.third@acme.test', sendCode: { urlTemplate: 'http://localhost:4000/confirm?c={{.Code}}' } } }, tokens.reporter);
    expect(backend.code).toBeUndefined();
    expect(codeMail(await nextMailTo('frank.third@acme.test')).link).toMatch(/^http:\/\/localhost:4000\/confirm\?c=[A-Z0-9]{6}$/);
    const own = await REST.call('resend', USERS.frank, { sendCode: { urlTemplate: `${server.url}/elsewhere/{{.Code}}` } }, tokens.reporter);
    expect(own.code).toBeUndefined();
    expect(codeMail(await nextMailTo('frank.third@acme.test')).link).toMatch(new RegExp(`^${server.url}/elsewhere/[A-Z0-9]{6}$`));
  });
});
