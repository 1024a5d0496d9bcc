/**
 * Cutting a user off at any size, on two nodes of one PostgreSQL database. Deactivating, locking or
 * deleting a user, or an administrator setting its password, answers within a second for a user who
 * holds 300,000 live stored tokens, and every token of that user is refused at once on both nodes
 * (introspection, userinfo, the API, the refresh grant, token exchange), its browser sessions over.
 * None comes back when the user is active again.
 *
 * Beside it, on the same database: a statement that runs past GATEHOUSE_STATEMENT_TIMEOUT_MS is
 * cancelled in PostgreSQL and its connection serves the next query (a request meeting one answers
 * 503 as in an outage), and what has expired is pruned in bounded batches by one process at a time,
 * on a connection of its own, while the request pool answers at once.
 * PostgreSQL only: the embedded database serves one process.
 */
import * as client from 'openid-client';
import { sql } from 'kysely';
import pg from 'pg';
import { stringify } from 'yaml';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyBootstrapFile } from '../../src/bootstrap/apply.ts';
import { loadConfig } from '../../src/config/index.ts';
import { newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { createLogger } from '../../src/server/request-context.ts';
import { pruneExpired, PRUNE_LOCK } from '../../src/server/jobs.ts';
import { startServer } from '../../src/server/start.ts';
import type { DB } from '../../src/store/database.ts';
import { exclusiveRunner, type ExclusiveRunner } from '../../src/store/exclusive.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { createTestDatabase, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { API_SCOPE } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';

const onPostgres = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

/**
 * Live stored tokens given to each user with many (a human, a busy machine user): a busy service
 * account's opaque tokens, several a second over their 12-hour life. Enough to show the shape: one
 * statement rewriting each of them ran for seconds, past what a request may take; one bulk insert
 * makes them in seconds.
 */
const BULK_TOKENS = 300_000;
/** The bulk tokens' values are `<salt>-<user>-<n>`, stored as their SHA-256 like every opaque token: the test can present any of them. */
const BULK_SALT = randomBytes(12).toString('base64url');
const bulkToken = (subject: string, n: number) => `${BULK_SALT}-${subject}-${n}`;
/** Expired token rows the prune removes (plus some expired revocations and assertion marks). */
const EXPIRED_TOKENS = 50_000;
/** The server pool's size (store/database.ts). */
const POOL_SIZE = 10;

const USERS = {
  /** A human of ACME with a password, signing in at the two apps below. */
  carol: '200000000000000031',
  /** A human of ACME whose row the statement-timeout case holds locked. */
  dave: '200000000000000032',
  /** A busy machine user with opaque tokens. */
  busyBot: '300000000000000031',
  /** A machine user with JWT access tokens. */
  jwtBot: '300000000000000032',
} as const;

const PASSWORD = 'Correct-Horse-9';
const PROJECT_SCOPE = `urn:gatehouse:iam:org:project:id:${IDS.project}:aud`;
/** Scopes of the users' sign-ins: a refresh token, and tokens the API accepts. */
const USER_SCOPES = [...API_SCOPE.split(' '), 'offline_access'];
/** Scopes of the machines' tokens: the API, and the project, so that the project's apps may introspect and exchange them. */
const MACHINE_SCOPE = `${API_SCOPE} ${PROJECT_SCOPE}`;

/** The relying parties: one with JWT access tokens, one with opaque ones; both refresh and exchange tokens. */
const APPS = {
  'cut-web': { secret: 'cut-web-secret', redirectUri: 'http://localhost:3000/cut-web', accessTokenType: 'jwt' },
  'cut-opaque': { secret: 'cut-opaque-secret', redirectUri: 'http://localhost:3000/cut-opaque', accessTokenType: 'opaque' },
} as const;
type AppName = keyof typeof APPS;

const INACTIVE = { active: false };
const INVALID_GRANT = { error: 'invalid_grant', error_description: 'grant request is invalid' };
const INVALID_SUBJECT = { error: 'invalid_request', error_description: 'subject_token is invalid, expired, revoked or not meant for this client' };

function document(): Record<string, unknown> {
  const doc = structuredClone(fixture().document) as {
    features?: Record<string, boolean>;
    orgs: Array<{ users: unknown[]; machines: unknown[]; projects: Array<{ apps: unknown[] }> }>;
  };
  doc.features = { oidcTokenExchange: true };
  const acme = doc.orgs[0]!;
  acme.users.push(
    { id: USERS.carol, userName: 'carol', password: PASSWORD, email: 'carol@acme.test', emailVerified: true, givenName: 'Carol', familyName: 'Example' },
    { id: USERS.dave, userName: 'dave', password: PASSWORD, email: 'dave@acme.test', emailVerified: true, givenName: 'Dave', familyName: 'Example' },
  );
  acme.machines.push(
    { id: USERS.busyBot, userName: 'busy-bot', secret: 'busy-bot-secret', accessTokenType: 'opaque' },
    { id: USERS.jwtBot, userName: 'jwt-bot', secret: 'jwt-bot-secret', accessTokenType: 'jwt' },
  );
  for (const [name, app] of Object.entries(APPS)) {
    acme.projects[0]!.apps.push({
      name,
      clientId: name,
      clientSecret: app.secret,
      authMethod: 'client_secret_basic',
      redirectUris: [app.redirectUri],
      responseTypes: ['code'],
      grantTypes: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
      accessTokenType: app.accessTokenType,
    });
  }
  return doc;
}

/** A node of the deployment: its own port, the deployment's one issuer (node a's URL). */
async function startNode(databaseUrl: string, dir: string, port: number, issuer: string, env: Record<string, string>, bootstrap?: string): Promise<TestServer> {
  const config = loadConfig({
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_EXTERNAL_URL: issuer,
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATABASE_URL: databaseUrl,
    ...env,
  });
  const running = await startServer({
    config,
    log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent'),
    prepare: async (db) => {
      if (bootstrap) await applyBootstrapFile(db, bootstrap);
    },
  });
  return { url: `http://127.0.0.1:${port}`, config, running, stop: () => running.stop() };
}

/**
 * BULK_TOKENS live opaque access tokens of `subject` in one statement, as `client` issues them (its
 * scopes and audience), issued evenly over the last 11 hours, each expiring 12 hours after its
 * issue (the oldest within the hour); token n is `bulkToken(subject, n)`, the first the newest.
 */
async function insertLiveTokens(databaseUrl: string, rows: { instanceId: string; subject: string; client: string; scopes: string[]; audience: string[] }): Promise<void> {
  await onDatabase(databaseUrl, (db) =>
    db.query(
      `insert into tokens (id, instance_id, kind, token_hash, client_id, subject, scopes, audience, created_at, expires_at)
       select 'bulk-' || $1 || '-' || n, $2, 'access', encode(sha256(convert_to($7 || '-' || $1 || '-' || n, 'UTF8')), 'hex'), $3, $1, $4, $5,
              issued, issued + interval '12 hours'
       from generate_series(1, $6::int) as n, lateral (select now() - interval '11 hours' * (n::float8 / ($6::int + 1))) as t(issued)`,
      [rows.subject, rows.instanceId, rows.client, rows.scopes, rows.audience, BULK_TOKENS, BULK_SALT],
    ),
  );
}

/** Runs `work` on a connection of the test's own, outside every server's pool. */
async function onDatabase<T>(databaseUrl: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a call took, in milliseconds, with its result. */
async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await call();
  return { result, ms: performance.now() - started };
}

/**
 * Tokens carry their issue time in whole seconds, so one issued in the second of a cut-off counts as
 * issued before it. Waits until the second after `at` has begun: tokens issued then count as newer.
 */
async function afterTheSecondOf(at: number): Promise<void> {
  const wait = Math.ceil(at / 1000) * 1000 + 5 - Date.now();
  if (wait > 0) await sleep(wait);
}

onPostgres('cutting users off at scale, on two nodes of one database', () => {
  let dir: string;
  let databaseUrl: string;
  let drop: () => Promise<void>;
  let a: TestServer;
  let b: TestServer;
  /** A third node whose statements PostgreSQL cancels after 300 ms. */
  let c: TestServer;
  let adminToken: string;
  const configs = new Map<AppName, client.Configuration>();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cut-off-'));
    const database = await createTestDatabase();
    databaseUrl = database.url!;
    drop = database.drop;
    const bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(document()));
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    a = await startNode(databaseUrl, dir, port, issuer, {}, bootstrap);
    const instanceId = a.running.gh.instanceId;
    // Carol and busy-bot have existed for a day, as a busy account has: no token speaks for a user
    // created after it was issued, and their bulk tokens were issued over the last 11 hours.
    await onDatabase(databaseUrl, (db) => db.query(`update users set created_at = created_at - interval '1 day' where id = any($1)`, [[USERS.carol, USERS.busyBot]]));
    for (const name of Object.keys(APPS) as AppName[]) {
      configs.set(name, await client.discovery(new URL(a.url), name, undefined, client.ClientSecretBasic(APPS[name].secret), { execute: [client.allowInsecureRequests] }));
    }
    // an IAM_OWNER of the instance (JWT access tokens)
    const reply = await postForm(`${a.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: API_SCOPE }, { authorization: basic('reporter', SECRETS.reporter) });
    expect(reply.status).toBe(200);
    adminToken = String(reply.json['access_token']);
    // the bulk tokens carry what real ones of the same client carry
    const carolsToken = (await introspect(a, (await signIn('cut-opaque', USERS.carol)).access)).json;
    const busyToken = (await introspect(a, await machineToken('busy-bot'))).json;
    const like = (token: Record<string, unknown>) => ({ client: String(token['client_id']), scopes: String(token['scope']).split(' '), audience: Array.isArray(token['aud']) ? token['aud'].map(String) : [] });
    [b] = await Promise.all([
      // Node b hears of changes made elsewhere only through the announcements: its change poll is
      // slowed to a minute, so what it refuses right after a call on node a, it learnt from them.
      startNode(databaseUrl, dir, await freePort(), issuer, { GATEHOUSE_CHANGE_POLL_MS: '60000' }),
      insertLiveTokens(databaseUrl, { instanceId, subject: USERS.carol, ...like(carolsToken) }),
      insertLiveTokens(databaseUrl, { instanceId, subject: USERS.busyBot, ...like(busyToken) }),
    ]);
    // A table in service has statistics (autovacuum gathers them after a load like this one): the
    // planner then finds expired rows through the expiry index rather than by reading every row.
    await onDatabase(databaseUrl, (db) => db.query('analyze tokens'));
    // last, on a quiet database: none of its own start's statements comes near its timeout
    c = await startNode(databaseUrl, dir, await freePort(), issuer, { GATEHOUSE_STATEMENT_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await c?.stop();
    await b?.stop();
    await a?.stop();
    await drop?.();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  // --- calls ----------------------------------------------------------------------------------

  /** A management API call over REST with the administrator's token, on node a. */
  async function manage(method: string, userPath: string, body?: unknown): Promise<{ reply: Reply; ms: number }> {
    const { result, ms } = await timed(() =>
      request(`${a.url}/v2/users/${userPath}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { reply: result, ms };
  }

  function introspect(node: TestServer, token: string): Promise<Reply> {
    return postForm(`${node.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
  }

  function userinfo(node: TestServer, token: string): Promise<Reply> {
    return request(`${node.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
  }

  /** GetUserByID of the token's own user: every user may read itself. */
  function readSelf(node: TestServer, token: string, userId: string): Promise<Reply> {
    return request(`${node.url}/v2/users/${userId}`, { headers: { authorization: `Bearer ${token}` } });
  }

  function refresh(node: TestServer, app: AppName, refreshToken: string): Promise<Reply> {
    return postForm(`${node.url}/oauth/v2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(app, APPS[app].secret) });
  }

  /** A token exchange by cut-web with this subject token (an ID token carries no scopes but openid). */
  function exchange(node: TestServer, subjectToken: string, type: string = TOKEN_TYPE.access): Promise<Reply> {
    return postForm(
      `${node.url}/oauth/v2/token`,
      { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: type, scope: type === TOKEN_TYPE.id ? 'openid' : API_SCOPE },
      { authorization: basic('cut-web', APPS['cut-web'].secret) },
    );
  }

  function machineToken(name: 'busy-bot' | 'jwt-bot'): Promise<string> {
    return postForm(`${a.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: MACHINE_SCOPE }, { authorization: basic(name, `${name}-secret`) }).then((reply) => {
      expect(reply.status).toBe(200);
      return String(reply.json['access_token']);
    });
  }

  // --- a user's tokens --------------------------------------------------------------------------

  interface UserTokens {
    userId: string;
    /** Access tokens by how they were obtained. */
    access: Record<string, string>;
    /** Refresh tokens and the app each belongs to. */
    refresh: Array<{ app: AppName; token: string }>;
    /** ID tokens, each of cut-web (the app that exchanges them). */
    id: string[];
    /** The gh_browser cookie of a browser the user signed in with. */
    browser?: string;
  }

  /** A browser sign-in of the user at an app, the code redeemed with openid-client. */
  async function signIn(app: AppName, userId: string, browserCookie?: string): Promise<{ access: string; refresh: string; id: string }> {
    const code = await signedInCode(a, { clientId: app, redirectUri: APPS[app].redirectUri, scopes: USER_SCOPES, userId, ...(browserCookie ? { browserCookie } : {}) });
    const tokens = await client.authorizationCodeGrant(configs.get(app)!, code.callback, { expectedState: code.state, expectedNonce: code.nonce, idTokenExpected: true });
    expect(tokens.access_token.includes('.')).toBe(APPS[app].accessTokenType === 'jwt');
    expect(typeof tokens.refresh_token).toBe('string');
    return { access: tokens.access_token, refresh: String(tokens.refresh_token), id: String(tokens.id_token) };
  }

  /** A human's tokens of every kind: from a sign-in at each app (JWT and opaque access tokens, refresh tokens, an ID token). */
  async function humanTokens(userId: string): Promise<UserTokens> {
    const browser = newBrowserId(a.running.gh.masterKey);
    const web = await signIn('cut-web', userId, browser);
    const opaque = await signIn('cut-opaque', userId);
    return {
      userId,
      access: { 'JWT access token': web.access, 'opaque access token': opaque.access },
      refresh: [
        { app: 'cut-web', token: web.refresh },
        { app: 'cut-opaque', token: opaque.refresh },
      ],
      id: [web.id],
      browser,
    };
  }

  /** An authorization request with prompt=none from the browser: a code while its session lasts, else an error. */
  async function silentSignIn(node: TestServer, browser: string): Promise<{ code: string | null; error: string | null }> {
    const query = new URLSearchParams({ client_id: 'cut-web', redirect_uri: APPS['cut-web'].redirectUri, response_type: 'code', scope: 'openid', state: 'silent', prompt: 'none' });
    const response = await fetch(`${node.url}/oauth/v2/authorize?${query.toString()}`, { redirect: 'manual', headers: { cookie: `gh_browser=${browser}` } });
    const answer = new URL(response.headers.get('location') ?? 'about:blank').searchParams;
    return { code: answer.get('code'), error: answer.get('error') };
  }

  /** Every access token is active on both nodes, every subject token exchangeable, the browser session answers prompt=none. */
  async function expectAccepted(tokens: UserTokens): Promise<void> {
    for (const node of [a, b]) {
      for (const [name, token] of Object.entries(tokens.access)) {
        const reply = await introspect(node, token);
        expect({ name, active: reply.json['active'], sub: reply.json['sub'] }).toEqual({ name, active: true, sub: tokens.userId });
        expect({ name, userinfo: (await userinfo(node, token)).status, api: (await readSelf(node, token, tokens.userId)).status }).toEqual({ name, userinfo: 200, api: 200 });
      }
    }
    for (const [name, token] of Object.entries(tokens.access)) expect({ name, status: (await exchange(b, token)).status }).toEqual({ name, status: 200 });
    for (const token of tokens.id) expect((await exchange(b, token, TOKEN_TYPE.id)).status).toBe(200);
    if (tokens.browser) for (const node of [a, b]) expect(await silentSignIn(node, tokens.browser)).toEqual({ code: expect.any(String), error: null });
  }

  /** Every token is refused on both nodes, by every endpoint that takes it, and the browser session is over. */
  async function expectRefused(tokens: UserTokens): Promise<void> {
    for (const node of [b, a]) {
      const where = node === a ? 'node a' : 'node b';
      for (const [name, token] of Object.entries(tokens.access)) {
        expect({ where, name, introspection: (await introspect(node, token)).json }).toEqual({ where, name, introspection: INACTIVE });
        const info = await userinfo(node, token);
        expect({ where, name, userinfo: info.status, error: info.json['error'] }).toEqual({ where, name, userinfo: 401, error: 'invalid_token' });
        expect({ where, name, api: (await readSelf(node, token, tokens.userId)).status }).toEqual({ where, name, api: 401 });
        const exchanged = await exchange(node, token);
        expect({ where, name, exchange: exchanged.status, body: exchanged.json }).toEqual({ where, name, exchange: 400, body: INVALID_SUBJECT });
      }
      for (const token of tokens.id) {
        const exchanged = await exchange(node, token, TOKEN_TYPE.id);
        expect({ where, name: 'ID token', exchange: exchanged.status, body: exchanged.json }).toEqual({ where, name: 'ID token', exchange: 400, body: INVALID_SUBJECT });
      }
      for (const { app, token } of tokens.refresh) {
        const refreshed = await refresh(node, app, token);
        expect({ where, app, refresh: refreshed.status, body: refreshed.json }).toEqual({ where, app, refresh: 400, body: INVALID_GRANT });
      }
      // the browser session is over too
      if (tokens.browser) expect({ where, session: await silentSignIn(node, tokens.browser) }).toEqual({ where, session: { code: null, error: 'login_required' } });
    }
  }

  /** Waits until node b calls the token inactive (at once, or when the announcement arrives); fails after 1 s. */
  async function inactiveOnB(token: string): Promise<void> {
    const started = Date.now();
    while ((await introspect(b, token)).json['active'] !== false) {
      if (Date.now() - started > 1000) throw new Error('node b still calls the token active after 1 s');
      await sleep(10);
    }
  }

  /**
   * What node b's change poll does within a second of a change it is not told of at once (a user
   * made active again: that ends nothing). Its poll is slowed to a minute in this suite.
   */
  function changePollOnB(): void {
    b.running.gh.directory.clear();
  }

  // --- the cases --------------------------------------------------------------------------------

  describe(`ending the access of a user with ${BULK_TOKENS.toLocaleString('en')} live stored tokens`, () => {
    it('DeactivateUser answers within a second; every token of the human is refused on both nodes, and stays refused once reactivated', async () => {
      const tokens = await humanTokens(USERS.carol);
      // three of the bulk tokens: the newest, one from the middle, the oldest
      for (const n of [1, BULK_TOKENS / 2, BULK_TOKENS]) tokens.access[`stored token ${n} of ${BULK_TOKENS}`] = bulkToken(USERS.carol, n);
      // a refresh (rotating the web family) and a token exchange give two more access tokens
      const refreshed = await refresh(a, 'cut-web', tokens.refresh[0]!.token);
      expect(refreshed.status).toBe(200);
      tokens.refresh[0]!.token = String(refreshed.json['refresh_token']);
      tokens.access['access token from a refresh'] = String(refreshed.json['access_token']);
      const exchanged = await exchange(a, tokens.access['JWT access token']!);
      expect(exchanged.status).toBe(200);
      tokens.access['access token from a token exchange'] = String(exchanged.json['access_token']);
      await expectAccepted(tokens);

      const { reply, ms } = await manage('POST', `${USERS.carol}/deactivate`, {});
      expect(reply.status).toBe(200);
      expect(ms).toBeLessThan(1000);
      const cutOff = Date.now();

      await inactiveOnB(tokens.access['opaque access token']!);
      await expectRefused(tokens);

      expect((await manage('POST', `${USERS.carol}/reactivate`, {})).reply.status).toBe(200);
      changePollOnB();
      await expectRefused(tokens);
      // the user itself is active again: a new sign-in's tokens work on both nodes
      await afterTheSecondOf(cutOff);
      await expectAccepted(await humanTokens(USERS.carol));
    });

    it('DeactivateUser of busy machine users: their client_credentials tokens, opaque and JWT, are refused on both nodes, and stay refused once reactivated', async () => {
      // busy-bot holds the bulk tokens; jwt-bot's tokens are JWTs, which are not stored
      const busy: UserTokens = {
        userId: USERS.busyBot,
        access: { 'opaque client_credentials token': await machineToken('busy-bot'), 'stored token 1': bulkToken(USERS.busyBot, 1), [`stored token ${BULK_TOKENS}`]: bulkToken(USERS.busyBot, BULK_TOKENS) },
        refresh: [],
        id: [],
      };
      const jwt: UserTokens = { userId: USERS.jwtBot, access: { 'JWT client_credentials token': await machineToken('jwt-bot') }, refresh: [], id: [] };
      expect(jwt.access['JWT client_credentials token']).toContain('.');
      await expectAccepted(busy);
      await expectAccepted(jwt);

      for (const userId of [USERS.busyBot, USERS.jwtBot]) {
        const { reply, ms } = await manage('POST', `${userId}/deactivate`, {});
        expect(reply.status).toBe(200);
        expect(ms).toBeLessThan(1000);
      }
      const cutOff = Date.now();
      await inactiveOnB(busy.access['opaque client_credentials token']!);
      await expectRefused(busy);
      await expectRefused(jwt);

      for (const userId of [USERS.busyBot, USERS.jwtBot]) expect((await manage('POST', `${userId}/reactivate`, {})).reply.status).toBe(200);
      changePollOnB();
      await expectRefused(busy);
      await expectRefused(jwt);
      await afterTheSecondOf(cutOff);
      await expectAccepted({ ...busy, access: { 'a new token': await machineToken('busy-bot') } });
      await expectAccepted({ ...jwt, access: { 'a new token': await machineToken('jwt-bot') } });
    });

    it('LockUser answers within a second; the tokens are refused on both nodes, and stay refused once unlocked', async () => {
      const tokens = await humanTokens(USERS.carol);
      await expectAccepted(tokens);
      const { reply, ms } = await manage('POST', `${USERS.carol}/lock`, {});
      expect(reply.status).toBe(200);
      expect(ms).toBeLessThan(1000);
      const cutOff = Date.now();
      await inactiveOnB(tokens.access['opaque access token']!);
      await expectRefused(tokens);

      expect((await manage('POST', `${USERS.carol}/unlock`, {})).reply.status).toBe(200);
      changePollOnB();
      await expectRefused(tokens);
      await afterTheSecondOf(cutOff);
    });

    it('SetPassword by an administrator answers within a second and ends every earlier token on both nodes', async () => {
      const tokens = await humanTokens(USERS.carol);
      await expectAccepted(tokens);
      const { reply, ms } = await manage('POST', `${USERS.carol}/password`, { newPassword: { password: 'Another-Horse-7' } });
      expect(reply.status).toBe(200);
      expect(ms).toBeLessThan(1000);
      const cutOff = Date.now();
      await inactiveOnB(tokens.access['opaque access token']!);
      await expectRefused(tokens);
      // the user stays active: a sign-in after it gets tokens that work on both nodes
      await afterTheSecondOf(cutOff);
      await expectAccepted(await humanTokens(USERS.carol));
    });

    it('DeleteUser answers within a second; the tokens are refused on both nodes', async () => {
      const tokens = await humanTokens(USERS.carol);
      await expectAccepted(tokens);
      const { reply, ms } = await manage('DELETE', USERS.carol);
      expect(reply.status).toBe(200);
      expect(ms).toBeLessThan(1000);
      await inactiveOnB(tokens.access['opaque access token']!);
      await expectRefused(tokens);
    });
  });

  describe('a statement past GATEHOUSE_STATEMENT_TIMEOUT_MS (300 ms on node c)', () => {
    /** Statements of this database running pg_sleep now, seen from a connection of our own. */
    async function sleepers(): Promise<number> {
      const { rows } = await onDatabase(databaseUrl, (db) =>
        db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and state = 'active' and query ilike '%pg_sleep%' and pid <> pg_backend_pid()`,
        ),
      );
      return rows[0]!.n;
    }

    /** The error a statement of node c's pool failed with, and when. */
    async function failure(statement: Promise<unknown>): Promise<{ code: unknown; ms: number }> {
      const started = performance.now();
      try {
        await statement;
      } catch (error) {
        return { code: (error as { code?: unknown }).code, ms: performance.now() - started };
      }
      throw new Error('the statement succeeded');
    }

    it('is cancelled in PostgreSQL (57014) and gone from pg_stat_activity; the pool then serves every next query', async () => {
      const { code, ms } = await failure(sql`select pg_sleep(5)`.execute(c.running.gh.db));
      expect(code).toBe('57014');
      expect(ms).toBeLessThan(2000);
      expect(await sleepers()).toBe(0);

      const { result, ms: next } = await timed(() => Promise.all(Array.from({ length: POOL_SIZE }, () => sql<{ one: number }>`select 1 as one`.execute(c.running.gh.db))));
      expect(result.map((r) => r.rows[0]?.one)).toEqual(Array.from({ length: POOL_SIZE }, () => 1));
      expect(next).toBeLessThan(2000);
    });

    it('a slow statement on every connection of the pool at once: all are cancelled, and the pool serves the next queries', async () => {
      const { result: failures, ms } = await timed(() => Promise.all(Array.from({ length: POOL_SIZE }, () => failure(sql`select pg_sleep(5)`.execute(c.running.gh.db)))));
      expect(failures.map((f) => f.code)).toEqual(Array.from({ length: POOL_SIZE }, () => '57014'));
      expect(ms).toBeLessThan(3000);
      expect(await sleepers()).toBe(0);

      const { result, ms: next } = await timed(() => Promise.all(Array.from({ length: POOL_SIZE }, () => sql<{ one: number }>`select 1 as one`.execute(c.running.gh.db))));
      expect(result.map((r) => r.rows[0]?.one)).toEqual(Array.from({ length: POOL_SIZE }, () => 1));
      expect(next).toBeLessThan(2000);
    });

    it('a request whose statement waits past it answers 503 Unavailable, as in an outage, and succeeds once it can go on', async () => {
      const deactivate = () => request(`${c.url}/v2/users/${USERS.dave}/deactivate`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: '{}' });
      // another session holds dave's row: DeactivateUser waits for it
      const holder = new pg.Client({ connectionString: databaseUrl });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select id from users where id = $1 for update', [USERS.dave]);
        const { result: reply, ms } = await timed(deactivate);
        expect({ status: reply.status, message: reply.json['message'] }).toEqual({ status: 503, message: 'service temporarily unavailable' });
        expect(ms).toBeLessThan(3000);
        await holder.query('rollback');
      } finally {
        await holder.end();
      }
      expect((await deactivate()).status).toBe(200);
    });
  });

  describe('pruning what has expired', () => {
    /**
     * The first round of `runner` that is not skipped: each server's housekeeping takes the same lock
     * every minute, for a moment when there is nothing to prune.
     */
    async function firstRound<T>(runner: ExclusiveRunner, work: (db: DB) => Promise<T>): Promise<T | undefined> {
      for (let round = 0; ; round++) {
        const result = await runner.run(PRUNE_LOCK, work);
        if (result !== undefined || round === 20) return result;
        await sleep(50);
      }
    }

    /** A round of `runner` that holds the prune lock until `gate` opens, then does `work`; resolves once the lock is held. */
    async function holdingTheLock<T>(runner: ExclusiveRunner, gate: Promise<void>, work: (db: DB) => Promise<T>): Promise<{ pruning: Promise<T | undefined> }> {
      for (let round = 0; round < 20; round++) {
        let lockHeld!: () => void;
        const held = new Promise<'held'>((resolve) => (lockHeld = () => resolve('held')));
        const pruning = runner.run(PRUNE_LOCK, async (own) => {
          lockHeld();
          await gate;
          return work(own);
        });
        const skipped = pruning.then(
          () => 'skipped' as const,
          () => 'skipped' as const, // a failed round is retried too
        );
        if ((await Promise.race([held, skipped])) === 'held') return { pruning };
        await sleep(50);
      }
      throw new Error('the prune lock stayed taken');
    }

    it('one process at a time, in bounded batches on a connection of its own, while the request pool answers at once', async () => {
      const observer = new pg.Client({ connectionString: databaseUrl });
      await observer.connect();
      const count = async (query: string): Promise<number> => (await observer.query<{ n: number }>(query)).rows[0]!.n;
      // token rows stay a day past their expiry (server/jobs.ts)
      const expiredTokens = () => count(`select count(*)::int as n from tokens where expires_at < now() - interval '1 day'`);
      const keptTokens = () => count(`select count(*)::int as n from tokens where expires_at >= now() - interval '1 day'`);
      const expiredOthers = () =>
        count(`select ((select count(*) from revocations where expires_at < now()) + (select count(*) from used_assertions where expires_at < now()))::int as n`);
      const runnerA = exclusiveRunner(databaseUrl, a.running.gh.db, 10_000);
      const runnerB = exclusiveRunner(databaseUrl, a.running.gh.db, 10_000);
      try {
        let goOn!: () => void;
        const gate = new Promise<void>((resolve) => (goOn = resolve));
        // runner A takes the lock and holds it until `goOn`, then prunes
        const { pruning } = await holdingTheLock(runnerA, gate, (own) => pruneExpired(own, new Date(), { batch: 1000, pauseMs: 0 }));

        // While runner A holds the lock (no server's housekeeping prunes meanwhile): expired rows of
        // every kind, and rows the prune must keep (live, or expired less than a day ago).
        await observer.query(
          `insert into tokens (id, instance_id, kind, token_hash, client_id, subject, scopes, audience, created_at, expires_at)
           select 'expired-' || i, $1, 'access', encode(sha256(uuid_send(gen_random_uuid())), 'hex'), 'busy-bot', $2, array['openid'], array[$3],
                  now() - interval '2 days 12 hours', now() - interval '2 days'
           from generate_series(1, $4::int) as i
           union all
           select 'recent-' || i, $1, 'access', encode(sha256(uuid_send(gen_random_uuid())), 'hex'), 'busy-bot', $2, array['openid'], array[$3],
                  now() - interval '13 hours', now() - interval '1 hour'
           from generate_series(1, 100) as i`,
          [a.running.gh.instanceId, USERS.busyBot, IDS.project, EXPIRED_TOKENS],
        );
        await observer.query(
          `insert into revocations (id, kind, expires_at, created_at)
           select 'expired-revocation-' || i, 'access_token', now() - interval '2 days' + interval '1 hour' * (i % 2), now() - interval '3 days' from generate_series(1, 1500) as i
           union all select 'live-revocation-' || i, 'access_token', now() + interval '1 hour', now() from generate_series(1, 10) as i`,
        );
        await observer.query(
          `insert into used_assertions (id, expires_at)
           select 'expired-assertion-' || i, now() - interval '1 hour' from generate_series(1, 1500) as i
           union all select 'live-assertion-' || i, now() + interval '1 hour' from generate_series(1, 10) as i`,
        );
        expect(await expiredTokens()).toBe(EXPIRED_TOKENS);
        const expected = EXPIRED_TOKENS + (await expiredOthers());
        const kept = await keptTokens();
        expect(kept).toBeGreaterThan(2 * BULK_TOKENS);

        // a second process finds the lock taken: it skips the round at once, its work never runs
        let ranOnB = false;
        const skipped = await timed(() => runnerB.run(PRUNE_LOCK, async () => (ranOnB = true)));
        expect({ result: skipped.result, ranOnB }).toEqual({ result: undefined, ranOnB: false });
        expect(skipped.ms).toBeLessThan(2000);

        // the prune runs; meanwhile a query on the server's pool every ~10 ms, and an observer of
        // the expired token rows left (each batch commits on its own: always a whole number of batches)
        let done = false;
        const latencies: number[] = [];
        const left: number[] = [];
        const probe = (async () => {
          while (!done) {
            const { ms } = await timed(() => sql`select 1`.execute(a.running.gh.db));
            latencies.push(ms);
            await sleep(10);
          }
        })();
        const watch = (async () => {
          while (!done) {
            left.push(await expiredTokens());
            await sleep(10);
          }
        })();
        goOn();
        const deleted = await pruning.finally(() => (done = true));
        await Promise.all([probe, watch]);

        expect(deleted).toBe(expected);
        expect(await expiredTokens()).toBe(0);
        expect(await expiredOthers()).toBe(0);
        expect(await keptTokens()).toBe(kept);
        expect(left.filter((n) => n % 1000 !== 0)).toEqual([]);
        expect(left.some((n) => n > 0 && n < EXPIRED_TOKENS)).toBe(true);
        expect(latencies.length).toBeGreaterThan(0);
        expect(Math.max(...latencies)).toBeLessThan(500);

        // the lock was let go: the other process's next round runs
        expect(await firstRound(runnerB, async () => 'ran')).toBe('ran');
      } finally {
        await runnerA.close();
        await runnerB.close();
        await observer.end();
      }
    });
  });
});
