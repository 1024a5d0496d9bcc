/**
 * Nothing that was answered is lost (docs/decisions.md#durability): a token returned to a client is
 * committed before the response, even when several requests' tokens share one INSERT. A real
 * `gatehouse start` process answers a burst of client_credentials requests and is killed with
 * SIGKILL right after its answers; a new process on the same database then finds every token it
 * returned, and every revocation it confirmed with 200.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { createTestDatabase } from '../support/gatehouse.ts';
import { restoreSnapshot } from '../support/snapshot.ts';
import { basic, postForm } from '../support/http.ts';
import { freePort } from '../support/ports.ts';

const MAIN = path.resolve('src/main.ts');
const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
const SCOPE = 'openid urn:gatehouse:iam:org:project:id:500000000000000001:aud';

interface Process {
  child: ChildProcess;
  url: string;
  output(): string;
}

async function startGatehouse(env: Record<string, string>, bootstrap: string): Promise<Process> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, [MAIN, 'start', '--bootstrap', bootstrap], {
    env: {
      ...process.env,
      GATEHOUSE_LOG_LEVEL: 'warn',
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_EXTERNAL_URL: url,
      GATEHOUSE_MASTER_KEY: MASTER_KEY,
      ...env,
    },
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let i = 0; i < 1200 && child.exitCode === null; i++) {
    try {
      if ((await fetch(`${url}/ready`)).ok) return { child, url, output: () => output };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`gatehouse did not start: ${output}`);
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Sends `total` requests, `parallel` at a time; calls `answered` with each 200's body as it arrives. */
async function burst(total: number, parallel: number, send: () => Promise<{ status: number; json: Record<string, unknown> }>, answered: (json: Record<string, unknown>) => boolean): Promise<void> {
  let started = 0;
  let stop = false;
  const worker = async (): Promise<void> => {
    while (!stop && started < total) {
      started += 1;
      const reply = await send().catch(() => undefined);
      if (reply?.status === 200 && answered(reply.json)) stop = true;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

function introspect(url: string, token: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return postForm(`${url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
}

describe('SIGKILL right after the answers', () => {
  let dir: string;
  let env: Record<string, string>;
  let bootstrap: string;
  let drop: () => Promise<void>;
  let running: Process | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-durability-'));
    const database = await createTestDatabase();
    drop = database.drop;
    if (database.url === undefined) restoreSnapshot(dir); // the run's migrated embedded database: no initdb in the child
    env = database.url ? { DATABASE_URL: database.url } : { DATABASE_URL: '', GATEHOUSE_DATA_DIR: dir };
    bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(fixture().document));
  });
  afterAll(async () => {
    if (running) await killed(running.child);
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every opaque token it returned and every revocation it confirmed', async () => {
    running = await startGatehouse(env, bootstrap);
    const first = running;
    const issue = () => postForm(`${first.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: SCOPE }, { authorization: basic('opaque-bot', SECRETS.opaqueBot) });

    // a warm-up set to revoke later, then the burst that the kill interrupts
    const toRevoke: string[] = [];
    await burst(20, 4, issue, (json) => (toRevoke.push(String(json['access_token'])), false));
    expect(toRevoke).toHaveLength(20);

    const returned: string[] = [];
    const revoked: string[] = [];
    let next = 0;
    const revokeNext = async () => {
      const token = toRevoke[next++];
      if (token === undefined) return { status: 0, json: {} };
      const reply = await postForm(`${first.url}/oauth/v2/revoke`, { token }, { authorization: basic('opaque-bot', SECRETS.opaqueBot) });
      if (reply.status === 200) revoked.push(token);
      return reply;
    };
    // tokens and revocations in flight together, 32 at a time; SIGKILL as soon as 150 tokens came back
    await Promise.all([
      burst(1000, 28, issue, (json) => {
        returned.push(String(json['access_token']));
        if (returned.length === 150) first.child.kill('SIGKILL');
        return returned.length >= 150;
      }),
      burst(20, 4, revokeNext, () => false),
    ]);
    await killed(first.child);
    expect(returned.length).toBeGreaterThanOrEqual(150);

    running = await startGatehouse(env, bootstrap);
    const second = running;
    const missing: string[] = [];
    for (const token of returned) {
      const reply = await introspect(second.url, token);
      if (reply.json['active'] !== true) missing.push(token);
    }
    expect(missing).toEqual([]);
    for (const token of revoked) expect((await introspect(second.url, token)).json).toEqual({ active: false });
  }, 180_000);
});
