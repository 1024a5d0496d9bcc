/**
 * The `gatehouse` CLI as an operator runs it (README.md#cli): every command in a child process,
 * exit codes, output, first-run defaults, SIGTERM with a request in flight, and CLI changes
 * reaching a running server (PostgreSQL only: the embedded database belongs to one process at a
 * time).
 */
import { spawn } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { stringify } from 'yaml';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { createTestDatabase } from '../support/gatehouse.ts';
import { postForm } from '../support/http.ts';
import { freePort } from '../support/ports.ts';
import { restoreSnapshot } from '../support/snapshot.ts';
import { cli, exited, MAIN, startProcess, waitForOutput, waitHealthy } from '../support/cli.ts';

const MASTER_KEY = Buffer.alloc(32, 5).toString('base64');

/** Resolves as soon as `port` on 127.0.0.1 accepts a TCP connection (tried every 5 ms). */
async function waitListening(port: number): Promise<void> {
  for (let i = 0; i < 12_000; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('connect', () => socket.destroy());
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('server did not listen');
}


/**
 * The commands on the run's database: PostgreSQL when the run has one, else the embedded database.
 * Each command is a process of its own; on the embedded database each also starts PGlite (about
 * 2.5 s of CPU), which made this the slowest file of a PostgreSQL run. `gatehouse start` below uses
 * the run's database too: on a PostgreSQL run the embedded database had no snapshot to start from, and
 * making one from nothing (initdb and every migration, in WebAssembly) took 12 of the file's 30 s.
 * The embedded run (`npm test` without TEST_DATABASE_URL) starts it on PGlite, as `npm start` does.
 */
describe('commands on the test database', () => {
  let dir: string;
  let env: Record<string, string>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-'));
    database = await createTestDatabase();
    if (database.url === undefined) restoreSnapshot(dir); // the run's migrated embedded database: no initdb per file
    env = { GATEHOUSE_DATA_DIR: dir, GATEHOUSE_MASTER_KEY: MASTER_KEY, DATABASE_URL: database.url ?? '' };
  });
  afterAll(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints usage, and refuses unknown commands with exit code 2', () => {
    expect(cli(['help'], env)).toMatchObject({ status: 0, stdout: expect.stringContaining('machine-key create --user NAME') });
    expect(cli(['frobnicate'], env)).toMatchObject({ status: 2, stderr: expect.stringContaining('unknown command frobnicate') });
  });

  it('migrates, applies a bootstrap file idempotently, and names file, path and problem when it is wrong', () => {
    expect(cli(['migrate'], env)).toMatchObject({ status: 0, stdout: 'migrations are up to date\n' });
    const good = path.join(dir, 'good.yaml');
    fs.writeFileSync(good, stringify(fixture().document));
    const first = cli(['bootstrap', good], env);
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: expect.any(Number) });
    const second = cli(['bootstrap', good], env);
    expect(JSON.parse(second.stdout)).toMatchObject({ created: 0, updated: 0 });

    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, stringify({ orgs: [{ name: 'X', domain: 'x.test', projects: [{ name: 'p', apps: [{ name: 'a', clientId: 'a', authMethod: 'magic' }] }] }] }));
    const refused = cli(['bootstrap', bad], env);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(bad);
    expect(refused.stderr).toContain('orgs[0].projects[0].apps[0].authMethod');
  });

  it('switches features and rotates keys', () => {
    expect(cli(['features', 'set', 'oidcTokenExchange', 'on'], env)).toMatchObject({ status: 0, stdout: expect.stringMatching(/^oidcTokenExchange is on \(sequence \d+\)\n$/) });
    expect(cli(['features', 'set', 'bogus', 'on'], env)).toMatchObject({ status: 2, stderr: expect.stringContaining('unknown feature bogus') });
    expect(cli(['features', 'set', 'oidcTokenExchange', 'maybe'], env).status).toBe(2);
    expect(cli(['keys', 'rotate'], env)).toMatchObject({ status: 0, stdout: expect.stringContaining('published signing key') });
  });

  it('creates a machine key file in ZITADEL layout, on stdout or into a file', () => {
    const printed = cli(['machine-key', 'create', '--user', 'reporter'], env);
    expect(printed.status).toBe(0);
    const keyFile = JSON.parse(printed.stdout) as Record<string, string>;
    expect(Object.keys(keyFile)).toEqual(['type', 'keyId', 'key', 'expirationDate', 'userId']);
    expect(keyFile).toMatchObject({ type: 'serviceaccount', userId: IDS.reporter });
    expect(() => createPrivateKey(keyFile['key']!)).not.toThrow();

    const out = path.join(dir, 'key.json');
    expect(cli(['machine-key', 'create', '--user', 'reporter', '--out', out], env).status).toBe(0);
    expect((fs.statSync(out).mode & 0o777).toString(8)).toBe('600');
    expect(cli(['machine-key', 'create', '--user', 'nobody'], env).status).not.toBe(0);
    expect(cli(['machine-key', 'create'], env).status).toBe(2);
  });
});

