/**
 * `npm run bench:scale`: whether Gatehouse's cost stays flat as its data grows. A fresh PostgreSQL
 * database is migrated and bootstrapped by Gatehouse, then grown size after size (seed.ts: set-based
 * inserts, users and stored tokens in Gatehouse's own shapes); each size but the last is kept as a
 * copy of the database (`create database … template`), the last is the grown database itself. Then
 * one server per size database starts (cold, equal caches), each pinned to core 0 as `npm run bench`
 * pins it, and the sizes are measured side by side, path by path: autocannon on core 1 loads each
 * size's server in turn, round after round, so that a path's figures at every size come from the
 * same few minutes and the machine's drift over the half hour of a run stays out of their ratios.
 * The paths: the token endpoint, introspection and userinfo with one token (cached) and with a
 * different seeded token per request (uncached), and the management API's user lists, reads and a
 * write. At the largest size the token endpoint is measured again while the server prunes a million
 * expired token rows. Prints one Markdown table: req/s and p99 per path and size, and the ratio to
 * the empty database; then the sizes, how long each growth took, and the checks that the uncached
 * paths missed the caches.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; fresh
 * databases are created on it and dropped at the end, unless BENCH_KEEP=1), BENCH_SCALE_SIZES
 * (users:tokens, comma-separated; default 0:0,30000:300000,100000:1000000,1000000:10000000),
 * BENCH_SECONDS (default 4), BENCH_REPEATS (rounds per path, default 3: in each, every size runs
 * once, and the fastest run per size counts), BENCH_CONNECTIONS (default 32), BENCH_ONLY (a regular
 * expression of path names; `prune` names the pruning measurement), BENCH_PRUNE_ROWS (expired token
 * rows for the pruning measurement, default 1,000,000).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { stringify } from 'yaml';
import { codeFlow, passwordSignIn } from '../code-flow.ts';
import { nodeOnServerCore, pin, pinned, sleep, stopChild, waitFor } from '../processes.ts';
import { growTo, seedExpiredTokens, seededTokenPlaintext, seededUser, type GrowthReport } from './seed.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const seconds = Number(process.env['BENCH_SECONDS'] ?? 4);
const repeats = Math.max(1, Number(process.env['BENCH_REPEATS'] ?? 3));
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const baseUrl = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const keep = process.env['BENCH_KEEP'] === '1';
const pruneRows = Number(process.env['BENCH_PRUNE_ROWS'] ?? 1_000_000);
const only = process.env['BENCH_ONLY'] ? new RegExp(process.env['BENCH_ONLY'], 'i') : undefined;
const wanted = (name: string) => only === undefined || only.test(name);
const SEED = 'gatehouse-scale';
const WARM_UP_SECONDS = 2;
/** The first size's server; the next sizes' listen on the ports after it. */
const PORT = 18090;
const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
/** How long PostgreSQL may keep a backend's statistics before it reports them (PGSTAT_IDLE_INTERVAL), plus a margin. */
const STATS_FLUSH_MS = 11_000;

interface Size {
  users: number;
  tokens: number;
  label: string;
}

function short(value: number): string {
  if (value >= 1_000_000 && value % 100_000 === 0) return `${value / 1_000_000}M`;
  if (value >= 1_000 && value % 100 === 0) return `${value / 1_000}k`;
  return String(value);
}

function parseSizes(text: string): Size[] {
  const sizes = text.split(',').map((item) => {
    const [users, tokens] = item.split(':').map((part) => Number(part.trim()));
    if (!Number.isSafeInteger(users) || !Number.isSafeInteger(tokens) || users! < 0 || tokens! < 0) throw new Error(`BENCH_SCALE_SIZES: "${item}" is not users:tokens`);
    return { users: users!, tokens: tokens!, label: `${short(users!)}:${short(tokens!)}` };
  });
  for (let i = 1; i < sizes.length; i++) {
    const [from, to] = [sizes[i - 1]!, sizes[i]!];
    // Each size is a database of its own, named after its label.
    if (to.users < from.users || to.tokens < from.tokens || to.label === from.label) throw new Error('BENCH_SCALE_SIZES must grow');
  }
  return sizes;
}

const sizes = parseSizes(process.env['BENCH_SCALE_SIZES'] ?? '0:0,30000:300000,100000:1000000,1000000:10000000');

interface Result {
  rps: number;
  p99: number;
  /** Connection errors, timeouts, non-2xx answers, and answers the path's check refused (an inactive token). */
  errors: number;
  requests: number;
  /** CPU other processes took during the run, in cores (0.25: a quarter of one core): a shared machine's noise. */
  others: number;
}

/** Above this share of a core taken by other processes, a figure is marked as disturbed. */
const DISTURBED = 0.1;
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (utime + stime, clock ticks) of every process, from /proc. */
function cpuTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}

/**
 * What the other processes of the machine took while `work` ran, in cores: every process but the
 * server, this load generator and PostgreSQL's processes (except the backends of other databases,
 * which count as others).
 */
async function measuredAlone<T>(db: pg.Client | undefined, serverPid: number | undefined, work: () => Promise<T>): Promise<{ value: T; others: number }> {
  if (!fs.existsSync('/proc/self/stat')) return { value: await work(), others: Number.NaN };
  const before = cpuTicks();
  const started = performance.now();
  const value = await work();
  const after = cpuTicks();
  const elapsed = (performance.now() - started) / 1000;
  const foreign = new Set<number>();
  if (db) {
    for (const row of await query<{ pid: number }>(db, 'select pid from pg_stat_activity where datname is not null and datname <> current_database()')) foreign.add(row.pid);
  }
  const ours = (pid: number) => {
    if (pid === process.pid || pid === serverPid) return true;
    if (foreign.has(pid)) return false;
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
    } catch {
      return false;
    }
  };
  let ticks = 0;
  for (const [pid, total] of after) if (!ours(pid)) ticks += total - (before.get(pid) ?? 0);
  return { value, others: ticks / CLOCK_TICKS / elapsed };
}

interface Reads {
  tokens: number;
  users: number;
}

const log = (line: string) => process.stderr.write(`[bench:scale] ${line}\n`);

/** What a run watches: the database whose backends are the measured server's, and the server. */
interface Watch {
  db: pg.Client;
  serverPid: number | undefined;
}

async function run(
  options: autocannon.Options,
  duration: number,
  check?: (body: string) => boolean,
  watch?: Watch,
  clients = connections,
): Promise<Result> {
  let refused = 0;
  const { value: result, others } = await measuredAlone(watch?.db, watch?.serverPid, () => autocannon({
    // Slow answers are measured, not cut off (the server's statement timeout still applies).
    timeout: 60,
    ...options,
    duration,
    connections: clients,
    ...(check ? { requests: (options.requests ?? [{}]).map((request) => ({ ...request, onResponse: (status: number, body: string) => void (status === 200 && !check(body) && refused++) })) } : {}),
  }));
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx + refused, requests: result.requests.total, others };
}

