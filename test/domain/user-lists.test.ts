/**
 * The user lists (store/users.ts `listUsers`, `countUsers`) answer from indexes and counters
 * (docs/performance.md#a-million-users), and answer exactly what the filters' rules say: every page,
 * order and total is compared with a plain reading of the rules in JavaScript over every row, for
 * each text field and method, in both letter cases, with wildcards, '@' in user names, missing
 * values, `not` and `or`, organization filters and an org-scoped caller's view. On PostgreSQL the
 * query plans of the common lists are checked against a table of tens of thousands of users: no
 * sequential scan of `users`.
 */
import { sql } from 'kysely';
import type { DB } from '../../src/store/database.ts';
import { countUsers, listUsers, type TextMatch, type UserFilter, type UserListScope, type UserSortColumn, type UserTextField } from '../../src/store/users.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { byBytes, matchesText, plansOf } from '../support/list-oracle.ts';

const INSTANCE = 'lists';
const ORGS = 12;

interface Row {
  id: string;
  org_id: string;
  kind: string;
  state: string;
  user_name: string;
  email: string | null;
  given_name: string | null;
  family_name: string | null;
  nickname: string | null;
  display_name: string | null;
  phone: string | null;
  created_at: Date;
  primary_domain: string;
  roles: Array<{ role: string; scope_org_id: string }>;
}

/**
 * Seeds in one transaction without the pool's statement timeout (GATEHOUSE_STATEMENT_TIMEOUT_MS): a
 * busy machine may take longer than that for the bulk inserts of tens of thousands of rows.
 */
