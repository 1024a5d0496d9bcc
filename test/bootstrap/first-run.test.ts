/**
 * First run (docs/bootstrap.md#how-a-file-is-applied): defaults created once on an empty database,
 * printed once, safe under concurrency.
 */
import { defaultDomain, ensureFirstRun, printFirstRun, type FirstRunResult } from '../../src/bootstrap/first-run.ts';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { verifySecret } from '../../src/domain/kernel/crypto.ts';
import { openDatabase, type DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const OPTIONS = { externalUrl: 'http://localhost:8080', serviceName: 'gatehouse' };

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
    expect(await db.selectFrom('user_roles').selectAll().execute()).toEqual([{ user_id: admin.id, role: 'IAM_OWNER', scope_org_id: '' }]);
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
      for (const table of ['instances', 'orgs', 'users', 'projects', 'apps'] as const) expect(await count(database.db, table)).toBe(1);
    } finally {
      for (const other of others) await other.destroy();
      await database.close();
    }
  }, 120_000);
});