/**
 * The fastest of some runs is the figure, since a shared machine's noise only ever slows a run down
 * (on a 2-vCPU cloud machine, one path's rate moved by up to 1.8× between consecutive runs on the
 * same server); the errors and requests are all runs'.
 */
function fastest(runs: readonly Result[]): Result {
  const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
  return { ...best, errors: runs.reduce((sum, r) => sum + r.errors, 0), requests: runs.reduce((sum, r) => sum + r.requests, 0) };
}

/** A 2 s warm-up, so that JIT, pools and caches settle, then `repeats` runs of `seconds`, the fastest counting. */
async function load(options: autocannon.Options, watch: Watch): Promise<Result> {
  await run(options, WARM_UP_SECONDS);
  const runs: Result[] = [];
  for (let i = 0; i < repeats; i++) runs.push(await run(options, seconds, undefined, watch));
  return fastest(runs);
}

/** One size's load of a path. */
interface Slot {
  options: autocannon.Options;
  watch: Watch;
}

interface SlotResult {
  /** The fastest run at BENCH_CONNECTIONS. */
  loaded: Result;
  /** The fastest run with one client, when asked for. */
  alone: Result | undefined;
  /** Every request of the slot's runs, warm-ups included. */
  requests: number;
}

/**
 * A path at every size side by side: `repeats` rounds, each running every slot once (a 2 s warm-up,
 * since the server was idle while the others ran, then a run of `seconds`, then one with one client
 * when `alone`), each round starting one slot further on, so that no size is always first. The
 * fastest run per slot counts. A path's figures at all sizes thus come from the same few minutes,
 * and their ratios do not carry the machine's drift between the sizes.
 */
async function interleaved(slots: readonly Slot[], check: ((body: string) => boolean) | undefined, alone: boolean): Promise<SlotResult[]> {
  const runs = slots.map(() => ({ loaded: [] as Result[], alone: [] as Result[], requests: 0 }));
  for (let round = 0; round < repeats; round++) {
    for (let k = 0; k < slots.length; k++) {
      const i = (round + k) % slots.length;
      const { options, watch } = slots[i]!;
      const mine = runs[i]!;
      mine.requests += (await run(options, WARM_UP_SECONDS, check)).requests;
      mine.loaded.push(await run(options, seconds, check, watch));
      if (alone) mine.alone.push(await run(options, seconds, check, watch, 1));
    }
  }
  return runs.map((mine) => ({
    loaded: fastest(mine.loaded),
    alone: mine.alone.length > 0 ? fastest(mine.alone) : undefined,
    requests: mine.requests + [...mine.loaded, ...mine.alone].reduce((sum, r) => sum + r.requests, 0),
  }));
}

// ---- the database and the server ----

const CEILING = 'ceiling: bare node:http';
const CEILING_PORT = 18089;

/**
 * The machine's own speed: bare node:http (bench/ceilings.ts) pinned to core 0 as the servers are,
 * loaded the same way, in the rounds of a path, once in each size's place. The one server answers
 * every size, so its ratios are the noise that is left in the paths' ratios.
 */
async function measureCeiling(ctxs: readonly Context[]): Promise<Result[]> {
  const command = nodeOnServerCore();
  const child = spawn(command[0]!, [...command.slice(1), path.join(root, 'bench/ceilings.ts'), 'node', String(CEILING_PORT)], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await waitFor(`http://127.0.0.1:${CEILING_PORT}/`, 30_000);
    const options = { url: `http://127.0.0.1:${CEILING_PORT}/` };
    const outcomes = await interleaved(ctxs.map((ctx) => ({ options, watch: { db: ctx.db, serverPid: child.pid } })), undefined, false);
    return outcomes.map((outcome) => outcome.loaded);
  } finally {
    await stopChild(child);
  }
}

class Server {
  #child: ChildProcess | undefined;
  readonly #env: NodeJS.ProcessEnv;
  readonly #bootstrap: string;
  /** http://localhost:<port>: a host name, as `npm run bench` has it. */
  readonly base: string;

  constructor(env: NodeJS.ProcessEnv, bootstrap: string) {
    this.#env = env;
    this.#bootstrap = bootstrap;
    this.base = env['GATEHOUSE_EXTERNAL_URL']!;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts Gatehouse pinned to core 0 (every thread it starts is on core 0 too), as `npm start` runs it. */
  async start(): Promise<number> {
    const command = nodeOnServerCore();
    const started = performance.now();
    this.#child = spawn(command[0]!, [...command.slice(1), path.join(root, 'src/main.ts'), 'start', '--bootstrap', this.#bootstrap], {
      cwd: root,
      env: this.#env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<never>((_, reject) => this.#child!.once('exit', (code) => reject(new Error(`the server exited (${code})`))));
    exited.catch(() => undefined);
    await Promise.race([waitFor(`${this.base}/healthz`, 120_000), exited]);
    return (performance.now() - started) / 1000;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child) await stopChild(child);
  }
}

/** A server on database `dbUrl`, listening on `port`, with a data folder of its own under `dir`. */
function serverOn(dir: string, dbUrl: string, port: number): Server {
  const dataDir = path.join(dir, String(port));
  fs.mkdirSync(dataDir, { recursive: true });
  const base = `http://localhost:${port}`;
  return new Server(
    {
      NODE_OPTIONS: '--max-semi-space-size=4',
      ...process.env,
      DATABASE_URL: dbUrl,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_EXTERNAL_URL: base,
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
      GATEHOUSE_KEYS_RATE_LIMIT: '0',
      GATEHOUSE_LOG_LEVEL: 'warn',
    },
    path.join(dir, 'bootstrap.yaml'),
  );
}