async function seed(db: DB, count: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local statement_timeout = 0`.execute(trx);
    await seedRows(trx, count);
  });
}

/**
 * Users n = 1..count in the shapes the lists meet: plain and upper-case names, user names that are
 * addresses (with '@'), LIKE's wildcards in names, machines without an address, missing optional
 * names, and pairs created in the same instant (the order then falls back to the id).
 */
async function seedRows(db: DB, count: number): Promise<void> {
  await sql`insert into instances (id, name) values (${INSTANCE}, 'lists')`.execute(db);
  await sql`insert into orgs (id, instance_id, name, primary_domain)
    select 'org' || k, ${INSTANCE}, 'Org ' || k, 'o' || k || '.lists.test' from generate_series(0, ${ORGS - 1}) k`.execute(db);
  await sql`insert into users (id, instance_id, org_id, kind, user_name, email, given_name, family_name, nickname, display_name, phone, state, created_at, changed_at)
    select 'u' || lpad(n::text, 6, '0'), ${INSTANCE},
      'org' || (case when n % 3 = 0 then 0 else n % ${ORGS} end),
      case when n % 10 = 0 then 'machine' else 'human' end,
      case when n % 17 = 0 then 'mail' || n || '@Example.com'
           when n % 19 = 0 then 'under_score' || n
           when n % 23 = 0 then 'per%cent' || n
           when n % 5 = 0 then 'User' || n
           else 'user' || n end,
      case when n % 10 = 0 then null else 'u' || n || '@Mail' || (n % 7) || '.test' end,
      case when n % 10 = 0 then null else (array['Anna', 'ben', 'Carla', 'DAVID', 'Eva'])[n % 5 + 1] || (n % 37) end,
      case when n % 10 = 0 then null else (array['Muller', 'smith', 'Meier_x', 'We%ber'])[n % 4 + 1] || (n % 41) end,
      case when n % 4 = 0 then 'Nick' || n else null end,
      'Display ' || n,
      case when n % 6 = 0 then '+4179' || lpad(n::text, 7, '0') else null end,
      case when n % 29 = 0 then 'inactive' when n % 31 = 0 then 'locked' else 'active' end,
      timestamptz '2026-01-01' + ((n / 2) || ' seconds')::interval, now()
    from generate_series(1, ${count}) n`.execute(db);
  // roles: owners of their own organization, instance owners, owners of another organization
  await sql`insert into user_roles (user_id, role, scope_org_id)
    select id, 'ORG_OWNER', org_id from users where id like '%7' and instance_id = ${INSTANCE}
    union all select id, 'IAM_OWNER', '' from users where id like '%11' and instance_id = ${INSTANCE}
    union all select id, 'ORG_OWNER', 'org5' from users where id like '%13' and org_id <> 'org5' and instance_id = ${INSTANCE}`.execute(db);
  await sql`analyze`.execute(db);
}

async function allRows(db: DB): Promise<Row[]> {
  const rows = await db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select(['users.id', 'users.org_id', 'users.kind', 'users.state', 'users.user_name', 'users.email', 'users.given_name', 'users.family_name', 'users.nickname', 'users.display_name', 'users.phone', 'users.created_at', 'orgs.primary_domain'])
    .where('users.instance_id', '=', INSTANCE)
    .execute();
  const roles = await db.selectFrom('user_roles').selectAll().execute();
  return rows.map((row) => ({ ...row, roles: roles.filter((r) => r.user_id === row.id) }));
}

// ---- the rules, read plainly ----

function textOf(row: Row, field: UserTextField): string {
  if (field === 'login_name') return `${row.user_name}@${row.primary_domain}`;
  return row[field] ?? '';
}

function keeps(row: Row, filter: UserFilter): boolean {
  switch (filter.kind) {
    case 'text':
      return matchesText(textOf(row, filter.field), filter.match.how, filter.match.value, filter.match.ignoreCase);
    case 'state':
      return row.state === filter.state;
    case 'type':
      return row.kind === filter.type;
    case 'ids':
      return filter.ids.includes(row.id);
    case 'emails':
      return filter.emails.some((email) => email.toLowerCase() === (row.email ?? '').toLowerCase());
    case 'org':
      return row.org_id === filter.orgId;
    case 'and':
      return filter.filters.every((inner) => keeps(row, inner));
    case 'or':
      return filter.filters.some((inner) => keeps(row, inner));
    case 'not':
      return !keeps(row, filter.filter);
    case 'lockedOut':
      return false;
  }
}

function visible(row: Row, scope: UserListScope): boolean {
  if (scope.orgIds !== undefined && !scope.orgIds.includes(row.org_id)) return false;
  const within = scope.rolesWithin;
  if (within !== undefined && row.roles.some((r) => r.scope_org_id === '' || r.role.startsWith('IAM_') || !within.includes(r.scope_org_id))) return false;
  return keeps(row, scope.filter);
}

function expectedPage(rows: Row[], scope: UserListScope, page: { sort: UserSortColumn; asc: boolean; offset: number; limit: number }) {
  const sign = page.asc ? 1 : -1;
  const key = (row: Row) => (page.sort === 'created_at' ? row.created_at.toISOString() : ((row as unknown as Record<string, string | null>)[page.sort] ?? null));
  // PostgreSQL's order: a missing value after every value (so first when descending)
  const compare = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : byBytes(a, b));
  const matching = rows.filter((row) => visible(row, scope));
  const sorted = matching.sort((a, b) => sign * (compare(key(a), key(b)) || byBytes(a.id, b.id)));
  return { total: matching.length, ids: sorted.slice(page.offset, page.offset + page.limit).map((row) => row.id) };
}

// ---- the cases ----

const FIELDS: UserTextField[] = ['user_name', 'given_name', 'family_name', 'nickname', 'display_name', 'email', 'phone', 'login_name'];
const HOWS: Array<TextMatch['how']> = ['equals', 'startsWith', 'contains', 'endsWith'];
const text = (field: UserTextField, how: TextMatch['how'], value: string, ignoreCase: boolean): UserFilter => ({ kind: 'text', field, match: { how, value, ignoreCase } });
const all = (...filters: UserFilter[]): UserFilter => ({ kind: 'and', filters });

/** Values to look for in a field: whole values of a few rows, their pieces in other letter cases, wildcards, '@', '' and nothing. */
function valuesFor(rows: Row[], field: UserTextField): string[] {
  const samples = [rows[16], rows[18], rows[22], rows[4], rows[33]].map((row) => textOf(row!, field)).filter((value) => value !== '');
  const values = new Set<string>(['', 'zz-nothing', '%', '_', '@', '\\']);
  for (const value of samples) {
    values.add(value);
    values.add(value.toUpperCase());
    values.add(value.slice(0, 4));
    values.add(value.slice(2, 7).toLowerCase());
    values.add(value.slice(-5));
    const at = value.indexOf('@');
    if (at > 0) values.add(value.slice(0, at + 1));
  }
  return [...values];
}

function textCases(rows: Row[]): Array<[string, UserFilter]> {
  const cases: Array<[string, UserFilter]> = [];
  for (const field of FIELDS) {
    for (const value of valuesFor(rows, field)) {
      for (const how of HOWS) {
        for (const ignoreCase of [false, true]) cases.push([`${field} ${how}${ignoreCase ? ' (any case)' : ''} "${value}"`, all(text(field, how, value, ignoreCase))]);
      }
    }
  }
  return cases;
}

function combinedCases(rows: Row[]): Array<[string, UserFilter]> {
  const someone = rows[50]!;
  return [
    ['no filter', all()],
    ['organization', all({ kind: 'org', orgId: 'org4' })],
    ['two organizations (none)', all({ kind: 'org', orgId: 'org4' }, { kind: 'org', orgId: 'org5' })],
    ['organization twice', all({ kind: 'org', orgId: 'org4' }, { kind: 'org', orgId: 'org4' })],
    ['not a user name prefix', all({ kind: 'not', filter: text('user_name', 'startsWith', 'user1', true) })],
    ['not an email (missing ones included)', all({ kind: 'not', filter: text('email', 'contains', '@mail3', true) })],
    ['not a nickname equal to ""', all({ kind: 'not', filter: text('nickname', 'equals', '', false) })],
    ['not not a family name', all({ kind: 'not', filter: { kind: 'not', filter: text('family_name', 'startsWith', 'smith', false) } })],
    ['or of a user name and an email', all({ kind: 'or', filters: [text('user_name', 'equals', someone.user_name, false), text('email', 'startsWith', 'u77', true)] })],
    ['or of login names', all({ kind: 'or', filters: [text('login_name', 'equals', `${someone.user_name}@${someone.primary_domain}`, true), text('login_name', 'startsWith', 'mail1', true)] })],
    ['organization and a given name', all({ kind: 'org', orgId: 'org0' }, text('given_name', 'contains', 'na1', true))],
    ['emails in a list', all({ kind: 'emails', emails: [someone.email ?? 'x', 'U11@MAIL4.TEST', 'nobody@x.test'] })],
    ['emails with ""', all({ kind: 'emails', emails: [''] })],
    ['not emails in a list', all({ kind: 'not', filter: { kind: 'emails', emails: ['u11@mail4.test'] } })],
    ['state and type', all({ kind: 'state', state: 'inactive' }, { kind: 'type', type: 'human' })],
    ['ids', all({ kind: 'ids', ids: [rows[3]!.id, rows[9]!.id, 'nobody'] })],
    ['or with a missing value', all({ kind: 'or', filters: [text('phone', 'startsWith', '+4179', false), text('nickname', 'contains', 'ick1', false)] })],
  ];
}

const SCOPES: Array<[string, Omit<UserListScope, 'filter' | 'instanceId'>]> = [
  ['the instance', { orgIds: undefined, rolesWithin: undefined }],
  ['an owner of org0', { orgIds: ['org0'], rolesWithin: ['org0'] }],
  ['an owner of org5 and org6', { orgIds: ['org5', 'org6'], rolesWithin: ['org5', 'org6'] }],
  ['an owner of nothing', { orgIds: [], rolesWithin: [] }],
];

describe('user lists answer what the rules say', () => {
  let database: FreshDatabase;
  let rows: Row[];
  const count = process.env['TEST_DATABASE_URL'] ? 6000 : 2000;

  beforeAll(async () => {
    database = await freshDatabase();
    await seed(database.db, count);
    rows = await allRows(database.db);
  }, 120_000);
  afterAll(() => database.close());

  const check = async (filter: UserFilter, scopeName: string, page = { sort: 'created_at' as UserSortColumn, asc: false, offset: 0, limit: 100 }) => {
    const scope: UserListScope = { instanceId: INSTANCE, ...SCOPES.find(([name]) => name === scopeName)![1], filter };
    const expected = expectedPage(rows, scope, page);
    const [total, listed] = await Promise.all([countUsers(database.db, scope), listUsers(database.db, scope, page)]);
    return { actual: { total, ids: listed.map((row) => row.id) }, expected };
  };

  it('every text field, method and letter case', async () => {
    const wrong: string[] = [];
    for (const [name, filter] of textCases(rows)) {
      const { actual, expected } = await check(filter, 'the instance');
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${name}: ${actual.total} found, ${expected.total} expected`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it.each(SCOPES.map(([name]) => name))('combined filters, seen by %s', async (scopeName) => {
    const wrong: string[] = [];
    for (const [name, filter] of combinedCases(rows)) {
      const { actual, expected } = await check(filter, scopeName);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${name}: ${actual.total} found, ${expected.total} expected`);
    }
    expect(wrong).toEqual([]);
  });

  it('pages in every sort order, both directions, to past the end', async () => {
    const wrong: string[] = [];
    for (const sort of ['created_at', 'user_name', 'email', 'family_name', 'state', 'kind'] as UserSortColumn[]) {
      for (const asc of [true, false]) {
        for (const offset of [0, 100, count - 30, count + 5]) {
          const page = { sort, asc, offset, limit: 50 };
          const { actual, expected } = await check(all(), 'an owner of org0', page);
          if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${sort} ${asc ? 'asc' : 'desc'} from ${offset}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps the organizations’ counts as users come and go', async () => {
    const scope: UserListScope = { instanceId: INSTANCE, orgIds: ['org7'], rolesWithin: undefined, filter: all() };
    const before = await countUsers(database.db, scope);
    await sql`insert into users (id, instance_id, org_id, kind, user_name, created_at, changed_at)
      values ('extra1', ${INSTANCE}, 'org7', 'human', 'extra1', now(), now()), ('extra2', ${INSTANCE}, 'org7', 'machine', 'extra2', now(), now())`.execute(database.db);
    expect(await countUsers(database.db, scope)).toBe(before + 2);
    await sql`delete from users where id in ('extra1', 'extra2', ${rows.find((row) => row.org_id === 'org7')!.id})`.execute(database.db);
    expect(await countUsers(database.db, scope)).toBe(before - 1);
    rows = await allRows(database.db);
    const { actual, expected } = await check(all(), 'the instance');
    expect(actual).toEqual(expected);
  });

  it('the embedded database and PostgreSQL hold the same indexes of users', async () => {
    const names = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'users' order by indexname`.execute(database.db);
    expect(names.rows.map((row) => row.indexname)).toEqual(
      expect.arrayContaining([
        'users_list_idx',
        'users_org_list_idx',
        'users_name_pattern_idx',
        'users_email_pattern_idx',
        'users_user_name_trgm_idx',
        'users_email_trgm_idx',
        'users_given_name_trgm_idx',
        'users_family_name_trgm_idx',
        'users_display_name_trgm_idx',
      ]),
    );
  });
});