/**
 * What an operator gets wrong in the first hour: a typo in a variable's name, a DATABASE_URL of
 * another database or none at all, a host that does not exist or does not listen. Each gets one line
 * that names the variable and the cause (the password masked), and a wrong DATABASE_URL exit code 2.
 */
describe('mistakes in the environment', () => {
  let dir: string;
  let env: Record<string, string>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-env-'));
    database = await createTestDatabase();
    if (database.url === undefined) restoreSnapshot(dir);
    env = { GATEHOUSE_DATA_DIR: dir, GATEHOUSE_MASTER_KEY: MASTER_KEY, DATABASE_URL: database.url ?? '' };
  });
  afterAll(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names a variable Gatehouse does not read, with the one it probably meant, and carries on', () => {
    const result = cli(['migrate'], { ...env, GATEHOUSE_PROT: '9999', GATEHOUSE_EXTERNALURL: 'http://x.test', GATEHOUSE_XYZZY_FROBNICATE: '1' });
    expect(result.status).toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      'gatehouse: GATEHOUSE_EXTERNALURL is not a variable Gatehouse reads; did you mean GATEHOUSE_EXTERNAL_URL? (ignored)',
      'gatehouse: GATEHOUSE_PROT is not a variable Gatehouse reads; did you mean GATEHOUSE_PORT? (ignored)',
      'gatehouse: GATEHOUSE_XYZZY_FROBNICATE is not a variable Gatehouse reads (ignored)',
    ]);
    expect(cli(['migrate'], env).stderr).toBe('');
  });

  it.each([
    ['another database', 'mysql://root:hunter2@127.0.0.1:3306/app', 'DATABASE_URL mysql://root:***@127.0.0.1:3306/app: unsupported scheme "mysql"'],
    ['no URL at all', 'foo', 'DATABASE_URL foo: not a URL'],
    ['a URL without a host', 'postgres:///gatehouse', 'DATABASE_URL postgres:///gatehouse: names no host'],
    ['a host that does not exist', 'postgres://gh:hunter2@no-such-host.invalid:5432/gatehouse', 'DATABASE_URL postgres://gh:***@no-such-host.invalid:5432/gatehouse: host not found'],
    ['a port nothing listens on', 'postgres://gh:hunter2@127.0.0.1:1/gatehouse', 'DATABASE_URL postgres://gh:***@127.0.0.1:1/gatehouse: connection refused'],
  ])('refuses %s in one line with exit code 2', (_name, url, line) => {
    for (const command of [['migrate'], ['start']]) {
      const result = cli(command, { ...env, DATABASE_URL: url });
      expect({ command, status: result.status }).toEqual({ command, status: 2 });
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`gatehouse: ${line}`);
      expect(result.stderr + result.stdout).not.toContain('hunter2');
    }
  });

  it('says a server that is not PostgreSQL is not', async () => {
    // a server that greets like another database and closes
    const impostor = net.createServer((socket) => socket.end(Buffer.from('J\0\0\0\n8.0.36\0garbage-greeting', 'latin1')));
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const port = (impostor.address() as net.AddressInfo).port;
    try {
      const result = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [MAIN, 'migrate'], { env: { ...process.env, ...env, DATABASE_URL: `postgres://gh:hunter2@127.0.0.1:${port}/gatehouse` } });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('exit', (status) => resolve({ status, stderr }));
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^gatehouse: DATABASE_URL postgres://gh:\\*\\*\\*@127\\.0\\.0\\.1:${port}/gatehouse: (the server there is not PostgreSQL|the server closed the connection)\n$`));
    } finally {
      impostor.close();
    }
  });

  it('refuses a log format it does not know in one line with exit code 2', () => {
    for (const command of [['migrate'], ['start']]) {
      expect(cli(command, { ...env, GATEHOUSE_LOG_FORMAT: 'yaml' })).toMatchObject({
        status: 2,
        stderr: 'gatehouse: GATEHOUSE_LOG_FORMAT must be pretty or json, got "yaml"\n',
      });
    }
  });

  const onPostgres = process.env['TEST_DATABASE_URL'] ? it : it.skip;
  onPostgres('says a database that does not exist does not', () => {
    const url = new URL(process.env['TEST_DATABASE_URL']!);
    url.pathname = '/gatehouse_no_such_database';
    const result = cli(['migrate'], { ...env, DATABASE_URL: url.toString() });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`: no such database`);
  });
});