function bootstrapFile(): object {
  return {
    orgs: [
      {
        name: 'Bench',
        domain: 'bench.test',
        users: [{ userName: 'alice', password: 'Correct-Horse-9', email: 'alice@bench.test', emailVerified: true }],
        machines: [
          { userName: 'admin-bot', secret: 'admin-bot-secret', accessTokenType: 'jwt', roles: ['IAM_OWNER'] },
          { userName: 'jwt-bot', secret: 'jwt-bot-secret', accessTokenType: 'jwt' },
          { userName: 'opaque-bot', secret: 'opaque-bot-secret', accessTokenType: 'opaque' },
        ],
        projects: [
          {
            name: 'bench',
            apps: [
              { name: 'api', clientId: 'bench-api', clientSecret: 'bench-api-secret', type: 'api', authMethod: 'client_secret_basic' },
              // The applications of the seeded users' tokens (opaque); scale-web also signs alice in.
              ...['scale-web', 'scale-portal'].map((clientId) => ({
                name: clientId,
                clientId,
                clientSecret: `${clientId}-secret`,
                authMethod: 'client_secret_basic',
                redirectUris: ['http://127.0.0.1:18099/callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
                accessTokenType: 'opaque',
              })),
            ],
          },
        ],
      },
    ],
  };
}

async function query<T extends pg.QueryResultRow>(client: pg.Client, text: string, values: unknown[] = []): Promise<T[]> {
  return (await client.query<T>(text, values)).rows;
}

/** Index scans of the token-hash index and the users' primary key so far (PostgreSQL's statistics). */
async function readsSoFar(client: pg.Client): Promise<Reads> {
  const rows = await query<{ relname: string; scans: string }>(
    client,
    `select i.relname, s.idx_scan::text as scans from pg_stat_user_indexes s join pg_class i on i.oid = s.indexrelid
     join pg_index x on x.indexrelid = s.indexrelid join pg_attribute a on a.attrelid = x.indrelid and a.attnum = x.indkey[0]
     where (s.relname = 'tokens' and a.attname = 'token_hash') or (s.relname = 'users' and x.indisprimary)`,
  );
  const scans = (table: string) => Number(rows.find((row) => row.relname.startsWith(table))?.scans ?? Number.NaN);
  return { tokens: scans('tokens'), users: scans('users') };
}

interface TableSize {
  users: number;
  tokens: number;
  usersBytes: number;
  tokensBytes: number;
  events: number;
}

async function tableSizes(client: pg.Client): Promise<TableSize> {
  const [row] = await query<Record<keyof TableSize, string>>(
    client,
    `select (select count(*) from users)::text as users, (select count(*) from tokens)::text as tokens,
       pg_total_relation_size('users')::text as "usersBytes", pg_total_relation_size('tokens')::text as "tokensBytes",
       (select count(*) from events)::text as events`,
  );
  return { users: Number(row!.users), tokens: Number(row!.tokens), usersBytes: Number(row!.usersBytes), tokensBytes: Number(row!.tokensBytes), events: Number(row!.events) };
}

// ---- what the paths present ----

/** A walk over 0…count-1 that visits each once, in a scattered order (a stride coprime with count). */
function scattered(count: number): (i: number) => number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let stride = Math.max(1, Math.floor(count * 0.618034));
  while (count > 1 && gcd(stride, count) !== 1) stride++;
  return (i) => (i * stride) % count;
}

/**
 * Live seeded access tokens of human users (all carry `openid`), each handed out once: the decades
 * are walked in a scattered order, so consecutive tokens are of different users; the five access
 * tokens of a decade are used in five rounds. Decades d % 5 = 0 hold expired access tokens and are
 * skipped (seed.ts).
 */
class RotatingTokens {
  readonly #decades: number;
  readonly #walk: (i: number) => number;
  #next = 0;
  /** How many times every token was handed out: after the first, tokens may come from the server's caches. */
  laps = 0;

  constructor(seededTokens: number) {
    this.#decades = Math.floor(seededTokens / 10);
    this.#walk = scattered(this.#decades);
  }

  get available(): boolean {
    return this.#decades >= 5;
  }