const onPostgres = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

onPostgres('user lists read indexes, not the whole table (PostgreSQL, 60,000 users)', () => {
  let database: FreshDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
    await seed(database.db, 60_000);
  }, 120_000);
  afterAll(() => database.close());

  const scope = (filter: UserFilter, orgs?: string[]): UserListScope => ({ instanceId: INSTANCE, orgIds: orgs, rolesWithin: orgs, filter });

  it.each<[string, UserListScope]>([
    ['no filter', scope(all())],
    ['one organization, org-scoped caller', scope(all(), ['org4'])],
    ['user name equals', scope(all(text('user_name', 'equals', 'user4001', true)))],
    ['user name prefix', scope(all(text('user_name', 'startsWith', 'user400', true)))],
    ['user name prefix, exact case', scope(all(text('user_name', 'startsWith', 'User400', false)))],
    ['user name contains', scope(all(text('user_name', 'contains', 'er4001', true)))],
    ['email equals', scope(all(text('email', 'equals', 'u4001@mail4.test', true)))],
    ['email prefix', scope(all(text('email', 'startsWith', 'u400', true)))],
    ['emails in a list', scope(all({ kind: 'emails', emails: ['u4001@mail4.test', 'u4003@mail6.test'] }))],
    ['login name equals', scope(all(text('login_name', 'equals', 'user4001@o6.lists.test', true)))],
    ['login name prefix', scope(all(text('login_name', 'startsWith', 'user400', true)))],
    ['family name contains', scope(all(text('family_name', 'contains', 'smith3', true)))],
    ['display name contains', scope(all(text('display_name', 'contains', 'lay 4001', true)))],
  ])('%s', async (_name, listScope) => {
    const plan = await plansOf(database.databaseUrl!, (db) =>
      Promise.all([countUsers(db, listScope), listUsers(db, listScope, { sort: 'created_at', asc: false, offset: 0, limit: 100 })]),
    );
    expect(plan).not.toMatch(/Seq Scan on users/);
  });
});
