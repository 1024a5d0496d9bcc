/**
 * Data safety, with real `gatehouse` processes. The embedded database folder belongs to one process:
 * a second server or a CLI command beside a running server stops at once (exit 2) naming the folder
 * and the holder, and writes nothing; a lock left by a process that died blocks nobody. The master
 * key is bound to the database: a server or command with another key (or none, where the database
 * has one) stops with exit 2 naming GATEHOUSE_MASTER_KEY, and writes nothing.
 *
 * The embedded cases run when the run uses the embedded database (its snapshot saves an initdb per
 * folder); the key cases run on the run's database, PostgreSQL or embedded; two servers beside a CLI
 * with another key need PostgreSQL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { stringify } from 'yaml';
import { openDatabase, type DB } from '../../src/store/database.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { createTestDatabase } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { freePort } from '../support/ports.ts';
import { restoreSnapshot } from '../support/snapshot.ts';

const MAIN = path.resolve('src/main.ts');
const KEY_A = Buffer.alloc(32, 11).toString('base64');
const KEY_B = Buffer.alloc(32, 12).toString('base64');
const SCOPE = 'openid urn:gatehouse:iam:org:project:id:500000000000000001:aud';
const KEY_REFUSED = 'GATEHOUSE_MASTER_KEY does not match this database: its data was encrypted under another master key';
const KEY_MISSING = "GATEHOUSE_MASTER_KEY is not set, and this database's data was encrypted under a master key";

const embeddedRun = process.env['TEST_DATABASE_URL'] ? describe.skip : describe;
const postgresRun = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

/** The environment of a child process: the test's own, without a master key unless given. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', GATEHOUSE_HOST: '127.0.0.1' };
  delete base['GATEHOUSE_MASTER_KEY'];
  return { ...base, ...env };
}

function cli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [MAIN, ...args], { env: childEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Server {
  child: ChildProcess;
  url: string;
  output(): string;
}

/** Spawns `gatehouse start` on a free port; `ready` waits for /ready (or fails with the output). */
async function spawnServer(env: Record<string, string>, args: string[] = []): Promise<Server & { exited: Promise<number | null> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, [MAIN, 'start', ...args], { env: childEnv({ GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: url, ...env }) });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, output: () => output, exited };
}

