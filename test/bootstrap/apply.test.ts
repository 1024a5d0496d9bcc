/** Applying a bootstrap file to a real database: creation, idempotence, updates, all or nothing. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { verifySecret } from '../../src/domain/kernel/crypto.ts';
import { getFeatures } from '../../src/domain/instance/features.ts';
import { applyBootstrap, applyBootstrapFile } from '../../src/bootstrap/apply.ts';
import { BootstrapError, parseBootstrap } from '../../src/bootstrap/schema.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { exampleYaml, rsaKey, type Example } from './example.ts';

let database: FreshDatabase;
let db: DB;
let example: Example;

beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
  example = exampleYaml();
}, 120_000);

afterAll(async () => {
  await database.close();
});

const TABLES = ['instances', 'instance_features', 'orgs', 'users', 'user_roles', 'machine_keys', 'projects', 'apps', 'app_keys', 'events'] as const;

/** Every row of every table the bootstrap writes, in a stable order. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = await db.selectFrom(table).selectAll().execute();
    result[table] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return result;
}

async function eventsAfter(sequence: string) {
  return db
    .selectFrom('events')
    .select(['aggregate_type', 'aggregate_id', 'resource_owner', 'event_type', 'payload'])
    .where('sequence', '>', sequence)
    .orderBy('sequence')
    .execute();
}

async function lastSequence(): Promise<string> {
  const row = await db.selectFrom('events').select('sequence').orderBy('sequence', 'desc').limit(1).executeTakeFirst();
  return row?.sequence ?? '0';
}

const apply = (yaml: string) => applyBootstrap(db, parseBootstrap(yaml, 'bootstrap.yaml'));

describe('applying the example bootstrap file', () => {
  it('creates the instance, the org, its users, machines, project and apps', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bootstrap-'));
    const file = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(file, example.yaml);
    const summary = await applyBootstrapFile(db, file);
    fs.rmSync(dir, { recursive: true });

    expect({ created: summary.created, updated: summary.updated, unchanged: summary.unchanged }).toEqual({ created: 11, updated: 0, unchanged: 0 });
    expect(summary.byKind.app.created).toBe(5);

    const instance = await db.selectFrom('instances').selectAll().executeTakeFirstOrThrow();
    expect(instance).toMatchObject({ id: summary.instanceId, name: 'Gatehouse', default_org_id: '100000000000000001', enable_impersonation: true });
    expect((await getFeatures(db, instance.id)).oidcTokenExchange).toEqual({ enabled: true, source: 'instance' });
    expect(await db.selectFrom('orgs').select(['id', 'name', 'primary_domain']).execute()).toEqual([
      { id: '100000000000000001', name: 'ACME', primary_domain: 'acme.test' },
    ]);

    const alice = await db.selectFrom('users').selectAll().where('id', '=', '200000000000000001').executeTakeFirstOrThrow();
    expect(alice).toMatchObject({ kind: 'human', user_name: 'alice', email: 'alice@acme.test', email_verified: true, nickname: 'ali', phone: '+41791234567', preferred_language: 'en' });
    expect(await verifySecret(alice.password_hash!, 'Correct-Horse-9')).toBe(true);
    expect(alice.password_hash).toMatch(/^\$argon2id\$/);
    const bob = await db.selectFrom('users').selectAll().where('user_name', '=', 'bob').executeTakeFirstOrThrow();
    expect(bob).toMatchObject({ org_id: '100000000000000001', email_verified: false });

    const roles = await db.selectFrom('user_roles').selectAll().orderBy('role').execute();
    expect(roles).toEqual([
      { user_id: '300000000000000001', role: 'IAM_OWNER', scope_org_id: '' },
      { user_id: '200000000000000001', role: 'ORG_OWNER', scope_org_id: '100000000000000001' },
    ]);

    const reporter = await db.selectFrom('users').selectAll().where('id', '=', '300000000000000001').executeTakeFirstOrThrow();
    expect(reporter).toMatchObject({ kind: 'machine', access_token_type: 'jwt', password_hash: null });
    expect(await verifySecret(reporter.secret_hash!, 'reporter-secret')).toBe(true);
    const machineKey = await db.selectFrom('machine_keys').selectAll().executeTakeFirstOrThrow();
    expect(machineKey).toMatchObject({ id: '400000000000000001', user_id: reporter.id, public_key: example.reporterKey.publicPem });

    const apps = await db.selectFrom('apps').selectAll().orderBy('client_id').execute();
    const byClient = Object.fromEntries(apps.map((app) => [app.client_id, app]));
    expect(byClient['shop-web']).toMatchObject({
      kind: 'oidc', project_id: '500000000000000001', org_id: '100000000000000001', auth_method: 'client_secret_basic',
      redirect_uris: ['http://localhost:3000/callback'], post_logout_redirect_uris: ['http://localhost:3000/'],
      response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'], access_token_type: 'jwt', dev_mode: true,
    });
    expect(await verifySecret(byClient['shop-web']!.secret_hash!, 'shop-web-secret')).toBe(true);
    expect(byClient['shop-spa']).toMatchObject({ auth_method: 'none', secret_hash: null, access_token_type: 'opaque' });
    expect(byClient['shop-api']).toMatchObject({ kind: 'api', response_types: [], grant_types: [], redirect_uris: [] });
    expect(byClient['shop-portal']).toMatchObject({ response_types: ['id_token token', 'id_token'], grant_types: ['implicit'] });
    const appKey = await db.selectFrom('app_keys').selectAll().executeTakeFirstOrThrow();
    expect(appKey).toMatchObject({ id: '600000000000000001', app_id: byClient['shop-backend']!.id, public_key: example.backendKey.publicPem });

    const events = await eventsAfter('0');
    expect(events.map((event) => event.event_type)).toEqual([
      'instance.added', 'instance.features.set', 'org.added', 'user.human.added', 'user.human.added', 'user.machine.added',
      'project.added', 'app.added', 'app.added', 'app.added', 'app.added', 'app.added',
    ]);
    for (const event of events.filter((e) => e.aggregate_type !== 'instance')) expect(event.resource_owner).toBe('100000000000000001');
    expect(JSON.stringify(events)).not.toMatch(/Correct-Horse-9|reporter-secret|shop-web-secret/);
  });

  it('changes nothing and appends no event when applied again', async () => {
    const before = await snapshot();
    const summary = await apply(example.yaml);
    expect({ created: summary.created, updated: summary.updated, unchanged: summary.unchanged }).toEqual({ created: 0, updated: 0, unchanged: 11 });
    expect(await snapshot()).toEqual(before);
  });

  it('applies the same content given as JSON without a change', async () => {
    const before = await snapshot();
    const asJson = JSON.stringify(parse(example.yaml), null, 2);
    const summary = await applyBootstrap(db, parseBootstrap(asJson, 'bootstrap.json'));
    expect(summary.updated + summary.created).toBe(0);
    expect(await snapshot()).toEqual(before);
  });

  it('updates what changed and appends exactly one event per changed object', async () => {
    const start = await lastSequence();
    const changed = example.yaml
      .replace('email: alice@acme.test', 'email: alice@new.test')
      .replace('password: "Another-Horse-7"', 'password: "Another-Horse-8"')
      .replace('redirectUris: ["http://localhost:3000/callback"]', 'redirectUris: ["http://localhost:3000/callback", "https://shop.acme.test/cb"]')
      .replace('        accessTokenType: jwt\n        roles: [IAM_OWNER]', '        accessTokenType: opaque\n        roles: [IAM_OWNER, IAM_ADMIN_IMPERSONATOR]')
      .replace('oidcTokenExchange: true', 'oidcTokenExchange: false');
    const summary = await apply(changed);
    expect({ created: summary.created, updated: summary.updated, unchanged: summary.unchanged }).toEqual({ created: 0, updated: 5, unchanged: 6 });

    const bob = await db.selectFrom('users').selectAll().where('user_name', '=', 'bob').executeTakeFirstOrThrow();
    const web = await db.selectFrom('apps').selectAll().where('client_id', '=', 'shop-web').executeTakeFirstOrThrow();
    const instanceId = summary.instanceId;
    expect(await eventsAfter(start)).toEqual([
      { aggregate_type: 'instance', aggregate_id: instanceId, resource_owner: instanceId, event_type: 'instance.features.set', payload: { oidcTokenExchange: false } },
      { aggregate_type: 'user', aggregate_id: '200000000000000001', resource_owner: '100000000000000001', event_type: 'user.human.changed', payload: { changed: ['email'] } },
      { aggregate_type: 'user', aggregate_id: bob.id, resource_owner: '100000000000000001', event_type: 'user.human.changed', payload: { changed: ['password'] } },
      { aggregate_type: 'user', aggregate_id: '300000000000000001', resource_owner: '100000000000000001', event_type: 'user.machine.changed', payload: { changed: ['access_token_type', 'roles'] } },
      { aggregate_type: 'app', aggregate_id: web.id, resource_owner: '100000000000000001', event_type: 'app.changed', payload: { changed: ['redirect_uris'] } },
    ]);
    expect(await verifySecret(bob.password_hash!, 'Another-Horse-8')).toBe(true);
    expect(web.redirect_uris).toEqual(['http://localhost:3000/callback', 'https://shop.acme.test/cb']);
    expect((await getFeatures(db, instanceId)).oidcTokenExchange.enabled).toBe(false);
    const reporterRoles = await db.selectFrom('user_roles').select('role').where('user_id', '=', '300000000000000001').orderBy('role').execute();
    expect(reporterRoles.map((row) => row.role)).toEqual(['IAM_ADMIN_IMPERSONATOR', 'IAM_OWNER']);

    // The new state is stable in turn.
    const again = await lastSequence();
    expect((await apply(changed)).unchanged).toBe(11);
    expect(await lastSequence()).toBe(again);
    await apply(example.yaml);
  });

  it('renames an object matched by id, and keeps fields a human user leaves out', async () => {
    const start = await lastSequence();
    const renamed = example.yaml.replace('name: ACME', 'name: ACME Corp').replace('        nickname: ali\n', '');
    await apply(renamed);
    expect(await db.selectFrom('orgs').select(['id', 'name']).execute()).toEqual([{ id: '100000000000000001', name: 'ACME Corp' }]);
    const alice = await db.selectFrom('users').select('nickname').where('id', '=', '200000000000000001').executeTakeFirstOrThrow();
    expect(alice.nickname).toBe('ali');
    expect((await eventsAfter(start)).map((event) => [event.event_type, event.payload])).toEqual([['org.changed', { changed: ['name'] }]]);
    await apply(example.yaml);
  });

  it('sets allowRegister per organization; leaving it out restores the default (docs/security.md 10.12)', async () => {
    const allowRegister = async () => (await db.selectFrom('orgs').select('allow_register').where('id', '=', '100000000000000001').executeTakeFirstOrThrow()).allow_register;
    expect(await allowRegister()).toBe(true);
    const start = await lastSequence();
    await apply(example.yaml.replace('allowRegister: true', 'allowRegister: false'));
    expect(await allowRegister()).toBe(false);
    await apply(example.yaml.replace('    allowRegister: true\n', ''));
    expect(await allowRegister()).toBeNull();
    expect((await eventsAfter(start)).map((event) => [event.event_type, event.payload])).toEqual([
      ['org.changed', { changed: ['allow_register'] }],
      ['org.changed', { changed: ['allow_register'] }],
    ]);
    await apply(example.yaml);
    expect(await allowRegister()).toBe(true);
  });

  it('keeps machine keys the file does not list', async () => {
    const extra = rsaKey();
    const reporter = '300000000000000001';
    await db.insertInto('machine_keys').values({ id: 'cli-key', user_id: reporter, public_key: extra.publicPem, expires_at: null }).execute();
    const summary = await apply(example.yaml);
    expect(summary.updated).toBe(0);
    expect((await db.selectFrom('machine_keys').select('id').where('user_id', '=', reporter).orderBy('id').execute()).map((row) => row.id)).toEqual([
      '400000000000000001',
      'cli-key',
    ]);
  });

  it('is all or nothing: a conflict half-way leaves no trace', async () => {
    const before = await snapshot();
    const document = `
orgs:
  - name: Fresh
    domain: fresh.test
    users:
      - userName: carol
        password: "Correct-Horse-1"
  - name: Clash
    domain: ACME.test
`;
    const error: unknown = await apply(document).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BootstrapError);
    expect((error as BootstrapError).message).toContain(
      'bootstrap.yaml: orgs[1].domain: domain "acme.test" is the primary domain of organization "ACME" (100000000000000001)',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('refuses an id that contradicts the natural key', async () => {
    const before = await snapshot();
    const error: unknown = await apply('orgs:\n  - id: "999"\n    name: ACME\n    domain: acme.test\n').catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(
      'bootstrap.yaml: orgs[0].id: organization name "ACME" already belongs to the object with id 100000000000000001, not to id 999',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('rejects an invalid file before touching the database', async () => {
    const empty = await freshDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bootstrap-'));
    const file = path.join(dir, 'bad.yaml');
    fs.writeFileSync(file, example.yaml.replace('authMethod: none', 'authMethod: nope'));
    try {
      await expect(applyBootstrapFile(empty.db, file)).rejects.toThrow(`${file}: orgs[0].projects[0].apps[1].authMethod: must be one of`);
      expect(await empty.db.selectFrom('instances').selectAll().execute()).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true });
      await empty.close();
    }
  }, 120_000);
});