  next(): string {
    for (;;) {
      const i = this.#next++;
      const round = Math.floor(i / this.#decades) % 5;
      if (i > 0 && i % (this.#decades * 5) === 0) {
        this.laps++;
        log('the rotating tokens were all used once: starting over (they may now hit the cache)');
      }
      const decade = this.#walk(i % this.#decades);
      if (decade % 5 === 0) continue;
      return seededTokenPlaintext(SEED, decade * 10 + round);
    }
  }
}

/** Seeded users in a scattered order, humans only when asked. */
function rotatingUsers(seededUsers: number, humans: boolean): () => ReturnType<typeof seededUser> {
  const walk = scattered(seededUsers);
  let i = 0;
  return () => {
    for (;;) {
      const user = seededUser(walk(i++ % seededUsers));
      if (!humans || user.kind === 'human') return user;
    }
  };
}

/** The longest of the candidates a string of at least `least` of the user names user0…user<count-1> has (startsWith or includes). */
function selective(count: number, candidates: readonly string[], matches: (name: string, value: string) => boolean, least = 100): { value: string; count: number } {
  let best = { value: candidates[0]!, count: 0 };
  for (const value of candidates) {
    let found = 0;
    for (let n = 0; n < count; n++) if (matches(`user${n}`, value)) found++;
    if (found >= least || best.count === 0) best = { value, count: found };
    if (found < least) break;
  }
  return best;
}

// ---- the paths ----

/** 0 → a, 25 → z, 26 → ba, … */
function letters(value: number): string {
  let text = '';
  do {
    text = String.fromCharCode(97 + (value % 26)) + text;
    value = Math.floor(value / 26);
  } while (value > 0);
  return text;
}

interface Context {
  size: Size;
  sizeIndex: number;
  /** The size's server. */
  base: string;
  /** A connection to the size's database. */
  db: pg.Client;
  seededUsers: number;
  seededTokens: number;
  ownerBearer: string;
  jwtToIntrospect: string;
  opaqueToIntrospect: string;
  /** alice's opaque access token from a code flow with scale-web (openid). */
  userToken: string;
  bootstrapUserIds: string[];
  benchOrgId: string;
  rotating: RotatingTokens;
  serverPid: number | undefined;
}

interface Path {
  name: string;
  /** The load, or undefined when the size has nothing to present (no seeded tokens). */
  options(ctx: Context): autocannon.Options | undefined;
  /** A 200 answer that does not pass counts as an error. */
  check?: (body: string) => boolean;
  /** Reads of tokens and users per request are reported (whether the path misses the caches). */
  countReads?: boolean;
  /** Answers a page of 100 users once there are enough. */
  fullPage?: boolean;
  /** Also measured with one client at a time: the time one request takes on a server that is not saturated. */
  alone?: boolean;
  /** One request before the load: its answer must pass (returns a note, or throws). */
  preflight?: (ctx: Context) => Promise<string | undefined>;
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const json = (bearer: string) => ({ authorization: `Bearer ${bearer}`, 'content-type': 'application/json' });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const api = { ...form, authorization: basic('bench-api', 'bench-api-secret') };
const active = (body: string) => body.startsWith('{"active":true');

async function post(base: string, pathname: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}${pathname}`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.text() };
}

async function clientCredentials(base: string, user: string, secret: string, scope: string): Promise<string> {
  const answer = await post(base, '/oauth/v2/token', { ...form, authorization: basic(user, secret) }, `grant_type=client_credentials&scope=${encodeURIComponent(scope)}`);
  if (answer.status !== 200) throw new Error(`client_credentials for ${user}: ${answer.status} ${answer.body}`);
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
}

function listUsers(ctx: Context, queries: unknown[] | ((i: number) => unknown[])): autocannon.Options {
  const body = (q: unknown[]) => JSON.stringify({ query: { limit: 100 }, ...(q.length > 0 ? { queries: q } : {}) });
  if (Array.isArray(queries)) return { url: `${ctx.base}/v2/users`, method: 'POST', headers: json(ctx.ownerBearer), body: body(queries) };
  let i = 0;
  return {
    url: ctx.base,
    requests: [{ method: 'POST', path: '/v2/users', headers: json(ctx.ownerBearer), setupRequest: (request) => ({ ...request, body: body(queries(i++)) }) }],
  };
}

/** The number of users a list request matches, as the API counts them (details.totalResult). */
async function totalOf(ctx: Context, queries: unknown[]): Promise<number> {
  const answer = await post(ctx.base, '/v2/users', json(ctx.ownerBearer), JSON.stringify({ query: { limit: 1 }, queries }));
  if (answer.status !== 200) throw new Error(`ListUsers: ${answer.status} ${answer.body}`);
  return Number((JSON.parse(answer.body) as { details?: { totalResult?: string } }).details?.totalResult ?? 0);
}

/** The seeded users with an authorization (seed.ts: n % 10 < 5). */
function seededAuthorizations(users: number): number {
  return Math.floor(users / 10) * 5 + Math.min(users % 10, 5);
}

/** Seeded users with an authorization in a scattered order; the bootstrap's alice (none) in the empty database. */
function authorizedUsers(ctx: Context): () => string {
  if (ctx.seededUsers === 0) return () => ctx.bootstrapUserIds[0]!;
  const walk = scattered(seededAuthorizations(ctx.seededUsers));
  let i = 0;
  return () => {
    const k = walk(i++ % seededAuthorizations(ctx.seededUsers));
    return seededUser(Math.floor(k / 5) * 10 + (k % 5)).id;
  };
}

/** The number of authorizations a list request matches, as the API counts them (pagination.totalResult). */
async function authorizationsOf(ctx: Context, filters: unknown[]): Promise<number> {
  const answer = await post(ctx.base, '/v2beta/authorizations/search', json(ctx.ownerBearer), JSON.stringify({ pagination: { limit: 1 }, filters }));
  if (answer.status !== 200) throw new Error(`ListAuthorizations: ${answer.status} ${answer.body}`);
  return Number((JSON.parse(answer.body) as { pagination?: { totalResult?: string } }).pagination?.totalResult ?? 0);
}

const userNameQuery = (userName: string, method: string) => ({ userNameQuery: { userName, method } });
const PREFIX_CANDIDATES = ['1', '12', '123', '1234', '12345', '123456', '1234567'];
// Three characters at least: a trigram index cannot answer a shorter `contains`.
const CONTAINS_CANDIDATES = ['234', '2345', '23456', '234567', '2345678'];

const searches = new Map<number, { prefix: { value: string; count: number }; contains: { value: string; count: number } }>();

/** The user name prefix and substring of a few hundred matches at this size (more, or fewer, where the names allow no better). */
function searchValues(ctx: Context) {
  let values = searches.get(ctx.seededUsers);
  if (values === undefined) {
    values = {
      prefix: selective(ctx.seededUsers, PREFIX_CANDIDATES, (name, value) => name.startsWith(`user${value}`)),
      contains: selective(ctx.seededUsers, CONTAINS_CANDIDATES, (name, value) => name.includes(value)),
    };
    searches.set(ctx.seededUsers, values);
  }
  return values;
}

/** An exact email or login name per request: seeded humans in turn, or alice in the empty database. */
function exactUsers(ctx: Context): () => { userName: string; email: string; loginName: string } {
  if (ctx.seededUsers === 0) return () => ({ userName: 'alice', email: 'alice@bench.test', loginName: 'alice@bench.test' });
  const next = rotatingUsers(ctx.seededUsers, true);
  return () => {
    const user = next();
    return { userName: user.userName, email: user.email!, loginName: user.loginName };
  };
}

/** The seeded humans (the ones with an email) among the users a user name prefix matches. */
function humansWithPrefix(ctx: Context, prefix: string): number {
  let found = 0;
  for (let n = 0; n < ctx.seededUsers; n++) if (n % 10 !== 9 && `user${n}`.startsWith(prefix)) found++;
  return found;
}

const PATHS: Path[] = [
  {
    name: 'client_credentials (JWT)',
    options: (ctx) => ({ url: `${ctx.base}/oauth/v2/token`, method: 'POST', headers: { ...form, authorization: basic('jwt-bot', 'jwt-bot-secret') }, body: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}` }),
  },
  {
    name: 'client_credentials (opaque)',
    options: (ctx) => ({ url: `${ctx.base}/oauth/v2/token`, method: 'POST', headers: { ...form, authorization: basic('opaque-bot', 'opaque-bot-secret') }, body: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}` }),
  },
  {
    name: 'introspection, one JWT',
    options: (ctx) => ({ url: `${ctx.base}/oauth/v2/introspect`, method: 'POST', headers: api, body: `token=${encodeURIComponent(ctx.jwtToIntrospect)}` }),
    check: active,
  },
  {
    name: 'introspection, one opaque token (cached)',
    options: (ctx) => ({ url: `${ctx.base}/oauth/v2/introspect`, method: 'POST', headers: api, body: `token=${encodeURIComponent(ctx.opaqueToIntrospect)}` }),
    check: active,
    countReads: true,
  },
  {
    name: 'introspection, rotating seeded opaque tokens (uncached)',
    options: (ctx) =>
      ctx.rotating.available
        ? { url: ctx.base, requests: [{ method: 'POST', path: '/oauth/v2/introspect', headers: api, setupRequest: (request) => ({ ...request, body: `token=${ctx.rotating.next()}` }) }] }
        : undefined,
    check: active,
    countReads: true,
    preflight: async (ctx) => {
      for (let i = 0; i < 5; i++) {
        const answer = await post(ctx.base, '/oauth/v2/introspect', api, `token=${ctx.rotating.next()}`);
        if (answer.status !== 200 || !active(answer.body)) throw new Error(`a seeded token is not active: ${answer.status} ${answer.body}`);
      }
      return undefined;
    },
  },
  {
    name: 'userinfo, one token (cached)',
    options: (ctx) => ({ url: `${ctx.base}/oidc/v1/userinfo`, headers: { authorization: `Bearer ${ctx.userToken}` } }),
    countReads: true,
  },
  {
    name: 'userinfo, rotating seeded tokens (uncached)',
    options: (ctx) =>
      ctx.rotating.available
        ? { url: ctx.base, requests: [{ method: 'GET', path: '/oidc/v1/userinfo', setupRequest: (request) => ({ ...request, headers: { authorization: `Bearer ${ctx.rotating.next()}` } }) }] }
        : undefined,
    countReads: true,
    preflight: async (ctx) => {
      const response = await fetch(`${ctx.base}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${ctx.rotating.next()}` } });
      if (response.status !== 200) throw new Error(`userinfo with a seeded token: ${response.status} ${await response.text()}`);
      return undefined;
    },
  },
  {
    name: 'ListUsers, page of 100, no filter',
    alone: true,
    options: (ctx) => listUsers(ctx, []),
    fullPage: true,
    preflight: async (ctx) => `ListUsers without a filter: ${(await totalOf(ctx, [])).toLocaleString('en')} users`,
  },
  {
    name: 'ListUsers, user name prefix',
    alone: true,
    options: (ctx) => listUsers(ctx, [userNameQuery(`user${searchValues(ctx).prefix.value}`, 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE')]),
    fullPage: true,
    preflight: async (ctx) => {
      const { prefix } = searchValues(ctx);
      const total = await totalOf(ctx, [userNameQuery(`user${prefix.value}`, 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE')]);
      if (total !== prefix.count) throw new Error(`user name prefix "user${prefix.value}": the API counts ${total}, expected ${prefix.count}`);
      return `user name starts with "user${prefix.value}" (ignoring case): ${total} matches`;
    },
  },
  {
    name: 'ListUsers, email prefix',
    alone: true,
    options: (ctx) => listUsers(ctx, [{ emailQuery: { emailAddress: `user${searchValues(ctx).prefix.value}`, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }]),
    fullPage: true,
    preflight: async (ctx) => {
      const prefix = `user${searchValues(ctx).prefix.value}`;
      const total = await totalOf(ctx, [{ emailQuery: { emailAddress: prefix, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }]);
      if (total !== humansWithPrefix(ctx, prefix)) throw new Error(`email prefix "${prefix}": the API counts ${total}, expected ${humansWithPrefix(ctx, prefix)}`);
      return `email starts with "${prefix}" (ignoring case): ${total} matches`;
    },
  },
  {
    name: 'ListUsers, login name prefix',
    alone: true,
    options: (ctx) => listUsers(ctx, [{ loginNameQuery: { loginName: `user${searchValues(ctx).prefix.value}`, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }]),
    fullPage: true,
    preflight: async (ctx) => {
      const { prefix } = searchValues(ctx);
      const total = await totalOf(ctx, [{ loginNameQuery: { loginName: `user${prefix.value}`, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }]);
      if (total !== prefix.count) throw new Error(`login name prefix "user${prefix.value}": the API counts ${total}, expected ${prefix.count}`);
      return undefined;
    },
  },
  {
    name: 'ListUsers, user name contains',
    alone: true,
    options: (ctx) => listUsers(ctx, [userNameQuery(searchValues(ctx).contains.value, 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE')]),
    fullPage: true,
    preflight: async (ctx) => {
      const { contains } = searchValues(ctx);
      const total = await totalOf(ctx, [userNameQuery(contains.value, 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE')]);
      if (total !== contains.count) throw new Error(`user name contains "${contains.value}": the API counts ${total}, expected ${contains.count}`);
      return `user name contains "${contains.value}" (ignoring case): ${total} matches`;
    },
  },
  {
    name: 'ListUsers, exact user name (rotating)',
    alone: true,
    options: (ctx) => {
      const next = exactUsers(ctx);
      return listUsers(ctx, () => [userNameQuery(next().userName, 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE')]);
    },
    preflight: async (ctx) => {
      const total = await totalOf(ctx, [userNameQuery(exactUsers(ctx)().userName, 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE')]);
      if (total !== 1) throw new Error(`an exact user name matched ${total} users`);
      return undefined;
    },
  },
  {
    name: 'ListUsers, exact email (rotating)',
    alone: true,
    options: (ctx) => {
      const next = exactUsers(ctx);
      return listUsers(ctx, () => [{ emailQuery: { emailAddress: next().email, method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }]);
    },
    preflight: async (ctx) => {
      const total = await totalOf(ctx, [{ emailQuery: { emailAddress: exactUsers(ctx)().email, method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }]);
      if (total !== 1) throw new Error(`an exact email matched ${total} users`);
      return undefined;
    },
  },
  {
    name: 'ListUsers, exact login name (rotating)',
    alone: true,
    options: (ctx) => {
      const next = exactUsers(ctx);
      return listUsers(ctx, () => [{ loginNameQuery: { loginName: next().loginName, method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }]);
    },
    preflight: async (ctx) => {
      const total = await totalOf(ctx, [{ loginNameQuery: { loginName: exactUsers(ctx)().loginName, method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }]);
      if (total !== 1) throw new Error(`an exact login name matched ${total} users`);
      return undefined;
    },
  },
  {
    name: 'GetUserByID (rotating)',
    alone: true,
    options: (ctx) => {
      const ids = ctx.seededUsers > 0 ? (() => { const next = rotatingUsers(ctx.seededUsers, false); return () => next().id; })() : (() => { let i = 0; return () => ctx.bootstrapUserIds[i++ % ctx.bootstrapUserIds.length]!; })();
      return { url: ctx.base, requests: [{ method: 'GET', path: '/v2/users/x', headers: { authorization: `Bearer ${ctx.ownerBearer}` }, setupRequest: (request) => ({ ...request, path: `/v2/users/${ids()}` }) }] };
    },
  },
  {
    name: 'ListAuthorizations, page of 100, no filter',
    alone: true,
    options: (ctx) => ({ url: `${ctx.base}/v2beta/authorizations/search`, method: 'POST', headers: json(ctx.ownerBearer), body: JSON.stringify({ pagination: { limit: 100 } }) }),
    fullPage: true,
    preflight: async (ctx) => {
      const expected = seededAuthorizations(ctx.seededUsers);
      const total = await authorizationsOf(ctx, []);
      if (total !== expected) throw new Error(`ListAuthorizations: the API counts ${total}, expected ${expected}`);
      return `ListAuthorizations without a filter: ${total.toLocaleString('en')} authorizations`;
    },
  },
  {
    name: 'ListAuthorizations, one user (rotating)',
    alone: true,
    options: (ctx) => {
      const next = authorizedUsers(ctx);
      return {
        url: ctx.base,
        requests: [{ method: 'POST', path: '/v2beta/authorizations/search', headers: json(ctx.ownerBearer), setupRequest: (request) => ({ ...request, body: JSON.stringify({ pagination: { limit: 100 }, filters: [{ userId: { id: next() } }] }) }) }],
      };
    },
    preflight: async (ctx) => {
      if (ctx.seededUsers === 0) return undefined;
      const total = await authorizationsOf(ctx, [{ userId: { id: authorizedUsers(ctx)() } }]);
      if (total !== 1) throw new Error(`ListAuthorizations of one authorized user: the API counts ${total}, expected 1`);
      return undefined;
    },
  },
  {
    // Last: each write appends an event, after which the change watcher empties the caches.
    name: 'AddHumanUser (write, no password)',
    options: (ctx) => {
      let i = 0;
      const body = () => {
        // Letters, not digits: the user name searches count the users whose names hold digits.
        const userName = `write-${letters(ctx.sizeIndex)}-${letters(i++)}`;
        return JSON.stringify({
          organization: { orgId: ctx.benchOrgId },
          username: userName,
          profile: { givenName: 'Write', familyName: `Load ${i}` },
          email: { email: `${userName}@bench.test`, isVerified: true },
        });
      };
      return { url: ctx.base, requests: [{ method: 'POST', path: '/v2/users/human', headers: json(ctx.ownerBearer), setupRequest: (request) => ({ ...request, body: body() }) }] };
    },
  },
];

// ---- the run ----

interface SizeReport {
  size: Size;
  growth: GrowthReport;
  tables: TableSize;
  serverStartSeconds: number;
  results: Map<string, Result>;
  /** The paths measured with one client at a time. */
  alone: Map<string, Result>;
  reads: Map<string, Reads>;
}

interface PruneReport {
  expiredSeedSeconds: number;
  before: Result;
  during: Result | undefined;
  deletedDuringWindow: number;
  stillPruningAfterWindow: boolean;
  pruneSeconds: number | undefined;
  waitedSeconds: number;
}

async function prunable(db: pg.Client): Promise<number> {
  const [row] = await query<{ count: string }>(db, `select count(*)::text as count from tokens where expires_at < now() - interval '1 day'`);
  return Number(row!.count);
}

async function pruneRunning(db: pg.Client, dbName: string): Promise<boolean> {
  const rows = await query(db, `select 1 from pg_stat_activity where datname = $1 and query ilike 'delete from "tokens" where ctid%'`, [dbName]);
  return rows.length > 0;
}

async function measurePrune(ctx: Context, dbName: string, server: Server): Promise<PruneReport> {
  const { db, size: { label } } = ctx;
  const opaque = PATHS.find((p) => p.name === 'client_credentials (opaque)')!;
  await server.stop();
  let started = performance.now();
  log(`${label}: seeding ${pruneRows.toLocaleString('en')} expired token rows`);
  await seedExpiredTokens(db, pruneRows, { seed: SEED, log });
  await db.query('checkpoint');
  const expiredSeedSeconds = (performance.now() - started) / 1000;
  const rows = await prunable(db);
  await server.start();
  pin(server.pid, 0);
  const options = opaque.options(ctx)!;
  // Before the first housekeeping round (a minute after the start): the same server, warm, not pruning.
  const watch = { db, serverPid: server.pid };
  const before = await load(options, watch);
  if ((await prunable(db)) !== rows) log('the prune began before the measurement without it had ended: lower BENCH_SECONDS');
  log(`${label}: waiting for the server's prune (its housekeeping runs a minute after the start)`);
  started = performance.now();
  const deadline = Date.now() + 150_000;
  while (!(await pruneRunning(db, dbName)) && Date.now() < deadline) await sleep(100);
  const waitedSeconds = (performance.now() - started) / 1000;
  if (!(await pruneRunning(db, dbName))) {
    log('the prune did not begin');
    return { expiredSeedSeconds, before, during: undefined, deletedDuringWindow: 0, stillPruningAfterWindow: false, pruneSeconds: undefined, waitedSeconds };
  }
  const pruneStarted = performance.now();
  const atStart = await prunable(db);
  const during = await run(options, seconds, undefined, watch);
  const atEnd = await prunable(db);
  const stillPruningAfterWindow = atEnd > 0;
  let pruneSeconds: number | undefined;
  const finish = Date.now() + 600_000;
  while ((await prunable(db)) > 0 && Date.now() < finish) await sleep(500);
  if ((await prunable(db)) === 0) pruneSeconds = (performance.now() - pruneStarted) / 1000;
  return { expiredSeedSeconds, before, during, deletedDuringWindow: atStart - atEnd, stillPruningAfterWindow, pruneSeconds, waitedSeconds };
}

type Measured = Pick<SizeReport, 'results' | 'alone' | 'reads'>;

/** Every path at every size, side by side (`interleaved`), after the machine's ceiling. */
async function measureSizes(ctxs: readonly Context[], notes: string[]): Promise<Measured[]> {
  const measured: Measured[] = ctxs.map(() => ({ results: new Map(), alone: new Map(), reads: new Map() }));
  for (const [i, ceiling] of (await measureCeiling(ctxs)).entries()) {
    measured[i]!.results.set(CEILING, ceiling);
    log(`${ctxs[i]!.size.label} ${CEILING}: ${ceiling.rps.toFixed(0)} req/s, p99 ${ceiling.p99} ms`);
  }
  let counted = false;
  for (const p of PATHS) {
    if (!wanted(p.name)) continue;
    const at = ctxs.flatMap((ctx, i) => {
      const options = p.options(ctx);
      return options === undefined ? [] : [{ ctx, options, mine: measured[i]! }];
    });
    if (at.length === 0) continue;
    for (const { ctx } of at) {
      const note = await p.preflight?.(ctx);
      if (note !== undefined) notes.push(`${ctx.size.label}: ${note}`);
    }
    // The statistics of the path before are all reported first. Each size has a database of its
    // own, so its reads are its own however the runs interleave.
    if (p.countReads && !counted) await sleep(STATS_FLUSH_MS);
    counted = p.countReads === true;
    const before = p.countReads ? await Promise.all(at.map(({ ctx }) => readsSoFar(ctx.db))) : undefined;
    const laps = at.map(({ ctx }) => ctx.rotating.laps);
    const outcomes = await interleaved(at.map(({ ctx, options }) => ({ options, watch: { db: ctx.db, serverPid: ctx.serverPid } })), p.check, p.alone === true);
    if (before) await sleep(STATS_FLUSH_MS);
    for (const [k, { ctx, mine }] of at.entries()) {
      const { loaded, alone, requests } = outcomes[k]!;
      if (ctx.rotating.laps !== laps[k] && p.countReads) {
        notes.push(`${ctx.size.label}: ${p.name}: the seeded tokens ran out and were presented again, so the figure includes cached ones: grow the size or shorten BENCH_SECONDS`);
      }
      mine.results.set(p.name, loaded);
      if (before) {
        const after = await readsSoFar(ctx.db);
        mine.reads.set(p.name, { tokens: (after.tokens - before[k]!.tokens) / requests, users: (after.users - before[k]!.users) / requests });
      }
      log(`${ctx.size.label} ${p.name}: ${loaded.rps.toFixed(0)} req/s, p99 ${loaded.p99} ms, ${loaded.errors} errors, other processes ${(loaded.others * 100).toFixed(0)}% of a core`);
      if (alone) {
        mine.alone.set(p.name, alone);
        log(`${ctx.size.label} ${p.name}, one client: ${alone.rps.toFixed(0)} req/s, p99 ${alone.p99} ms, ${alone.errors} errors`);
      }
    }
  }
  return measured;
}

/** A size's database as grown: `name` is a copy, or the grown database itself for the last size. */
interface Grown {
  size: Size;
  name: string;
  growth: GrowthReport;
  tables: TableSize;
}

function databaseUrl(name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function connect(name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl(name) });
  await client.connect();
  return client;
}