async function ready(server: Server): Promise<void> {
  for (let i = 0; i < 1200 && server.child.exitCode === null; i++) {
    try {
      if ((await fetch(`${server.url}/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gatehouse did not start: ${server.output()}`);
}

async function startServer(env: Record<string, string>, args: string[] = []): Promise<Server & { exited: Promise<number | null> }> {
  const server = await spawnServer(env, args);
  try {
    await ready(server);
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
  return server;
}

/** SIGTERM, and the exit code. */
async function stop(server: Server & { exited: Promise<number | null> }): Promise<number | null> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
  return server.exited;
}

async function listening(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`).then(
    () => true,
    () => false,
  );
}

async function signsTokens(url: string): Promise<void> {
  const reply = await postForm(`${url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: SCOPE }, { authorization: basic('reporter', SECRETS.reporter) });
  expect(reply.status).toBe(200);
  expect(String(reply.json['access_token']).split('.')).toHaveLength(3); // a JWT: signed with the database's key
}

/** Leaves in `dir` the lock of a `gatehouse start` on this machine that has since died. */
function plantStaleLock(dir: string): void {
  const pid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
  const pidNamespace = fs.existsSync('/proc/self/ns/pid') ? fs.readlinkSync('/proc/self/ns/pid') : null;
  const lock = { pid, host: os.hostname(), pidNamespace, processStart: null, command: 'gatehouse start', since: new Date().toISOString(), token: 'dead' };
  fs.writeFileSync(path.join(dir, 'gatehouse.lock'), JSON.stringify(lock));
}

/** Runs `work` on the database (in this process: on the embedded folder, only while no server holds it). */
async function inspect<T>(database: { url: string | undefined; dir: string }, work: (db: DB) => Promise<T>): Promise<T> {
  const { db } = await openDatabase({ databaseUrl: database.url, dataDir: database.dir });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

async function rows(db: DB, table: string): Promise<number> {
  const { rows: [row] } = await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(db);
  return Number(row!.n);
}

embeddedRun('the embedded database folder belongs to one process', () => {
  let dir: string;
  let bootstrap: string;
  let env: Record<string, string>;
  let first: Server & { exited: Promise<number | null> };
  /** Every server this block started: a test that fails half-way leaves none running after the block. */
  const started: Array<Server & { exited: Promise<number | null> }> = [];
  const serve = async (...args: Parameters<typeof startServer>) => {
    const server = await startServer(...args);
    started.push(server);
    return server;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-safety-'));
    restoreSnapshot(dir);
    bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(fixture().document));
    env = { DATABASE_URL: '', GATEHOUSE_DATA_DIR: dir, GATEHOUSE_MASTER_KEY: KEY_A };
    first = await serve(env, ['--bootstrap', bootstrap]);
  });
  afterAll(async () => {
    for (const server of started) server.child.kill('SIGKILL');
    await Promise.all(started.map((server) => server.exited));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a second server on the folder exits 2 naming the folder and the holder; the first keeps serving', async () => {
    const second = await spawnServer(env, ['--bootstrap', bootstrap]);
    expect(await second.exited).toBe(2);
    expect(second.output()).toMatch(
      new RegExp(`^gatehouse: the data folder ${dir} is in use by pid ${first.child.pid} \\(gatehouse start --bootstrap ${bootstrap}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): the embedded database belongs to one process; .*\\n$`),
    );
    expect(await listening(second.url)).toBe(false);
    await signsTokens(first.url);
  }, 120_000);

  it('CLI commands beside the running server exit 2 and leave nothing in the database', async () => {
    const intruder = path.join(dir, 'intruder.yaml');
    fs.writeFileSync(intruder, stringify({ orgs: [{ name: 'Intruder', domain: 'intruder.test' }] }));
    const published = ((await (await fetch(`${first.url}/oauth/v2/keys`)).json()) as { keys: unknown[] }).keys.length;
    for (const args of [['features', 'set', 'oidcTokenExchange', 'on'], ['bootstrap', intruder], ['machine-key', 'create', '--user', 'reporter'], ['keys', 'rotate'], ['migrate']]) {
      const run = cli(args, env);
      expect({ args, status: run.status, stdout: run.stdout }).toEqual({ args, status: 2, stdout: '' });
      expect(run.stderr).toMatch(new RegExp(`^gatehouse: the data folder ${dir} is in use by pid ${first.child.pid} \\(gatehouse start --bootstrap ${bootstrap}, since [^)]+\\): `));
    }
    // The CLI runs block this process's event loop for seconds, during which the server closes the
    // idle keep-alive connection of the key set's fetch. One turn of the loop lets fetch see that
    // close before it picks a connection, instead of writing into the closed one.
    await new Promise((resolve) => setImmediate(resolve));
    await signsTokens(first.url);

    expect(await stop(first)).toBe(0);
    expect(fs.existsSync(path.join(dir, 'gatehouse.lock'))).toBe(false); // released on a clean stop
    await inspect({ url: undefined, dir }, async (db) => {
      expect(await db.selectFrom('instance_features').selectAll().execute()).toEqual([]);
      expect(await db.selectFrom('orgs').select('name').where('name', '=', 'Intruder').execute()).toEqual([]);
      expect(await db.selectFrom('machine_keys').select('id').where('user_id', '=', IDS.reporter).execute()).toEqual([{ id: fixture().reporterKey.id }]);
      expect(await rows(db, 'signing_keys')).toBe(published);
    });
  }, 120_000);

  it('a lock left by a process that died blocks no start, and a server killed with SIGKILL blocks no restart', async () => {
    plantStaleLock(dir);
    expect(cli(['features', 'set', 'oidcTokenExchange', 'on'], env)).toMatchObject({ status: 0, stdout: expect.stringContaining('oidcTokenExchange is on') });

    const crashed = await serve(env);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'gatehouse.lock'), 'utf8'))).toMatchObject({ pid: crashed.child.pid });
    first = await serve(env);
    await signsTokens(first.url);
    expect(await stop(first)).toBe(0);
  }, 120_000);

  it('of servers racing onto a folder with a stale lock, exactly one serves and the others name it', async () => {
    plantStaleLock(dir);
    const racers = await Promise.all([1, 2, 3].map(() => spawnServer(env)));
    try {
      const winner = await Promise.any(racers.map(async (racer) => (await ready(racer), racer)));
      const losers = racers.filter((racer) => racer !== winner);
      expect(await Promise.all(losers.map((loser) => loser.exited))).toEqual([2, 2]);
      for (const loser of losers) expect(loser.output()).toContain(`is in use by pid ${winner.child.pid} (gatehouse start, since`);
      await signsTokens(winner.url);
      expect(await stop(winner)).toBe(0);
    } finally {
      for (const racer of racers) racer.child.kill('SIGKILL');
    }
  }, 120_000);
});