/** A database URL with its password shown as *** (docs/operations.md#database). */
function masked(url: string): string {
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  return shown.toString();
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('gatehouse start', () => {
  it('creates first-run defaults once, prints them, and stops cleanly on SIGTERM with a request in flight', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
    // The run's database, migrated and empty: the first start still creates the defaults.
    const database = await createTestDatabase();
    if (database.url === undefined) restoreSnapshot(dir);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { GATEHOUSE_DATA_DIR: dir, GATEHOUSE_PORT: String(port), GATEHOUSE_HOST: '127.0.0.1', DATABASE_URL: database.url ?? '' };
    const server = startProcess(['start'], { ...env, GATEHOUSE_LOG_LEVEL: 'info' });
    try {
      await waitHealthy(url);
      await waitForOutput(server.output, 'listening on');
      const printed = server.output();
      // Not a terminal: JSON lines, one per phase of the start, in order (docs/operations.md#starting).
      const messages = printed.split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg: string }).msg);
      const phases = [
        /^starting Gatehouse \d+\.\d+\.\d+ on Node\.js v24\./,
        database.url === undefined
          ? new RegExp(`^database: opening the embedded database in ${escaped(path.join(dir, 'pgdata'))}$`)
          : new RegExp(`^database: PostgreSQL at ${escaped(masked(database.url))}$`),
        /^migrations: (up to date|applied \d+, the newest \d{4}_\d\d_\d\d_\d{4}_\w+)$/,
        /^first run: created a default organization, an admin user, a demo client and an API token$/,
        /^signing keys: created RS256 key \d+ \(1 published\)$/,
        new RegExp(`^listening on http://127\\.0\\.0\\.1:${port}, issuer http://localhost:${port}$`),
      ];
      const found = phases.map((phase) => messages.findIndex((message) => phase.test(message)));
      expect({ found, messages }).toEqual({ found: [...found].sort((a, b) => a - b), messages });
      expect(found).not.toContain(-1);
      if (database.url !== undefined && new URL(database.url).password) expect(printed).not.toContain(new URL(database.url).password);
      expect(printed).toContain(`issuer: http://localhost:${port}`.replace('issuer: ', ''));
      expect(printed).toContain('/.well-known/openid-configuration');
      expect(printed).toContain('/oauth/v2/authorize?client_id=demo-web');
      expect(printed).toContain('GATEHOUSE_MASTER_KEY is not set');
      expect(fs.existsSync(path.join(dir, 'master.key'))).toBe(true);

      // A request whose body is still arriving when SIGTERM comes in is finished, then the process exits 0.
      const answered = new Promise<number>((resolve, reject) => {
        const req = http.request(`${url}/oauth/v2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write('grant_type=client_credentials');
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end('&scope=openid'), 300);
        }, 200);
      });
      expect(await answered).toBe(401);
      expect(await exited(server.child)).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
    }

    // A second start finds the instance and prints no new credentials. SIGTERM comes the moment the
    // port accepts a connection, while the background jobs may still be starting: still a clean stop.
    const again = startProcess(['start'], env);
    try {
      await waitListening(port);
      again.child.kill('SIGTERM');
      expect(await exited(again.child)).toBe(0);
      expect(again.output()).not.toContain('/oauth/v2/authorize?client_id=demo-web');
    } finally {
      again.child.kill('SIGKILL');
    }

    // On a terminal (script(1) gives the process one) the same lines come out through pino-pretty.
    const terminal = spawn('script', ['-qec', `'${process.execPath}' '${MAIN}' start`, '/dev/null'], { env: { ...process.env, ...env, GATEHOUSE_LOG_LEVEL: 'info' } });
    let onTerminal = '';
    terminal.stdout.on('data', (chunk: Buffer) => (onTerminal += chunk.toString()));
    try {
      await waitForOutput(() => onTerminal, 'listening on');
      const lines = onTerminal.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/);
      expect(lines).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: first run: not needed, the database holds an instance \(no bootstrap file given\) \{"firstRun":false\}$/));
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^\\[[\\d:.]+\\] INFO: listening on http://127\\.0\\.0\\.1:${port}, issuer http://localhost:${port} \\{`)));
      expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      terminal.kill('SIGTERM');
      await exited(terminal);
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120000);
});

