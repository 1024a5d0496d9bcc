/**
 * The directory reads a user with everything a token's checks and claims need in one statement
 * (store/users.ts `findUserWithGrants`): its row, its organization's domain, its roles, a machine's
 * keys with their expiry as dates, and its authorizations with each granting organization's domain,
 * on both databases.
 */
import { sql } from 'kysely';
import { Directory } from '../../src/domain/instance/directory.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

describe('the directory reads a user in one statement', () => {
  let database: FreshDatabase;
  const expiry = new Date('2031-05-06T07:08:09.123Z');

  beforeAll(async () => {
    database = await freshDatabase();
    const db = database.db;
    await sql`insert into instances (id, name) values ('dir', 'dir')`.execute(db);
    await sql`insert into orgs (id, instance_id, name, primary_domain) values ('home', 'dir', 'Home', 'home.test'), ('other', 'dir', 'Other', 'other.test')`.execute(db);
    await sql`insert into projects (id, instance_id, org_id, name) values ('p1', 'dir', 'other', 'P1'), ('p2', 'dir', 'home', 'P2')`.execute(db);
    await sql`insert into users (id, instance_id, org_id, kind, user_name, email, created_at, changed_at)
      values ('bot', 'dir', 'home', 'machine', 'bot', null, now(), now()), ('ann', 'dir', 'home', 'human', 'ann', 'ann@home.test', now(), now()),
             ('bare', 'dir', 'other', 'human', 'bare', null, now(), now())`.execute(db);
    await sql`insert into user_roles (user_id, role, scope_org_id) values ('bot', 'ORG_OWNER', 'home'), ('bot', 'IAM_OWNER', '')`.execute(db);
    await sql`insert into machine_keys (id, user_id, public_key, expires_at) values ('k1', 'bot', 'pem-1', ${expiry}), ('k2', 'bot', 'pem-2', null)`.execute(db);
    await sql`insert into authorizations (id, instance_id, org_id, user_id, project_id, roles)
      values ('a1', 'dir', 'other', 'ann', 'p1', '{reader,"writer, with comma"}'), ('a2', 'dir', 'home', 'ann', 'p2', '{}')`.execute(db);
  });
  afterAll(() => database.close());

  it('a machine: roles, and keys with their expiry', async () => {
    const user = await new Directory(database.db).user('bot');
    expect(user).toMatchObject({ id: 'bot', orgId: 'home', loginName: 'bot@home.test', kind: 'machine', authorizations: [] });
    expect(user!.roles).toEqual(expect.arrayContaining([{ role: 'ORG_OWNER', orgId: 'home' }, { role: 'IAM_OWNER', orgId: '' }]));
    expect(user!.keys).toEqual(expect.arrayContaining([{ id: 'k1', pem: 'pem-1', expiresAt: expiry }, { id: 'k2', pem: 'pem-2', expiresAt: null }]));
    expect(user!.keys.find((key) => key.id === 'k1')!.expiresAt).toBeInstanceOf(Date);
  });

  it('a human: authorizations with the granting organization’s domain and roles as given', async () => {
    const user = await new Directory(database.db).user('ann');
    expect(user).toMatchObject({ roles: [], keys: [], email: 'ann@home.test' });
    expect(user!.authorizations).toEqual(
      expect.arrayContaining([
        { projectId: 'p1', orgId: 'other', orgDomain: 'other.test', roles: ['reader', 'writer, with comma'] },
        { projectId: 'p2', orgId: 'home', orgDomain: 'home.test', roles: [] },
      ]),
    );
  });

  it('a user with nothing but its row, and no user', async () => {
    const directory = new Directory(database.db);
    expect(await directory.user('bare')).toMatchObject({ roles: [], keys: [], authorizations: [], loginName: 'bare@other.test' });
    expect(await directory.user('nobody')).toBeUndefined();
  });
});