describe('the master key is bound to the database', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let bootstrap: string;
  let env: Record<string, string>;
  let published: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-key-'));
    database = await createTestDatabase();
    if (database.url === undefined) restoreSnapshot(dir);
    bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(fixture().document));
    env = { DATABASE_URL: database.url ?? '', GATEHOUSE_DATA_DIR: dir };
    const server = await startServer({ ...env, GATEHOUSE_MASTER_KEY: KEY_A }, ['--bootstrap', bootstrap]);
    await signsTokens(server.url);
    expect(await stop(server)).toBe(0);
    published = await inspect({ url: database.url, dir }, (db) => rows(db, 'signing_keys'));
    expect(published).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The counts a refused process must leave as they were. */
  const footprint = () =>
    inspect({ url: database.url, dir }, async (db) => ({
      signingKeys: await rows(db, 'signing_keys'),
      events: await rows(db, 'events'),
      features: await rows(db, 'instance_features'),
      check: (await sql<{ value: string }>`select value from master_key_check`.execute(db)).rows,
    }));

  it('a server with another key refuses to start, naming GATEHOUSE_MASTER_KEY, and writes nothing', async () => {
    const before = await footprint();
    expect(before.check).toHaveLength(1);
    const server = await spawnServer({ ...env, GATEHOUSE_MASTER_KEY: KEY_B }, ['--bootstrap', bootstrap]);
    expect(await server.exited).toBe(2);
    expect(server.output()).toBe(`gatehouse: ${KEY_REFUSED}; set GATEHOUSE_MASTER_KEY to the key the database was first started with\n`);
    expect(await listening(server.url)).toBe(false);
    expect(await footprint()).toEqual(before);
  }, 120_000);

  it('commands with another key, or with none where the database has one, exit 2 and write nothing', async () => {
    const before = await footprint();
    for (const args of [['keys', 'rotate'], ['features', 'set', 'oidcTokenExchange', 'on'], ['bootstrap', bootstrap], ['migrate']]) {
      expect({ args, ...cli(args, { ...env, GATEHOUSE_MASTER_KEY: KEY_B }) }).toEqual({ args, status: 2, stdout: '', stderr: expect.stringContaining(`gatehouse: ${KEY_REFUSED}`) });
    }
    expect(cli(['keys', 'rotate'], env)).toEqual({ status: 2, stdout: '', stderr: `gatehouse: ${KEY_MISSING}: set GATEHOUSE_MASTER_KEY to that key\n` });
    expect(fs.existsSync(path.join(dir, 'master.key'))).toBe(false); // no key of its own is made up
    expect(await footprint()).toEqual(before);
    // The right key still works.
    expect(cli(['features', 'set', 'oidcTokenExchange', 'on'], { ...env, GATEHOUSE_MASTER_KEY: KEY_A }).status).toBe(0);
  }, 120_000);

  it('a database sealed before the check existed refuses a key that does not open its signing keys, and keeps the one that does', async () => {
    await inspect({ url: database.url, dir }, (db) => sql`delete from master_key_check`.execute(db));
    const before = await footprint();
    expect(cli(['keys', 'rotate'], { ...env, GATEHOUSE_MASTER_KEY: KEY_B })).toMatchObject({ status: 2, stderr: expect.stringContaining(KEY_REFUSED) });
    expect(await footprint()).toEqual(before);

    const rotated = cli(['keys', 'rotate'], { ...env, GATEHOUSE_MASTER_KEY: KEY_A });
    expect(rotated).toMatchObject({ status: 0, stdout: expect.stringContaining('published signing key') });
    const after = await footprint();
    expect(after.signingKeys).toBe(before.signingKeys + 1);
    expect(after.check).toHaveLength(1);
    expect(cli(['keys', 'rotate'], { ...env, GATEHOUSE_MASTER_KEY: KEY_B })).toMatchObject({ status: 2, stderr: expect.stringContaining(KEY_REFUSED) });
  }, 120_000);
});

