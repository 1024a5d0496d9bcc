/**
 * First run (docs/bootstrap.md#how-a-file-is-applied): defaults created once on an empty database,
 * printed once, safe under concurrency.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultDomain, ensureFirstRun, printFirstRun, type FirstRunResult } from '../../src/bootstrap/first-run.ts';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { sha256, verifySecret } from '../../src/domain/kernel/crypto.ts';
import { openDatabase, type DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const PAT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-first-pat-'));
const OPTIONS = { externalUrl: 'http://localhost:8080', serviceName: 'gatehouse', patPath: path.join(PAT_DIR, 'with space', 'admin.pat') };

afterAll(() => fs.rmSync(PAT_DIR, { recursive: true, force: true }));

async function count(db: DB, table: 'instances' | 'orgs' | 'users' | 'projects' | 'apps' | 'events'): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('first run', () => {
  let database: FreshDatabase;
  let db: DB;
  let result: FirstRunResult | null;

  beforeAll(async () => {
    database = await freshDatabase();
    db = database.db;
  }, 120_000);

  afterAll(async () => {
    await database.close();
  });

  it('creates an instance, a default org, an admin and a demo client on an empty database', async () => {
    result = await ensureFirstRun(db, OPTIONS);
    expect(result).not.toBeNull();
    const created = result!;
    expect(created.org).toEqual({ id: expect.any(String), name: 'Gatehouse', domain: 'gatehouse.localhost' });
    expect(created.admin).toMatchObject({ userName: 'admin', loginName: 'admin@gatehouse.localhost' });
    expect(created.admin.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(created.apiScope).toBe('urn:gatehouse:iam:org:project:id:gatehouse:aud');

    const instance = await db.selectFrom('instances').selectAll().executeTakeFirstOrThrow();
    expect(instance).toMatchObject({ id: created.instanceId, name: 'Gatehouse', default_org_id: created.org.id });
    const admin = await db.selectFrom('users').selectAll().where('id', '=', created.admin.id).executeTakeFirstOrThrow();
    expect(admin).toMatchObject({ kind: 'human', user_name: 'admin', org_id: created.org.id, email: 'admin@gatehouse.localhost', email_verified: true });
    expect(await verifySecret(admin.password_hash!, created.admin.password)).toBe(true);
    expect(await db.selectFrom('user_roles').selectAll().orderBy('user_id').execute()).toEqual(
      [{ user_id: admin.id, role: 'IAM_OWNER', scope_org_id: '' }, { user_id: created.pat.userId, role: 'IAM_OWNER', scope_org_id: '' }].sort((a, b) => a.user_id.localeCompare(b.user_id)),
    );
    expect(await db.selectFrom('projects').select(['id', 'name', 'org_id']).execute()).toEqual([{ id: created.project.id, name: 'Demo', org_id: created.org.id }]);

    const app = await db.selectFrom('apps').selectAll().executeTakeFirstOrThrow();
    expect(app).toMatchObject({
      id: created.client.id, client_id: 'demo-web', project_id: created.project.id, kind: 'oidc', auth_method: 'client_secret_basic',
      redirect_uris: ['http://localhost:3000/callback'], response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'],
      access_token_type: 'jwt', dev_mode: true,
    });
    expect(await verifySecret(app.secret_hash!, created.client.clientSecret)).toBe(true);

    // The cleartext password and secret are returned once and stored nowhere.
    const stored = JSON.stringify([
      await db.selectFrom('users').selectAll().execute(),
      await db.selectFrom('apps').selectAll().execute(),
      await db.selectFrom('events').selectAll().execute(),
    ]);
    expect(stored).not.toContain(created.admin.password);
    expect(stored).not.toContain(created.client.clientSecret);
  });

  it('gives the API a machine user with IAM_OWNER and a personal access token for 30 days, in a file only its owner reads', async () => {
    const { pat } = result!;
    const machine = await db.selectFrom('users').selectAll().where('id', '=', pat.userId).executeTakeFirstOrThrow();
    expect(machine).toMatchObject({ kind: 'machine', user_name: 'admin-api' });
    expect(pat.path).toBe(OPTIONS.patPath);
    expect((fs.statSync(pat.path).mode & 0o777).toString(8)).toBe('600');
    const token = fs.readFileSync(pat.path, 'utf8');
    expect(token).toMatch(/^gatehouse_pat_[A-Za-z0-9_-]{43}\n$/);
    const row = await db.selectFrom('personal_access_tokens').selectAll().where('id', '=', pat.tokenId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: pat.userId, token_hash: sha256(token.trim()) });
    const days = (row.expires_at.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('is skipped once the database has an instance', async () => {
    const events = await count(db, 'events');
    expect(await ensureFirstRun(db, OPTIONS)).toBeNull();
    expect(await count(db, 'events')).toBe(events);
    expect(await count(db, 'instances')).toBe(1);
  });

  it('leaves the instance to a bootstrap file applied later', async () => {
    const summary = await applyBootstrap(db, parseBootstrap('orgs:\n  - name: ACME\n    domain: acme.test\n', 'later.yaml'));
    expect(summary.instanceId).toBe(result!.instanceId);
    expect(await count(db, 'instances')).toBe(1);
    const instance = await db.selectFrom('instances').select('default_org_id').executeTakeFirstOrThrow();
    expect(instance.default_org_id).toBe(result!.org.id);
  });

  it('prints the issuer, the admin login, the client and a ready authorize URL', () => {
    const text = printFirstRun(result!, 'http://localhost:8080');
    expect(text).toContain('issuer             http://localhost:8080\n');
    expect(text).toContain('discovery          http://localhost:8080/.well-known/openid-configuration\n');
    expect(text).toContain(`admin login        admin@gatehouse.localhost`);
    expect(text).toContain(`admin password     ${result!.admin.password}\n`);
    expect(text).toContain('client_id          demo-web\n');
    expect(text).toContain(`client_secret      ${result!.client.clientSecret}\n`);
    // The curl is a shell command as is: the path (with a space in it here) is quoted.
    const curl = text.split('\n').find((line) => line.trim().startsWith('curl '))!.trim();
    expect(curl).toBe(
      `curl -s -X POST http://localhost:8080/v2/organizations/_search -H "Authorization: Bearer $(cat '${OPTIONS.patPath}')" -H 'Content-Type: application/json' -d '{}'`,
    );
    expect(execFileSync('sh', ['-c', `echo $(cat '${OPTIONS.patPath}')`], { encoding: 'utf8' }).trim()).toBe(fs.readFileSync(OPTIONS.patPath, 'utf8').trim());
    expect(text).toMatch(
      /http:\/\/localhost:8080\/oauth\/v2\/authorize\?client_id=demo-web&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback&response_type=code&scope=openid%20profile%20email&state=[A-Za-z0-9_-]{16}\n/,
    );
  });
});

describe('first run domain', () => {
  it.each([
    ['http://localhost:8080', 'gatehouse.localhost'],
    ['http://127.0.0.1:8080', 'gatehouse.localhost'],
    ['http://[::1]:8080', 'gatehouse.localhost'],
    ['https://Auth.Example.com', 'auth.example.com'],
    ['https://id.acme.test/base', 'id.acme.test'],
  ])('%s gives %s', (url, domain) => {
    expect(defaultDomain(url)).toBe(domain);
  });
});

describe('concurrent first run', () => {
  it('creates exactly one instance when several processes start at once', async () => {
    const database = await freshDatabase();
    // On PostgreSQL each "process" has its own pool; PGlite is one process by nature.
    const others = database.databaseUrl
      ? await Promise.all([1, 2, 3].map(async () => (await openDatabase({ databaseUrl: database.databaseUrl, dataDir: '' })).db))
      : [];
    const pools = [database.db, ...others];
    try {
      const results = await Promise.all([...pools, ...pools].map((pool) => ensureFirstRun(pool, OPTIONS)));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      for (const table of ['instances', 'orgs', 'projects', 'apps'] as const) expect(await count(database.db, table)).toBe(1);
      expect(await count(database.db, 'users')).toBe(2); // the admin and the API's machine user
    } finally {
      for (const other of others) await other.destroy();
      await database.close();
    }
  }, 120_000);
});