/**
 * `npm install --omit=dev && npm start` (docs/operations.md#running-it-from-a-clone): what the server
 * and the CLI import when they run is in `dependencies`, never only in `devDependencies`. Type-only
 * imports are erased before Node runs a file; `node:` modules are Node's own.
 */
describe('a production install', () => {
  function sources(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return sources(file);
      return /\.(ts|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [file] : [];
    });
  }

  it('imports at run time only packages of "dependencies"', () => {
    const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Map<string, string>();
    for (const file of ['src', 'gen', 'bin'].flatMap(sources)) {
      const text = fs.readFileSync(file, 'utf8');
      const specifiers = [
        ...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?'([^'.][^']*)'/gm),
        ...text.matchAll(/\bimport\('([^'.][^']*)'\)/g),
        ...text.matchAll(/\.resolve\('([^'.][^']*)'\)/g),
      ].map((match) => match[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('node:')) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!imported.has(name)) imported.set(name, path.relative('.', file));
      }
    }
    expect([...imported.keys()]).toEqual(expect.arrayContaining(['pino', 'pino-pretty', 'express', '@connectrpc/connect-node', 'swagger-ui-dist']));
    const missing = [...imported].filter(([name]) => !(name in manifest.dependencies)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });
});

const pgOnly = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

pgOnly('CLI changes reach a running server (PostgreSQL)', () => {
  it('a machine key created by the CLI signs a JWT profile grant at the running server within 5 s', async () => {
    const database = await createTestDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-live-'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const file = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(file, stringify(fixture().document));
    const env = {
      DATABASE_URL: database.url!,
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_MASTER_KEY: MASTER_KEY,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_EXTERNAL_URL: url,
    };
    const server = startProcess(['start', '--bootstrap', file], env);
    try {
      await waitHealthy(url);
      // warm the server's cache of the machine user, so that only change propagation can help
      await postForm(`${url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: `Basic ${Buffer.from(`reporter:${SECRETS.reporter}`).toString('base64')}` });
      const created = cli(['machine-key', 'create', '--user', 'reporter'], env);
      expect(created.status).toBe(0);
      const keyFile = JSON.parse(created.stdout) as { keyId: string; key: string; userId: string };
      const started = Date.now();
      let status = 0;
      while (status !== 200 && Date.now() - started < 5000) {
        const assertion = await new SignJWT({})
          .setProtectedHeader({ alg: 'RS256', kid: keyFile.keyId })
          .setIssuer(keyFile.userId)
          .setSubject(keyFile.userId)
          .setAudience(url)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(createPrivateKey(keyFile.key));
        status = (await postForm(`${url}/oauth/v2/token`, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion, scope: 'openid' })).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(status).toBe(200);
      server.child.kill('SIGTERM');
      expect(await exited(server.child)).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120000);
});