/**
 * A copy of database `from`, to which no one may be connected, through its files: PostgreSQL 15
 * copies a template through the WAL by default, which writes every page twice. Servers before 15
 * know no strategy and copy the files anyway.
 */
async function copyDatabase(admin: pg.Client, from: string, to: string): Promise<void> {
  try {
    await admin.query(`create database ${to} template ${from} strategy file_copy`);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42601') throw error; // syntax_error: before PostgreSQL 15
    await admin.query(`create database ${to} template ${from}`);
  }
}

interface Bench {
  projectId: string;
  orgId: string;
}

/** The bootstrap file's project and organization (the same in every size's database). */
async function benchIds(dbName: string): Promise<Bench> {
  const db = await connect(dbName);
  try {
    const [project] = await query<{ id: string }>(db, `select id from projects where name = 'bench'`);
    const [org] = await query<{ id: string }>(db, `select id from orgs where name = 'Bench'`);
    return { projectId: project!.id, orgId: org!.id };
  } finally {
    await db.end();
  }
}

/** What the paths present at one size, from its server (tokens, a code flow) and its database. */
async function sizeContext(size: Size, sizeIndex: number, server: Server, db: pg.Client, growth: GrowthReport, bench: Bench): Promise<Context> {
  const bootstrapUserIds = (await query<{ id: string }>(db, `select id from users where org_id = $1 order by id`, [bench.orgId])).map((row) => row.id);
  const projectScope = `openid urn:gatehouse:iam:org:project:id:${bench.projectId}:aud`;
  return {
    size,
    sizeIndex,
    base: server.base,
    db,
    seededUsers: growth.to.users,
    seededTokens: growth.to.tokens,
    ownerBearer: await clientCredentials(server.base, 'admin-bot', 'admin-bot-secret', API_SCOPE),
    jwtToIntrospect: await clientCredentials(server.base, 'jwt-bot', 'jwt-bot-secret', projectScope),
    opaqueToIntrospect: await clientCredentials(server.base, 'opaque-bot', 'opaque-bot-secret', projectScope),
    userToken: await codeFlow(
      { base: server.base, clientId: 'scale-web', clientSecret: 'scale-web-secret', redirectUri: 'http://127.0.0.1:18099/callback', scope: 'openid profile email' },
      passwordSignIn('alice', 'Correct-Horse-9'),
    ),
    bootstrapUserIds,
    benchOrgId: bench.orgId,
    rotating: new RotatingTokens(growth.to.tokens),
    serverPid: server.pid,
  };
}

