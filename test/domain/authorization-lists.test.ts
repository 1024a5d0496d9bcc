/**
 * The authorization list (store/authorizations.ts `listAuthorizations`) answers from indexes and
 * counters (docs/performance.md#a-million-users), and answers exactly what its filters say: every
 * page, order and total is compared with a plain reading of the filters in JavaScript over every
 * row, for each filter, in the scopes an administrator can have. On PostgreSQL the query plans of the
 * common lists are checked against tens of thousands of authorizations: no sequential scan of
 * `authorizations` (a filter matching a sizeable share of them, such as the users of one of six
 * organizations, is counted by reading them, which the planner may rightly do in one pass).
 */
import { sql } from 'kysely';
import type { DB } from '../../src/store/database.ts';
import { listAuthorizations, type AuthorizationFilter, type AuthorizationSort } from '../../src/store/authorizations.ts';
import type { Page, TextFilter } from '../../src/store/list-query.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { byBytes, matchesText, plansOf } from '../support/list-oracle.ts';

const INSTANCE = 'grants';
const ORGS = 6;

interface Row {
  id: string;
  org_id: string;
  user_id: string;
  project_id: string;
  project_name: string;
  roles: string[];
  created_at: Date;
  changed_at: Date;
  user_org_id: string;
  login_name: string;
  display_name: string | null;
}

/**
 * Seeds in one transaction without the pool's statement timeout (GATEHOUSE_STATEMENT_TIMEOUT_MS): a
 * busy machine may take longer than that for the bulk inserts of tens of thousands of rows.
 */
