/**
 * Two Gatehouse processes on one PostgreSQL database: each keeps revocations and the
 * stored tokens it has read in memory, so a revocation made on one node must reach the other within
 * a second (LISTEN/NOTIFY), and a node whose announcements may have been missed (its listening
 * connection cut) must stop trusting what it remembers until it listens again.
 * PostgreSQL only: the embedded database serves one process.
 */
import { stringify } from 'yaml';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyBootstrapFile } from '../../src/bootstrap/apply.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/server/request-context.ts';
import { startServer, type Running } from '../../src/server/start.ts';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { createTestDatabase } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { openDatabaseProxy, type DatabaseProxy } from '../support/database-proxy.ts';
import { freePort } from '../support/ports.ts';

const SCOPE = 'openid urn:gatehouse:iam:org:project:id:500000000000000001:aud';
const onPostgres = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

/** A node of the deployment: its own port, the deployment's one external URL (the issuer). */
async function node(databaseUrl: string, dir: string, externalUrl: string, bootstrap?: string): Promise<Running> {
  const port = await freePort();
  const config = loadConfig({
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_EXTERNAL_URL: externalUrl,
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATABASE_URL: databaseUrl,
  });
  return startServer({
    config,
    log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent'),
    prepare: async (db) => {
      if (bootstrap) await applyBootstrapFile(db, bootstrap);
    },
  });
}

async function token(url: string, user: 'reporter' | 'opaque-bot'): Promise<string> {
  const secret = user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot;
  const reply = await postForm(`${url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: SCOPE }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

async function active(url: string, value: string): Promise<boolean> {
  const reply = await postForm(`${url}/oauth/v2/introspect`, { token: value }, { authorization: basic('shop-api', SECRETS.api) });
  expect(reply.status).toBe(200);
  return reply.json['active'] === true;
}

/** How long until `url` calls the token inactive (polling every 20 ms); fails after 5 s. */
async function inactiveWithin(url: string, value: string): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < 5000) {
    if (!(await active(url, value))) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('still active after 5 s');
}

onPostgres('revocation across two nodes on one database', () => {
  let dir: string;
  let drop: () => Promise<void>;
  let proxy: DatabaseProxy;
  let a: Running;
  let b: Running;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nodes-'));
    const database = await createTestDatabase();
    drop = database.drop;
    const bootstrap = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(bootstrap, stringify(fixture().document));
    const issuer = `http://127.0.0.1:${await freePort()}`;
    a = await node(database.url!, dir, issuer, bootstrap);
    // node b reaches the database through a proxy the test can cut
    proxy = await openDatabaseProxy();
    b = await node(proxy.via(database.url!), dir, issuer);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await proxy?.cut();
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each(['opaque-bot', 'reporter'] as const)('a token of %s revoked on one node is inactive on the other within 1 s', async (user) => {
    const value = await token(a.url, user);
    // both nodes have verified it (and the other one remembers it)
    expect(await active(b.url, value)).toBe(true);
    expect(await active(a.url, value)).toBe(true);
    const revoke = await postForm(`${a.url}/oauth/v2/revoke`, { token: value }, { authorization: basic(user, user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot) });
    expect(revoke.status).toBe(200);
    expect(await active(a.url, value)).toBe(false);
    expect(await inactiveWithin(b.url, value)).toBeLessThan(1000);
  });

  it('does not trust what it remembers while it cannot hear revocations', async () => {
    const value = await token(a.url, 'opaque-bot');
    expect(await active(b.url, value)).toBe(true);
    expect(await active(b.url, value)).toBe(true); // now from b's memory
    // node b loses every connection (its listener too) and the revocation happens meanwhile
    await proxy.cut();
    const revoke = await postForm(`${a.url}/oauth/v2/revoke`, { token: value }, { authorization: basic('opaque-bot', SECRETS.opaqueBot) });
    expect(revoke.status).toBe(200);
    // b cannot know: it must not answer "active" from its memory (it asks the database, which is away)
    const meanwhile = await postForm(`${b.url}/oauth/v2/introspect`, { token: value }, { authorization: basic('shop-api', SECRETS.api) });
    expect(meanwhile.status).toBe(503);
    // and once the database is back, b answers from it
    await proxy.restore();
    expect(await inactiveWithin(b.url, value)).toBeLessThan(5000);
  });
});