/**
 * Grows the database size after size; each size but the last is copied to a database of its own
 * before the growth goes on (the copy needs the grown database without connections), the last is
 * the grown database itself.
 */
async function growSizes(admin: pg.Client, dbName: string, bench: Bench, databases: string[]): Promise<Grown[]> {
  const seedOptions = {
    seed: SEED,
    clients: ['scale-web', 'scale-portal'].map((clientId) => ({ clientId, audience: [clientId, bench.projectId] })),
    authorizations: bench,
    log,
  };
  const grown: Grown[] = [];
  let db = await connect(dbName);
  try {
    for (const [sizeIndex, size] of sizes.entries()) {
      log(`growing to ${size.label}`);
      const growth = await growTo(db, { users: size.users, tokens: size.tokens }, seedOptions);
      // The growth leaves gigabytes of dirty pages; a checkpoint writing them out in the background
      // would share the cores with the measurements.
      await db.query('checkpoint');
      log(`${size.label}: users ${growth.usersSeconds.toFixed(1)} s, tokens ${growth.tokensSeconds.toFixed(1)} s, vacuum/analyze ${growth.analyzeSeconds.toFixed(1)} s`);
      const tables = await tableSizes(db);
      let name = dbName;
      if (sizeIndex < sizes.length - 1) {
        // Lower case: PostgreSQL folds the unquoted name of `create database` ("1M" would become "1m").
        name = `${dbName}_${size.label.replace(/\W/g, '_').toLowerCase()}`;
        await db.end();
        const started = performance.now();
        await copyDatabase(admin, dbName, name);
        databases.push(name);
        log(`${size.label}: copied to ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        db = await connect(dbName);
      }
      grown.push({ size, name, growth, tables });
    }
  } finally {
    await db.end();
  }
  return grown;
}

async function main(): Promise<void> {
  pin(process.pid, 1);
  const dbName = `gatehouse_scale_${process.pid}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const [pgVersion] = (await query<{ v: string }>(admin, `select current_setting('server_version') as v`)).map((row) => row.v);
  /** The run's databases, dropped at the end. */
  const databases: string[] = [];
  const servers: Server[] = [];
  const clients: pg.Client[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-scale-'));
  fs.writeFileSync(path.join(dir, 'bootstrap.yaml'), stringify(bootstrapFile()));
  const reports: SizeReport[] = [];
  const notes: string[] = [];
  let prune: PruneReport | undefined;
  const runStarted = performance.now();
  try {
    await admin.query(`create database ${dbName}`);
    databases.push(dbName);
    // The first start migrates the database and applies the bootstrap file.
    const first = serverOn(dir, databaseUrl(dbName), PORT);
    servers.push(first);
    await first.start();
    await first.stop();
    const bench = await benchIds(dbName);
    const grown = await growSizes(admin, dbName, bench, databases);
    const starts: number[] = [];
    const ctxs: Context[] = [];
    for (const [sizeIndex, { size, name, growth }] of grown.entries()) {
      const server = serverOn(dir, databaseUrl(name), PORT + sizeIndex);
      servers.push(server);
      starts.push(await server.start());
      pin(server.pid, 0);
      const db = await connect(name);
      clients.push(db);
      ctxs.push(await sizeContext(size, sizeIndex, server, db, growth, bench));
    }
    const measured = await measureSizes(ctxs, notes);
    for (const [i, { size, growth, tables }] of grown.entries()) reports.push({ size, growth, tables, serverStartSeconds: starts[i]!, ...measured[i]! });
    const last = ctxs[ctxs.length - 1]!;
    if (wanted('prune') && last.size.users >= 10 && pruneRows > 0) {
      // The largest size's server alone, as the measurement before it was.
      for (const server of servers.slice(0, -1)) await server.stop();
      prune = await measurePrune(last, dbName, servers[servers.length - 1]!);
    }
  } finally {
    for (const server of servers) await server.stop();
    for (const client of clients) await client.end();
    if (keep) {
      process.stderr.write(`\nBENCH_KEEP=1: the databases are kept:\n${databases.map((name) => `  ${databaseUrl(name)}\n`).join('')}`);
    } else {
      for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
    }
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(report(reports, prune, notes, pgVersion ?? '?', (performance.now() - runStarted) / 1000));
}

// ---- the report ----

function report(reports: SizeReport[], prune: PruneReport | undefined, notes: string[], pgVersion: string, totalSeconds: number): string {
  const lines: string[] = [];
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  lines.push(
    '',
    `Gatehouse scale benchmark: the sizes side by side, one server per size's database; each path in ${repeats} rounds, each running every size once (the order rotated from round to round) for ${seconds} s after a ${WARM_UP_SECONDS} s warm-up; the fastest of the ${repeats} runs per size counts; ${connections} connections, servers ${pinned ? 'pinned to core 0, load on core 1' : 'not pinned'}, Node ${process.version}, PostgreSQL ${pgVersion}, ${cpu} (${os.cpus().length} cores); ${(totalSeconds / 60).toFixed(1)} min in all`,
    '',
  );
  const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en') : '-');
  const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '-');
  const base = reports[0]!;
  const header = ['path'];
  const rule = ['---'];
  for (const [i, r] of reports.entries()) {
    header.push(`${r.size.label} req/s`, `${r.size.label} p99 ms`);
    rule.push('---:', '---:');
    if (i > 0) {
      header.push(`req/s vs ${base.size.label}`, `p99 vs ${base.size.label}`);
      rule.push('---:', '---:');
    }
  }
  header.push('errors');
  rule.push('---:');
  lines.push(`| ${header.join(' | ')} |`, `| ${rule.join(' | ')} |`);
  let footnote = false;
  let partPages = false;
  const disturbed: number[] = [];
  /** req/s, marked with * when other processes took more than DISTURBED of a core meanwhile. */
  const rate = (result: Result | undefined) => {
    if (result === undefined) return '-';
    if (!(result.others > DISTURBED)) return int(result.rps);
    disturbed.push(result.others);
    return `${int(result.rps)} *`;
  };
  for (const p of [{ name: CEILING } as Path, ...PATHS]) {
    if (!reports.some((r) => r.results.has(p.name))) continue;
    // The ratio is to the first size that has the path (the empty database has no seeded tokens to rotate through).
    const first = reports.find((r) => r.results.has(p.name))!;
    const partPage = p.fullPage === true && first.size.users < 100;
    if (partPage) partPages = true;
    const cells = [p.name + (first !== base ? ' †' : '') + (partPage ? ' ‡' : '')];
    if (first !== base) footnote = true;
    let errors = 0;
    for (const [i, r] of reports.entries()) {
      const result = r.results.get(p.name);
      const from = first.results.get(p.name)!;
      cells.push(rate(result), int(result?.p99 ?? Number.NaN));
      if (i > 0) cells.push(result && r !== first ? ratio(result.rps / from.rps) : '-', result && r !== first ? ratio(result.p99 / Math.max(1, from.p99)) : '-');
      errors += result?.errors ?? 0;
    }
    cells.push(String(errors));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (reports.some((r) => r.results.has(CEILING))) {
    lines.push('', `The first row is the machine itself: bare node:http pinned to the servers' core, measured in rounds as a path is, once in each size's place; the same server answers every size, so its ratios are the noise left in the paths' ratios.`);
  }
  if (footnote) lines.push('', `† no seeded tokens in the ${base.size.label} database: the ratios are to the first size that has them.`);
  if (partPages) lines.push('', `‡ a page of 100 at the larger sizes, of the few bootstrap users (or none) at ${base.size.label}: the ratio includes answering with 100 users; compare the larger sizes with each other.`);

  const aloneRows = PATHS.filter((p) => p.alone && reports.some((r) => r.alone.has(p.name)));
  if (aloneRows.length > 0) {
    lines.push('', 'The management API\'s reads with one client at a time (the time one request takes when the server is not saturated):', '');
    lines.push(`| path | ${reports.map((r) => `${r.size.label} req/s | ${r.size.label} p99 ms`).join(' | ')} | errors |`, `| --- | ${reports.map(() => '---: | ---:').join(' | ')} | ---: |`);
    for (const p of aloneRows) {
      const cells = reports.map((r) => {
        const one = r.alone.get(p.name);
        return one ? `${rate(one)} | ${int(one.p99)}` : '- | -';
      });
      const errors = reports.reduce((sum, r) => sum + (r.alone.get(p.name)?.errors ?? 0), 0);
      lines.push(`| ${p.name} | ${cells.join(' | ')} | ${errors} |`);
    }
  }
  if (disturbed.length > 0) {
    const share = (value: number) => `${(value * 100).toFixed(0)}%`;
    lines.push('', `* other processes of the machine took ${share(Math.min(...disturbed))} to ${share(Math.max(...disturbed))} of a core during that run: the figure is disturbed.`);
  }

  const readRows = PATHS.filter((p) => p.countReads && reports.some((r) => r.reads.has(p.name)));
  if (readRows.length > 0) lines.push('', 'Whether the paths miss the caches: rows read per request (index scans of `tokens.token_hash` and of `users`\' primary key, from PostgreSQL\'s statistics, over the warm-up and the run):', '');
  if (readRows.length > 0) lines.push(`| path | ${reports.map((r) => `${r.size.label} token reads/req | ${r.size.label} user reads/req`).join(' | ')} |`, `| --- | ${reports.map(() => '---: | ---:').join(' | ')} |`);
  for (const p of readRows) {
    lines.push(`| ${p.name} | ${reports.map((r) => { const reads = r.reads.get(p.name); return reads ? `${reads.tokens.toFixed(2)} | ${reads.users.toFixed(2)}` : '- | -'; }).join(' | ')} |`);
  }

  lines.push('', 'Sizes (seeded users and tokens, counted after the growth, before the runs; the counts include the bootstrap file\'s users):', '');
  lines.push('| size | users | tokens | events | growth: users s | tokens s | vacuum + analyze s | users table MiB | bytes per user | tokens table MiB | bytes per token | server start s |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of reports) {
    const t = r.tables;
    lines.push(
      `| ${r.size.label} | ${int(t.users)} | ${int(t.tokens)} | ${int(t.events)} | ${r.growth.usersSeconds.toFixed(1)} | ${r.growth.tokensSeconds.toFixed(1)} | ${r.growth.analyzeSeconds.toFixed(1)} | ${(t.usersBytes / 2 ** 20).toFixed(1)} | ${t.users > 0 ? int(t.usersBytes / t.users) : '-'} | ${(t.tokensBytes / 2 ** 20).toFixed(1)} | ${t.tokens > 0 ? int(t.tokensBytes / t.tokens) : '-'} | ${r.serverStartSeconds.toFixed(1)} |`,
    );
  }
  if (prune) {
    const last = reports[reports.length - 1]!;
    lines.push('', `The token endpoint while the server prunes ${pruneRows.toLocaleString('en')} expired token rows (${last.size.label}; seeded in ${prune.expiredSeedSeconds.toFixed(1)} s; the prune began ${prune.waitedSeconds.toFixed(0)} s after the measurement without it):`, '');
    const others = (result: Result) => (Number.isFinite(result.others) ? `${(result.others * 100).toFixed(0)}%` : '-');
    lines.push('| client_credentials (opaque) | req/s | p99 ms | errors | other processes, share of a core |', '| --- | ---: | ---: | ---: | ---: |');
    lines.push(`| without pruning (same server, just before) | ${int(prune.before.rps)} | ${int(prune.before.p99)} | ${prune.before.errors} | ${others(prune.before)} |`);
    if (prune.during) lines.push(`| during the prune | ${int(prune.during.rps)} | ${int(prune.during.p99)} | ${prune.during.errors} | ${others(prune.during)} |`);
    lines.push(
      '',
      prune.during
        ? `${prune.deletedDuringWindow.toLocaleString('en')} rows were deleted during the ${seconds} s measured; ${prune.stillPruningAfterWindow ? 'the prune was still running when it ended' : 'the prune ended before the measurement did, so part of it ran without pruning'}; the whole prune took ${prune.pruneSeconds === undefined ? 'more than 10 min' : `${prune.pruneSeconds.toFixed(1)} s`}.`
        : 'The prune did not begin within 150 s.',
    );
  }
  if (notes.length > 0) lines.push('', ...notes.map((note) => `- ${note}`));
  return `${lines.join('\n')}\n`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