async function seed(db: DB, users: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local statement_timeout = 0`.execute(trx);
    await seedRows(trx, users);
  });
}

/**
 * Users n = 1..users in six organizations (user names in both letter cases, some with '@' and LIKE's
 * wildcards); projects p0…p2 of org0…org2; each user authorized for one project, every seventh for a
 * second one, with pairs created in the same instant (the order then falls back to the id).
 */
async function seedRows(db: DB, users: number): Promise<void> {
  await sql`insert into instances (id, name) values (${INSTANCE}, 'grants')`.execute(db);
  await sql`insert into orgs (id, instance_id, name, primary_domain)
    select 'org' || k, ${INSTANCE}, 'Org ' || k, 'o' || k || '.grants.test' from generate_series(0, ${ORGS - 1}) k`.execute(db);
  await sql`insert into projects (id, instance_id, org_id, name)
    values ('p0', ${INSTANCE}, 'org0', 'Portal'), ('p1', ${INSTANCE}, 'org1', 'billing_x'), ('p2', ${INSTANCE}, 'org2', 'Per%cent')`.execute(db);
  await sql`insert into users (id, instance_id, org_id, kind, user_name, display_name, created_at, changed_at)
    select 'u' || lpad(n::text, 6, '0'), ${INSTANCE}, 'org' || (n % ${ORGS}), 'human',
      case when n % 17 = 0 then 'mail' || n || '@Example.com' when n % 19 = 0 then 'under_score' || n when n % 5 = 0 then 'User' || n else 'user' || n end,
      case when n % 9 = 0 then null else 'Display ' || n end,
      timestamptz '2026-01-01' + (n || ' seconds')::interval, now()
    from generate_series(1, ${users}) n`.execute(db);
  await sql`insert into authorizations (id, instance_id, org_id, user_id, project_id, roles, created_at, changed_at)
    select 'a' || lpad(n::text, 6, '0') || '-' || p, ${INSTANCE}, 'org' || p, 'u' || lpad(n::text, 6, '0'), 'p' || p,
      case when n % 3 = 0 then array['admin', 'reader'] when n % 3 = 1 then array['reader'] else array[]::text[] end,
      timestamptz '2026-02-01' + ((n / 2) || ' seconds')::interval, now()
    from generate_series(1, ${users}) n
    cross join lateral (select n % 3 as p union all select (n + 1) % 3 where n % 7 = 0) as projects`.execute(db);
  await sql`analyze`.execute(db);
}

async function allRows(db: DB): Promise<Row[]> {
  return db
    .selectFrom('authorizations as a')
    .innerJoin('projects as p', 'p.id', 'a.project_id')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .innerJoin('orgs as uo', 'uo.id', 'u.org_id')
    .select(['a.id', 'a.org_id', 'a.user_id', 'a.project_id', 'p.name as project_name', 'a.roles', 'a.created_at', 'a.changed_at', 'u.org_id as user_org_id', 'u.display_name'])
    .select(sql<string>`u.user_name || '@' || uo.primary_domain`.as('login_name'))
    .where('a.instance_id', '=', INSTANCE)
    .execute();
}

// ---- the filters, read plainly ----

const matches = (text: string, filter: TextFilter) => matchesText(text, filter.match, filter.value, filter.ignoreCase);

function keeps(row: Row, filter: AuthorizationFilter): boolean {
  switch (filter.kind) {
    case 'ids':
      return filter.ids.includes(row.id);
    case 'org':
      return row.org_id === filter.orgId;
    case 'user':
      return row.user_id === filter.userId;
    case 'userOrg':
      return row.user_org_id === filter.orgId;
    case 'loginName':
      return matches(row.login_name, filter.text);
    case 'displayName':
      return matches(row.display_name ?? '', filter.text);
    case 'project':
      return row.project_id === filter.projectId;
    case 'projectName':
      return matches(row.project_name, filter.text);
    case 'roleKey':
      return row.roles.some((role) => matches(role, filter.text));
    case 'none':
      return false;
  }
}

function expectedPage(rows: Row[], within: readonly string[] | undefined, filters: AuthorizationFilter[], page: Page, sort: AuthorizationSort) {
  const sign = page.asc ? 1 : -1;
  const key = (row: Row) => {
    const value = row[sort];
    return value instanceof Date ? value.toISOString() : value;
  };
  const matching = rows.filter((row) => (within === undefined || within.includes(row.org_id)) && filters.every((filter) => keeps(row, filter)));
  const sorted = matching.sort((a, b) => sign * (byBytes(key(a), key(b)) || byBytes(a.id, b.id)));
  return { total: matching.length, ids: sorted.slice(page.offset, page.offset + page.limit).map((row) => row.id) };
}

// ---- the cases ----

const text = (value: string, match: TextFilter['match'], ignoreCase: boolean): TextFilter => ({ value, match, ignoreCase });

function filterCases(rows: Row[]): Array<[string, AuthorizationFilter[]]> {
  const someUser = rows[40]!.user_id;
  const cases: Array<[string, AuthorizationFilter[]]> = [
    ['no filter', []],
    ['an organization', [{ kind: 'org', orgId: 'org1' }]],
    ['two organizations (nothing matches both)', [{ kind: 'org', orgId: 'org1' }, { kind: 'org', orgId: 'org2' }]],
    ['a user', [{ kind: 'user', userId: someUser }]],
    ['the users of an organization', [{ kind: 'userOrg', orgId: 'org4' }]],
    ['a project', [{ kind: 'project', projectId: 'p2' }]],
    ['a project and an organization', [{ kind: 'project', projectId: 'p2' }, { kind: 'org', orgId: 'org2' }]],
    ['ids', [{ kind: 'ids', ids: [rows[3]!.id, rows[9]!.id, 'nobody'] }]],
    ['an inactive state', [{ kind: 'none' }]],
    ['a project name', [{ kind: 'projectName', text: text('per%', 'startsWith', true) }]],
    ['a role key', [{ kind: 'roleKey', text: text('admin', 'equals', false) }]],
    ['a display name', [{ kind: 'displayName', text: text('lay 12', 'contains', true) }]],
    ['an empty display name', [{ kind: 'displayName', text: text('', 'equals', false) }]],
  ];
  for (const [value, ignoreCase] of [['user40@o4.grants.test', true], ['USER40@O4.grants.test', true], ['User40@o4.grants.test', false], ['user40@o4.grants.test', false]] as const) {
    cases.push([`login name equals ${value}${ignoreCase ? ' (any case)' : ''}`, [{ kind: 'loginName', text: text(value, 'equals', ignoreCase) }]]);
  }
  for (const match of ['startsWith', 'contains', 'endsWith'] as const) {
    for (const value of ['user4', 'mail17@', 'mail17@example.com@o5', 'under_s', 'o3.grants', '']) {
      for (const ignoreCase of [true, false]) cases.push([`login name ${match} ${value}${ignoreCase ? ' (any case)' : ''}`, [{ kind: 'loginName', text: text(value, match, ignoreCase) }]]);
    }
  }
  return cases;
}

const SCOPES: Array<[string, readonly string[] | undefined]> = [
  ['the instance', undefined],
  ['an owner of org1', ['org1']],
  ['an owner of org0 and org2', ['org0', 'org2']],
  ['an owner of nothing', []],
];

describe('the authorization list answers what its filters say', () => {
  let database: FreshDatabase;
  let rows: Row[];
  const users = process.env['TEST_DATABASE_URL'] ? 3000 : 1200;

  beforeAll(async () => {
    database = await freshDatabase();
    await seed(database.db, users);
    rows = await allRows(database.db);
  }, 120_000);
  afterAll(() => database.close());

  const check = async (within: readonly string[] | undefined, filters: AuthorizationFilter[], page: Page = { offset: 0, limit: 100, asc: true }, sort: AuthorizationSort = 'created_at') => {
    const expected = expectedPage(rows, within, filters, page, sort);
    const listed = await listAuthorizations(database.db, { instanceId: INSTANCE, within, filters, page, sort });
    return { actual: { total: listed.total, ids: listed.rows.map((row) => row.id) }, expected };
  };

  it.each(SCOPES.map(([name]) => name))('every filter, seen by %s', async (scopeName) => {
    const within = SCOPES.find(([name]) => name === scopeName)![1];
    const wrong: string[] = [];
    for (const [name, filters] of filterCases(rows)) {
      const { actual, expected } = await check(within, filters);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${name}: ${actual.total} found, ${expected.total} expected`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it('pages in every sort order, both directions, to past the end', async () => {
    const wrong: string[] = [];
    const sorts: AuthorizationSort[] = ['created_at', 'changed_at', 'id', 'user_id', 'project_id', 'org_id', 'user_org_id'];
    for (const sort of sorts) {
      for (const asc of [true, false]) {
        for (const offset of [0, 100, rows.length - 30, rows.length + 5]) {
          const { actual, expected } = await check(undefined, [], { offset, limit: 50, asc }, sort);
          if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${sort} ${asc ? 'asc' : 'desc'} from ${offset}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps the organizations’ counts as authorizations come and go, also when a user is deleted', async () => {
    const count = async (within: readonly string[] | undefined) => (await listAuthorizations(database.db, { instanceId: INSTANCE, within, filters: [], page: { offset: 0, limit: 1, asc: true }, sort: 'created_at' })).total;
    const [inOrg1, everywhere] = [await count(['org1']), await count(undefined)];
    await sql`insert into authorizations (id, instance_id, org_id, user_id, project_id, roles)
      select 'extra-' || id, ${INSTANCE}, 'org1', id, 'p1', '{}' from users where instance_id = ${INSTANCE} and id not in (select user_id from authorizations where project_id = 'p1') limit 3`.execute(database.db);
    expect(await count(['org1'])).toBe(inOrg1 + 3);
    const victim = rows.find((row) => row.org_id === 'org1' && !row.id.startsWith('extra-'))!;
    const hisGrants = rows.filter((row) => row.user_id === victim.user_id);
    await sql`delete from users where id = ${victim.user_id}`.execute(database.db);
    await sql`delete from authorizations where id like 'extra-%'`.execute(database.db);
    expect(await count(['org1'])).toBe(inOrg1 - hisGrants.filter((row) => row.org_id === 'org1').length);
    expect(await count(undefined)).toBe(everywhere - hisGrants.length);
    rows = await allRows(database.db);
    const { actual, expected } = await check(undefined, []);
    expect(actual).toEqual(expected);
  });

  it('the embedded database and PostgreSQL hold the same indexes of authorizations', async () => {
    const names = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'authorizations' order by indexname`.execute(database.db);
    expect(names.rows.map((row) => row.indexname)).toEqual(expect.arrayContaining(['authorizations_list_idx', 'authorizations_org_list_idx', 'authorizations_user_project_uq', 'authorizations_project_idx']));
  });
});

const onPostgres = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

onPostgres('the authorization list reads indexes, not the whole table (PostgreSQL, 57,000 authorizations)', () => {
  let database: FreshDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
    await seed(database.db, 50_000);
  }, 120_000);
  afterAll(() => database.close());

  it.each<[string, readonly string[] | undefined, AuthorizationFilter[]]>([
    ['no filter', undefined, []],
    ['an org-scoped caller', ['org1'], []],
    ['an organization', undefined, [{ kind: 'org', orgId: 'org2' }]],
    ['a user', undefined, [{ kind: 'user', userId: 'u004001' }]],
    ['login name equals', undefined, [{ kind: 'loginName', text: text('user4001@o1.grants.test', 'equals', true) }]],
    ['login name prefix', undefined, [{ kind: 'loginName', text: text('user400', 'startsWith', true) }]],
  ])('%s', async (_name, within, filters) => {
    const plan = await plansOf(database.databaseUrl!, (db) =>
      listAuthorizations(db, { instanceId: INSTANCE, within, filters, page: { offset: 0, limit: 100, asc: true }, sort: 'created_at' }),
    );
    expect(plan).not.toMatch(/Seq Scan on authorizations/);
  });
});