postgresRun('servers on PostgreSQL beside a CLI with another key', () => {
  it('keys rotate with another key, or none, exits 2, adds no signing key, and both servers keep signing', async () => {
    const database = await createTestDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-shared-'));
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-operator-')); // the CLI's machine: no key file
    const bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(fixture().document));
    const serving = { DATABASE_URL: database.url!, GATEHOUSE_DATA_DIR: dir, GATEHOUSE_MASTER_KEY: KEY_A };
    const servers: Array<Server & { exited: Promise<number | null> }> = [];
    try {
      servers.push(await startServer(serving, ['--bootstrap', bootstrap]));
      servers.push(await startServer(serving));
      const before = await inspect({ url: database.url, dir }, (db) => rows(db, 'signing_keys'));

      const wrong = cli(['keys', 'rotate'], { DATABASE_URL: database.url!, GATEHOUSE_DATA_DIR: elsewhere, GATEHOUSE_MASTER_KEY: KEY_B });
      expect(wrong).toEqual({ status: 2, stdout: '', stderr: `gatehouse: ${KEY_REFUSED}; set GATEHOUSE_MASTER_KEY to the key the database was first started with\n` });
      const none = cli(['keys', 'rotate'], { DATABASE_URL: database.url!, GATEHOUSE_DATA_DIR: elsewhere });
      expect(none).toEqual({ status: 2, stdout: '', stderr: `gatehouse: ${KEY_MISSING}: set GATEHOUSE_MASTER_KEY to that key\n` });
      expect(fs.readdirSync(elsewhere)).toEqual([]); // no key file made up on the operator's machine

      expect(await inspect({ url: database.url, dir }, (db) => rows(db, 'signing_keys'))).toBe(before);
      for (const server of servers) await signsTokens(server.url);
      for (const server of servers) expect(await stop(server)).toBe(0);
    } finally {
      for (const server of servers) server.child.kill('SIGKILL');
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 120_000);

  it('of two commands binding different keys to a new database at once, one wins and the other exits 2', async () => {
    const database = await createTestDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bind-'));
    try {
      const document = path.join(dir, 'bootstrap.yaml');
      fs.writeFileSync(document, stringify({ orgs: [{ name: 'ACME', domain: 'acme.test' }] }));
      const env = { DATABASE_URL: database.url!, GATEHOUSE_DATA_DIR: dir };
      expect(cli(['bootstrap', document], env).status).toBe(0); // seals nothing: binds no key
      const run = (key: string) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, [MAIN, 'keys', 'rotate'], { env: childEnv({ ...env, GATEHOUSE_MASTER_KEY: key }), stdio: 'ignore' });
          child.once('exit', (code) => resolve(code));
        });
      expect((await Promise.all([run(KEY_A), run(KEY_B)])).sort()).toEqual([0, 2]);
      expect(await inspect({ url: database.url, dir }, (db) => rows(db, 'signing_keys'))).toBe(1);
    } finally {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
