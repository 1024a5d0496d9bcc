/**
 * Every secret checked anywhere is held by the per-address failure limit, replayed against the
 * real server: current passwords, reset codes and email codes at the API (REST and gRPC), passkey
 * link codes at the API, and email codes at the login UI's verification page, whose anonymous tries
 * can no longer void someone's code.
 *
 * "No hash" is observed through the password-hashing queue: while it is kept full, any request
 * that computed an argon2 hash would be answered 503 (test/support/hashing.ts).
 */
import { Code, createClient } from '@connectrpc/connect';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { FailureThrottle } from '../../src/domain/sign-in/failure-throttle.ts';
import { loadConfig } from '../../src/config/index.ts';
import { Browser, csrfIn, startLoginServer, type LoginServer } from '../login/support.ts';
import { codeMail, Mailbox, nthMailTo } from '../mail/mailbox.ts';
import { whileHashingQueueFull } from '../support/hashing.ts';
import { basic, postForm } from '../support/http.ts';
import { apiTokens, failure, managementDocument, MGMT, transports, withToken, type Caller } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { signedInCode } from '../support/sign-in.ts';

const PASSWORD = 'Correct-Horse-9';
const CALLBACK = 'http://localhost:3000/callback';
const WEB = { clientId: 'throttle-web', secret: 'throttle-web-secret' };
const USER_SCOPES = ['openid', 'urn:gatehouse:iam:org:project:id:gatehouse:aud'];
/** Failures a minute per address (GATEHOUSE_FAILED_AUTH_RATE_LIMIT's default). */
const LIMIT = loadConfig({}).failedAuthRateLimit;

const USERS = {
  guessed: '260000000000000001',
  locked: '260000000000000002',
  resetting: '260000000000000003',
  verifying: '260000000000000004',
  mailed: '260000000000000005',
  invited: '260000000000000006',
} as const;

const mailbox = new Mailbox();
let ls: LoginServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  await mailbox.start(0);
  const port = await freePort();
  const human = (id: string, userName: string) => ({ id, userName, password: PASSWORD, email: `${userName}@managed.test`, emailVerified: true });
  const document = managementDocument({
    users: [
      human(USERS.guessed, 'guessed'),
      human(USERS.locked, 'locked'),
      human(USERS.resetting, 'resetting'),
      human(USERS.verifying, 'verifying'),
      human(USERS.mailed, 'mailed'),
      human(USERS.invited, 'invited'),
    ],
    projects: [
      {
        name: 'throttles',
        apps: [
          {
            name: 'throttle-web',
            clientId: WEB.clientId,
            clientSecret: WEB.secret,
            authMethod: 'client_secret_basic',
            redirectUris: [CALLBACK],
            responseTypes: ['code'],
            grantTypes: ['authorization_code'],
            accessTokenType: 'jwt',
          },
        ],
      },
    ],
  });
  // localhost (not an IP address) so that passkeys are on.
  ls = await startLoginServer({ GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: `http://localhost:${port}`, GATEHOUSE_SMTP_URL: mailbox.url }, document);
  tokens = await apiTokens(ls.server);
});
afterAll(async () => {
  await ls?.stop();
  await mailbox.stop();
});

// Each case starts a fresh one-minute window of the default limit, so that no window ends in its middle.
beforeEach(() => {
  ls.gh.throttle = new FailureThrottle(LIMIT, { phaseMs: (Date.now() - 1000) % 60_000 });
});

