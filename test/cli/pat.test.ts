/**
 * The operator's first API credential (docs/management-api.md#personal-access-tokens), as an operator
 * meets it: the first start writes the `admin-api` personal access token and prints a curl that works
 * as is; `gatehouse pat create` makes more, on stdout or into a file only its owner reads; the server
 * takes them as bearer tokens. Real processes, a real shell and curl.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { restoreSnapshot } from '../support/snapshot.ts';
import { cli, startProcess, waitForOutput, waitHealthy } from '../support/cli.ts';

const MASTER_KEY = Buffer.alloc(32, 6).toString('base64');

const start = (env: Record<string, string>) => startProcess(['start'], env);

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function organizations(url: string, token: string): Promise<{ status: number; names: string[] }> {
  const response = await fetch(`${url}/v2/organizations/_search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { result?: { name: string }[] };
  return { status: response.status, names: (body.result ?? []).map((org) => org.name) };
}

describe('personal access tokens from the command line', () => {
  let dir: string;
  let env: Record<string, string>;
  let url: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-pat-'));
    database = await createTestDatabase();
    if (database.url === undefined) restoreSnapshot(dir); // migrated and empty: the first start creates the defaults
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_MASTER_KEY: MASTER_KEY,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_EXTERNAL_URL: url,
      DATABASE_URL: database.url ?? '',
    };
  });

  afterAll(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the first start writes the admin-api token and prints a curl that works as printed', async () => {
    const server = start(env);
    try {
      await waitHealthy(url);
      await waitForOutput(server.output, 'curl ');
      const printed = server.output();
      const file = path.join(dir, 'admin.pat');
      expect(printed).toContain(`is in ${file} (readable by this account only)`);
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
      const curl = printed.split('\n').find((line) => line.trim().startsWith('curl '))!.trim();
      const answer = JSON.parse(execFileSync('sh', ['-c', curl], { encoding: 'utf8' })) as { result: { name: string }[] };
      expect(answer.result.map((org) => org.name)).toEqual(['Gatehouse']);
    } finally {
      await stop(server.child);
    }
    // Written once: a second start leaves the file and prints no token.
    const before = fs.readFileSync(path.join(dir, 'admin.pat'), 'utf8');
    const again = start(env);
    try {
      await waitHealthy(url);
      expect(again.output()).not.toContain('curl ');
      expect(fs.readFileSync(path.join(dir, 'admin.pat'), 'utf8')).toBe(before);
    } finally {
      await stop(again.child);
    }
  }, 120_000);

  it('`gatehouse pat create` makes tokens on stdout or into a file, and refuses what is wrong', async () => {
    const printed = cli(['pat', 'create', '--user', 'admin-api'], env);
    expect(printed.status).toBe(0);
    expect(printed.stdout).toMatch(/^gatehouse_pat_[A-Za-z0-9_-]{43}\n$/);
    expect(printed.stderr).toMatch(/^personal access token \d+ for admin-api, expires \d{4}-\d\d-\d\dT/m);

    const out = path.join(dir, 'ci.pat');
    fs.writeFileSync(out, 'old', { mode: 0o644 });
    const written = cli(['pat', 'create', '--user', 'admin-api', '--expires', '2099-01-01T00:00:00Z', '--out', out], env);
    expect(written).toMatchObject({ status: 0, stdout: expect.stringMatching(new RegExp(`^wrote personal access token \\d+ for admin-api \\(expires 2099-01-01T00:00:00\\.000Z\\) to ${out.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n$`)) });
    expect((fs.statSync(out).mode & 0o777).toString(8)).toBe('600');
    expect(fs.readFileSync(out, 'utf8')).toMatch(/^gatehouse_pat_[A-Za-z0-9_-]{43}\n$/);

    expect(cli(['pat', 'create', '--user', 'admin-api', '--expires', 'tomorrow'], env)).toMatchObject({ status: 2, stderr: expect.stringContaining('--expires tomorrow is not an RFC 3339 date') });
    expect(cli(['pat', 'create', '--user', 'admin-api', '--expires', '2001-01-01'], env)).toMatchObject({ status: 2, stderr: expect.stringContaining('--expires 2001-01-01 lies in the past') });
    expect(cli(['pat', 'create', '--user', 'nobody'], env)).toMatchObject({ status: 1, stderr: expect.stringContaining('no machine user named "nobody"') });
    expect(cli(['pat', 'create'], env).status).toBe(2);
    expect(cli(['pat', 'list'], env).status).toBe(2);

    const server = start(env);
    try {
      await waitHealthy(url);
      expect(await organizations(url, printed.stdout.trim())).toEqual({ status: 200, names: ['Gatehouse'] });
      expect(await organizations(url, fs.readFileSync(out, 'utf8').trim())).toEqual({ status: 200, names: ['Gatehouse'] });
    } finally {
      await stop(server.child);
    }
  }, 120_000);
});