/** A user's own API token: a browser sign-in exchanged by throttle-web. */
async function userToken(userId: string): Promise<string> {
  const issued = await signedInCode(ls.server, { clientId: WEB.clientId, redirectUri: CALLBACK, scopes: USER_SCOPES, userId });
  const reply = await postForm(`${ls.server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, { authorization: basic(WEB.clientId, WEB.secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

/** A REST call with its status, Retry-After and JSON body. */
async function rest(method: string, path: string, token: string, body: unknown): Promise<{ status: number; retryAfter: string | null; json: Record<string, unknown> }> {
  const response = await fetch(`${ls.server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

const setPassword = (userId: string, token: string, proof: Record<string, string>) => rest('POST', `/v2/users/${userId}/password`, token, { newPassword: { password: 'Next-Horse-77' }, ...proof });

function userRow(id: string) {
  return ls.gh.db.selectFrom('users').select(['failed_attempts', 'locked_until', 'email_verified']).where('id', '=', id).executeTakeFirstOrThrow();
}

const grpcUsers = () => createClient(UserService, transports(() => ls.server)[0]![1]());

describe('current passwords at the API', () => {
  // The attack: 30 wrong current passwords were all answered 400, each an argon2 run, the last 20 during the lockout.
  it(`answers ${LIMIT} wrong ones a minute from an address, then 429 with Retry-After before any hash, UpdateHumanUser too`, async () => {
    const token = await userToken(USERS.guessed);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await setPassword(USERS.guessed, token, { currentPassword: `wrong-${i}` })).status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(400), ...Array<number>(30 - LIMIT).fill(429)]);

    const throttled = await whileHashingQueueFull(() => setPassword(USERS.guessed, token, { currentPassword: PASSWORD }));
    expect(throttled.status).toBe(429); // the right one too: nothing is checked, nothing hashed
    expect(Number(throttled.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(throttled.json).toMatchObject({ code: Code.ResourceExhausted, message: 'too many failed attempts from this address; try again later' });

    const update = await failure(
      grpcUsers().updateHumanUser(
        { userId: USERS.guessed, password: { passwordType: { case: 'password', value: { password: 'Next-Horse-77', changeRequired: false } }, verification: { case: 'currentPassword', value: PASSWORD } } },
        withToken(token),
      ),
    );
    expect(update.code).toBe(Code.ResourceExhausted);
    // 10 wrong ones locked the user once; the ones during the lock did not extend it.
    expect((await userRow(USERS.guessed)).locked_until).not.toBeNull();
    const locks = await ls.gh.db.selectFrom('events').select('sequence').where('aggregate_id', '=', USERS.guessed).where('event_type', '=', 'user.locked').execute();
    expect(locks).toHaveLength(1);
  }, 60_000);

  // The attack: argon2 ran for every current password during the user's lockout.
  it('answers a locked user’s right password like a wrong one, without computing a hash', async () => {
    const token = await userToken(USERS.locked);
    for (let i = 0; i < 10; i++) expect((await setPassword(USERS.locked, token, { currentPassword: `wrong-${i}` })).status).toBe(400);
    expect((await userRow(USERS.locked)).locked_until).not.toBeNull();

    const [right, wrong] = await whileHashingQueueFull(() =>
      Promise.all([setPassword(USERS.locked, token, { currentPassword: PASSWORD }), setPassword(USERS.locked, token, { currentPassword: 'wrong-again' })]),
    );
    expect(right).toEqual(wrong);
    expect(right).toMatchObject({ status: 400, json: { message: 'currentPassword: is not the current password' } });
  }, 60_000);
});

describe('password reset codes at the API', () => {
  it(`are held by the same limit, and a wrong one costs no hash of the new password`, async () => {
    const token = await userToken(USERS.resetting);
    const issued = await rest('POST', `/v2/users/${USERS.resetting}/password_reset`, tokens.iamAdmin, { returnCode: {} });
    const code = String(issued.json['verificationCode']);
    const wrong = code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ';
    const first = await whileHashingQueueFull(() => setPassword(USERS.resetting, token, { verificationCode: wrong }));
    expect(first).toMatchObject({ status: 400, json: { message: 'verificationCode: is invalid' } });
    for (let i = 1; i < LIMIT; i++) expect((await setPassword(USERS.resetting, token, { verificationCode: wrong })).status).toBe(400);
    const throttled = await setPassword(USERS.resetting, token, { verificationCode: code });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.retryAfter)).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe('email codes at the API', () => {
  it('are held by the same limit (REST and gRPC alike)', async () => {
    const set = await rest('POST', `/v2/users/${USERS.verifying}/email`, tokens.iamAdmin, { email: 'verifying-new@managed.test', returnCode: {} });
    const code = String(set.json['verificationCode']);
    const wrong = code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ';
    for (let i = 0; i < LIMIT; i++) expect((await rest('POST', `/v2/users/${USERS.verifying}/email/verify`, tokens.iamAdmin, { verificationCode: wrong })).status).toBe(400);
    const throttled = await rest('POST', `/v2/users/${USERS.verifying}/email/verify`, tokens.iamAdmin, { verificationCode: code });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await failure(grpcUsers().verifyEmail({ userId: USERS.verifying, verificationCode: code }, withToken(tokens.iamAdmin)))).code).toBe(Code.ResourceExhausted);
    expect((await userRow(USERS.verifying)).email_verified).toBe(false);
  }, 60_000);
});

describe('passkey link codes at the API', () => {
  it('are held by the same limit; tries under another code id leave the code usable', async () => {
    const as = (caller: Caller) => withToken(tokens[caller]);
    const link = await grpcUsers().createPasskeyRegistrationLink({ userId: USERS.invited, medium: { case: 'returnCode', value: {} } }, as('iamAdmin'));
    const code = { id: link.code!.id, code: link.code!.code };
    for (let i = 0; i < LIMIT; i++) {
      expect((await failure(grpcUsers().registerPasskey({ userId: USERS.invited, code: { id: '1', code: code.code } }, as('plain')))).code).toBe(Code.InvalidArgument);
    }
    expect((await failure(grpcUsers().registerPasskey({ userId: USERS.invited, code }, as('plain')))).code).toBe(Code.ResourceExhausted);
    ls.gh.throttle = new FailureThrottle(LIMIT); // the next minute
    expect((await grpcUsers().registerPasskey({ userId: USERS.invited, code }, as('plain'))).passkeyId).toMatch(/^\d+$/);
  }, 60_000);
});

describe('the verification page /ui/login/verify-email', () => {
  const PATH = '/ui/login/verify-email';

  /** A stranger's try: the page opened without a link, a user id typed, a code guessed. */
  async function strangerTry(browser: Browser, userId: string, code: string) {
    const form = await browser.get(`${PATH}?userID=${userId}`);
    return browser.post(PATH, { csrfToken: csrfIn(form.text), userID: userId, orgID: MGMT.org, code });
  }

  // The attack: 5 anonymous wrong posts voided the user's pending code; the right code afterwards was 400.
  it('lets strangers’ wrong tries neither void a pending code nor stop its mailed link', async () => {
    const sent = await rest('POST', `/v2/users/${USERS.mailed}/email`, tokens.iamAdmin, { email: 'mailed-new@managed.test', sendCode: {} });
    expect(sent.status).toBe(200);
    ls.server.running.mail.kick();
    const { code, link } = codeMail(await nthMailTo(mailbox, 'mailed-new@managed.test', 1));
    const url = new URL(link);

    const stranger = new Browser(ls.base);
    const wrong = code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ';
    for (let i = 0; i < 6; i++) expect((await strangerTry(stranger, USERS.mailed, wrong)).status).toBe(400);
    // Strangers have used up their tries: even the right code, without the link's code id, is refused unchecked.
    expect((await strangerTry(stranger, USERS.mailed, code)).status).toBe(400);
    expect((await userRow(USERS.mailed)).email_verified).toBe(false);

    const owner = new Browser(ls.base);
    const page = await owner.get(`${url.pathname}${url.search}`);
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page.text)?.[1] ?? '';
    const done = await owner.post(PATH, { csrfToken: csrfIn(page.text), userID: hidden('userID'), orgID: hidden('orgID'), codeID: hidden('codeID'), code: url.searchParams.get('code')! });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Email address verified');
    expect((await userRow(USERS.mailed)).email_verified).toBe(true);
    // the link carried the code's id, and the page passed it on
    expect(url.searchParams.get('codeID')).toMatch(/^\d+$/);
    expect(hidden('codeID')).toBe(url.searchParams.get('codeID'));
  }, 60_000);

  it(`is held by the per-address limit: the ${LIMIT + 1}st wrong try of a minute is 429 with Retry-After`, async () => {
    const stranger = new Browser(ls.base);
    for (let i = 0; i < LIMIT; i++) expect((await strangerTry(stranger, MGMT.alice, 'ZZZZZZ')).status).toBe(400);
    const throttled = await strangerTry(stranger, MGMT.alice, 'ZZZZZZ');
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(throttled.text).toContain('Please wait');
  }, 60_000);
});
