/**
 * Users and their credentials: the `users` table (humans and machines, password and secret hashes,
 * the lockout counters), their roles (`user_roles`) and machine users' public keys (`machine_keys`).
 */
import { sql, type ExpressionBuilder, type Insertable, type RawBuilder, type SqlBool, type Updateable } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { preparedSelect, type DB } from './database.ts';
import type { Database, UserKind, UserRow, UserState, UsersTable } from './schema.ts';

/** The user with this id, whatever its instance. */
export async function findUserById(db: DB, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user of the organization with that name, case-insensitively. */
export async function findOrgUserByName(db: DB, orgId: string, userName: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('org_id', '=', orgId)
    .where(sql<string>`lower(user_name)`, '=', userName.toLowerCase())
    .executeTakeFirst();
}

/** Another machine user of the instance with that name (case-insensitively) than `exceptId`. */
export async function findMachineNamesake(db: DB, instanceId: string, userName: string, exceptId: string): Promise<{ id: string; org_id: string } | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'org_id'])
    .where('instance_id', '=', instanceId)
    .where('kind', '=', 'machine')
    .where(sql<string>`lower(user_name)`, '=', userName.toLowerCase())
    .where('id', '!=', exceptId)
    .executeTakeFirst();
}

/** Every machine user (of any instance) with that name, case-insensitively. */
export async function findMachineUsersByName(db: DB, userName: string): Promise<Array<{ id: string; org_id: string; instance_id: string }>> {
  return db
    .selectFrom('users')
    .select(['id', 'org_id', 'instance_id'])
    .where('kind', '=', 'machine')
    .where(sql<string>`lower(user_name)`, '=', userName.toLowerCase())
    .execute();
}

/**
 * Whether any user (human or machine) of the instance has that name, case-insensitively.
 * docs/security.md 10.12: self-registration refuses it, so that a newcomer cannot make another
 * organization's user's short login name ambiguous.
 */
export async function userNameTaken(db: DB, instanceId: string, userName: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where(sql`lower(user_name)`, '=', sql`lower(${userName})`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A human user a login name may name; `full` when it matched as `userName@primaryDomain`. */
export interface LoginNameMatch {
  id: string;
  full: boolean;
}

/**
 * The human users of the instance named by `loginName` as a whole, or by `prefix`@`domain` (its
 * parts around the last `@`), case-insensitively: full matches first, at most two.
 */
export async function findHumansByLoginName(
  db: DB,
  instanceId: string,
  name: { loginName: string; prefix: string; domain: string },
): Promise<LoginNameMatch[]> {
  const { loginName, prefix, domain } = name;
  return db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select(['users.id', sql<boolean>`lower(users.user_name) = lower(${prefix}) and lower(orgs.primary_domain) = lower(${domain})`.as('full')])
    .where('users.instance_id', '=', instanceId)
    .where('users.kind', '=', 'human')
    .where((eb) =>
      eb.or([
        eb(sql`lower(users.user_name)`, '=', sql`lower(${loginName})`),
        eb.and([eb(sql`lower(users.user_name)`, '=', sql`lower(${prefix})`), eb(sql`lower(orgs.primary_domain)`, '=', sql`lower(${domain})`)]),
      ]),
    )
    .orderBy('full', 'desc')
    .limit(2)
    .execute();
}

/** What the contact email calls need of a user, locked for the transaction. */
export type ContactUserRow = Pick<
  UserRow,
  'id' | 'instance_id' | 'org_id' | 'kind' | 'email' | 'email_verified' | 'preferred_language' | 'display_name' | 'given_name'
>;

export async function findContactUserForUpdate(db: DB, instanceId: string, userId: string): Promise<ContactUserRow | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'instance_id', 'org_id', 'kind', 'email', 'email_verified', 'preferred_language', 'display_name', 'given_name'])
    .where('id', '=', userId)
    .where('instance_id', '=', instanceId)
    .forUpdate()
    .executeTakeFirst();
}

export async function insertUser(db: DB, values: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(values).execute();
}

export async function updateUser(db: DB, id: string, changes: Updateable<UsersTable>): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

/** PostgreSQL's unique_violation: a concurrent insert took the name first. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/** Takes the user's row lock for the rest of the transaction; throws when there is no such user. */
export async function takeUserRowLock(db: DB, userId: string): Promise<void> {
  await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow();
}

/** Takes the user's row lock and reads its lockout (`locked_until`) under it; undefined for no user. */
export async function findLockForUpdate(db: DB, userId: string): Promise<{ locked_until: Date | null } | undefined> {
  return db.selectFrom('users').select('locked_until').where('id', '=', userId).forUpdate().executeTakeFirst();
}

/** The user's lock (`locked_until`), as committed now. */
export async function findUserLock(db: DB, userId: string): Promise<Date | null> {
  const row = await db.selectFrom('users').select('locked_until').where('id', '=', userId).executeTakeFirst();
  return row?.locked_until ?? null;
}

/**
 * One more failure on the user's counter: the count restarts when it reaches `threshold`, which
 * locks the user until `lockUntil`.
 */
function failureCount(threshold: number, lockUntil: Date) {
  const reached = sql<boolean>`failed_attempts + 1 >= ${threshold}`;
  return {
    failed_attempts: sql<number>`case when ${reached} then 0 else failed_attempts + 1 end`,
    locked_until: sql<Date | null>`case when ${reached} then ${lockUntil}::timestamptz else locked_until end`,
  };
}

/**
 * Counts a failed password or OTP code of the login UI: on the request always, and on the user when
 * there is one, in one statement either way (so an unknown user costs the same write). The user's
 * count restarts when it reaches `threshold`, which locks the user until `lockUntil`. Returns the
 * user's lock, if any.
 */
export async function countFailedLogin(
  db: DB,
  input: { requestId: string; userId: string | undefined; threshold: number; lockUntil: Date },
): Promise<Date | null> {
  const row = await db
    .with('failed', (qb) =>
      qb
        .updateTable('users')
        .set(failureCount(input.threshold, input.lockUntil))
        .where('id', '=', input.userId ?? '')
        .returning('locked_until'),
    )
    .updateTable('auth_requests')
    .set((eb) => ({ failed_passwords: eb('failed_passwords', '+', 1) }))
    .where('id', '=', input.requestId)
    .returning((eb) => eb.selectFrom('failed').select('failed.locked_until').as('locked_until'))
    .executeTakeFirst();
  return row?.locked_until ?? null;
}

/**
 * Counts a failure on the user alone (an API call has no login request), by the same rule as
 * countFailedLogin. Returns the user's lock after the count, if any.
 */
export async function countFailedUserAttempt(db: DB, input: { userId: string; threshold: number; lockUntil: Date }): Promise<Date | null> {
  const row = await db
    .updateTable('users')
    .set(failureCount(input.threshold, input.lockUntil))
    .where('id', '=', input.userId)
    .returning('locked_until')
    .executeTakeFirst();
  return row?.locked_until ?? null;
}

/** Ends the user's run of failures and any (expired) lock; writes only when there is one. */
export async function clearFailedAttempts(db: DB, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ failed_attempts: 0, locked_until: null })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('failed_attempts', '<>', 0), eb('locked_until', 'is not', null)]))
    .execute();
}

export async function setUserEmail(db: DB, userId: string, email: string, verified: boolean, at: Date): Promise<void> {
  await db.updateTable('users').set({ email, email_verified: verified, changed_at: at }).where('id', '=', userId).execute();
}

export async function markEmailVerified(db: DB, userId: string, at: Date): Promise<void> {
  await db.updateTable('users').set({ email_verified: true, changed_at: at }).where('id', '=', userId).execute();
}

/** A role of a user: instance-wide when `scope_org_id` is '', else in that organization. */
export interface UserRoleRow {
  role: string;
  scope_org_id: string;
}

export async function listUserRoles(db: DB, userId: string): Promise<UserRoleRow[]> {
  return db.selectFrom('user_roles').select(['role', 'scope_org_id']).where('user_id', '=', userId).execute();
}

/** Makes the user's roles exactly `roles`. */
export async function replaceUserRoles(db: DB, userId: string, roles: readonly UserRoleRow[]): Promise<void> {
  await db.deleteFrom('user_roles').where('user_id', '=', userId).execute();
  if (roles.length > 0) await db.insertInto('user_roles').values(roles.map((row) => ({ user_id: userId, ...row }))).execute();
}

/** A machine key by its id, with the user it belongs to as `owner`. */
export async function findMachineKey(
  db: DB,
  keyId: string,
): Promise<{ id: string; owner: string; public_key: string; expires_at: Date | null } | undefined> {
  return db.selectFrom('machine_keys').select(['id', 'user_id as owner', 'public_key', 'expires_at']).where('id', '=', keyId).executeTakeFirst();
}

export async function insertMachineKey(db: DB, key: { id: string; user_id: string; public_key: string; expires_at: Date | null }): Promise<void> {
  await db.insertInto('machine_keys').values(key).execute();
}

export async function updateMachineKey(db: DB, keyId: string, key: { public_key: string; expires_at: Date | null }): Promise<void> {
  await db.updateTable('machine_keys').set(key).where('id', '=', keyId).execute();
}

/** The id of the instance's machine user with this user name, compared case-insensitively. */
export async function findMachineIdByName(db: DB, instanceId: string, userName: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where('kind', '=', 'machine')
    .where((eb) => eb(eb.fn('lower', ['user_name']), '=', userName.toLowerCase()))
    .executeTakeFirst();
  return row?.id;
}

/** The user by id with its organization's primary domain and its roles: what both by-id reads start from. */
function userWithRoles(db: DB, userId: string) {
  return db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .selectAll('users')
    .select('orgs.primary_domain')
    .select((eb) => jsonArrayFrom(eb.selectFrom('user_roles').select(['user_roles.role', 'user_roles.scope_org_id']).whereRef('user_roles.user_id', '=', 'users.id')).as('roles'))
    .where('users.id', '=', userId);
}

const userWithRolesStatement = preparedSelect('find_user_with_roles', userWithRoles);

/** The user with its organization's primary domain and its roles, in one statement. */
export async function findUserWithRoles(db: DB, userId: string) {
  const [row] = await userWithRolesStatement(db, userId);
  return row;
}

/**
 * A user with everything a token's checks and claims read about it, in one statement: the row, its
 * organization's primary domain, its roles, a machine's public keys, and its authorizations with
 * each organization's primary domain. (JSON carries the keys' expiry as text.)
 */
export async function findUserWithGrants(db: DB, userId: string) {
  const [row] = await userWithGrantsStatement(db, userId);
  return row;
}

const userWithGrantsStatement = preparedSelect('find_user_with_grants', (db: DB, userId: string) =>
  userWithRoles(db, userId).select((eb) => [
    jsonArrayFrom(
      eb
        .selectFrom('machine_keys')
        .select(['machine_keys.id', 'machine_keys.public_key', sql<string | null>`machine_keys.expires_at`.as('expires_at')])
        .whereRef('machine_keys.user_id', '=', 'users.id'),
    ).as('keys'),
    jsonArrayFrom(
      eb
        .selectFrom('authorizations')
        .innerJoin('orgs as granting', 'granting.id', 'authorizations.org_id')
        .select(['authorizations.project_id', 'authorizations.org_id', 'granting.primary_domain', 'authorizations.roles'])
        .whereRef('authorizations.user_id', '=', 'users.id'),
    ).as('authorizations'),
  ]),
);

/** The user's row, locked for the rest of the transaction; undefined when there is none. */
export async function findUserForUpdate(db: DB, userId: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).forUpdate().executeTakeFirst();
}

/** Removes the user; its roles, keys, sessions, factors, codes and authorizations go with it (foreign keys cascade). */
export async function deleteUser(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', userId).execute();
}

/** Whether another user of the instance than `exceptId` has that name, case-insensitively (docs/security.md 10.12). */
export async function userNameTakenByOther(db: DB, instanceId: string, userName: string, exceptId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where(sql`lower(user_name)`, '=', sql`lower(${userName})`)
    .where('id', '!=', exceptId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

// ---- ListUsers (zitadel.user.v2): a filter tree over users joined with their organization ----

/** A text comparison; `value` is literal (no wildcards). */
export interface TextMatch {
  how: 'equals' | 'startsWith' | 'contains' | 'endsWith';
  ignoreCase: boolean;
  value: string;
}

/** Text a filter may compare; `login_name` is `user_name@primary_domain`. */
export type UserTextField = 'user_name' | 'given_name' | 'family_name' | 'nickname' | 'display_name' | 'email' | 'phone' | 'login_name';

export type UserFilter =
  | { kind: 'text'; field: UserTextField; match: TextMatch }
  /** The `state` column as stored. */
  | { kind: 'state'; state: UserState }
  /** A brute-force lockout (`locked_until`) still in force at `at`. */
  | { kind: 'lockedOut'; at: Date }
  | { kind: 'type'; type: UserKind }
  | { kind: 'ids'; ids: readonly string[] }
  | { kind: 'emails'; emails: readonly string[] }
  | { kind: 'org'; orgId: string }
  | { kind: 'and' | 'or'; filters: readonly UserFilter[] }
  | { kind: 'not'; filter: UserFilter };

export type UserSortColumn = 'user_name' | 'given_name' | 'family_name' | 'nickname' | 'display_name' | 'email' | 'state' | 'kind' | 'created_at';

export interface UserListScope {
  instanceId: string;
  /** Only users of these organizations; every organization of the instance when undefined. */
  orgIds: readonly string[] | undefined;
  /**
   * For callers with org-scoped roles: leave out users holding a role beyond these organizations (an
   * instance-wide role, as domain/permissions.ts `isInstanceRole` calls one, or a role in another
   * organization), whom such callers may not manage. Undefined: every user.
   */
  rolesWithin: readonly string[] | undefined;
  filter: UserFilter;
}

export type UserWithDomain = UserRow & { primary_domain: string };

/** The columns a listed user is shown with (GetUserByID's and ListUsers' User message). */
export const LISTED_USER_COLUMNS = [
  'id', 'org_id', 'kind', 'user_name', 'state', 'locked_until', 'email', 'email_verified', 'phone', 'phone_verified',
  'given_name', 'family_name', 'nickname', 'display_name', 'preferred_language', 'gender', 'secret_hash', 'access_token_type',
  'description', 'created_at', 'changed_at',
] as const satisfies readonly (keyof UserRow)[];

/** A user as lists show it: no password hash, address or counters to read and parse per row. */
export type ListedUser = Pick<UserRow, (typeof LISTED_USER_COLUMNS)[number]> & { primary_domain: string };

const TEXT_COLUMNS: Record<Exclude<UserTextField, 'login_name'>, string> = {
  user_name: 'users.user_name',
  given_name: 'users.given_name',
  family_name: 'users.family_name',
  nickname: 'users.nickname',
  display_name: 'users.display_name',
  email: 'users.email',
  phone: 'users.phone',
};

/**
 * A role of `users` row beyond `orgIds`: instance-wide (no organization, or an IAM_ role) or in
 * another organization (domain/users/permissions.ts `rolesWithin`, as SQL for the lists).
 */
export function roleBeyond(eb: ExpressionBuilder<Database, 'users'>, orgIds: readonly string[]) {
  return eb
    .selectFrom('user_roles')
    .select('user_roles.user_id')
    .whereRef('user_roles.user_id', '=', 'users.id')
    .where((r) => beyond(r, orgIds));
}

function beyond(r: ExpressionBuilder<Database, 'user_roles'>, orgIds: readonly string[]) {
  return r.or([
    r('user_roles.scope_org_id', '=', ''),
    r('user_roles.role', 'like', 'IAM\\_%'),
    ...(orgIds.length > 0 ? [r('user_roles.scope_org_id', 'not in', [...orgIds])] : [sql<SqlBool>`true`]),
  ]);
}

/** `value` with LIKE's wildcards and escape character escaped (PostgreSQL's default escape is `\`). */
function likeLiteral(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The LIKE pattern of a text match (`equals` has none). */
function likePattern(how: TextMatch['how'], value: string): string {
  const literal = likeLiteral(value);
  return how === 'startsWith' ? `${literal}%` : how === 'endsWith' ? `%${literal}` : `%${literal}%`;
}

/**
 * `column` (an expression) compared as `match` says, where a missing value counts as ''. Where it may
 * (`indexed`: a value that '' cannot match, in a place where a null and false answer alike), the
 * comparison is written on `lower(column)` as the indexes of migration 0018 hold it, a case-sensitive
 * match adding the exact comparison: the same rows, found by an index.
 */
function compareText(column: RawBuilder<unknown>, match: TextMatch, indexed: boolean): RawBuilder<boolean> {
  const folded = match.value.toLowerCase();
  if (indexed && match.value !== '') {
    const lowered = match.how === 'equals' ? sql<boolean>`lower(${column}) = ${folded}` : sql<boolean>`lower(${column}) like ${likePattern(match.how, folded)}`;
    if (match.ignoreCase) return lowered;
    const exact = match.how === 'equals' ? sql<boolean>`${column} = ${match.value}` : sql<boolean>`${column} like ${likePattern(match.how, match.value)}`;
    return sql<boolean>`(${lowered} and ${exact})`;
  }
  // Missing values compare as '', so that `not` of a text filter includes users without the value.
  const subject = match.ignoreCase ? sql`lower(coalesce(${column}, ''))` : sql`coalesce(${column}, '')`;
  const value = match.ignoreCase ? folded : match.value;
  if (match.how === 'equals') return sql<boolean>`${subject} = ${value}`;
  return sql<boolean>`${subject} like ${likePattern(match.how, value)}`;
}

/**
 * A login name (`user_name@primary_domain`) compared by its two parts, so that the user name's
 * indexes find the rows: a user name may hold '@' itself, so each '@' of the value is tried as the
 * separator. `equals` and `startsWith` become conditions on the user name (with the domain checked
 * on the organization's row); the other matches compare the joined name.
 */
function compareLoginName(match: TextMatch, indexed: boolean): RawBuilder<boolean> {
  const joined = sql`(users.user_name || '@' || orgs.primary_domain)`;
  if (!indexed || match.value === '' || (match.how !== 'equals' && match.how !== 'startsWith')) return compareText(joined, match, false);
  const name = sql`users.user_name`;
  const domain = sql`orgs.primary_domain`;
  const part = (column: RawBuilder<unknown>, value: string, how: TextMatch['how']) =>
    value === '' && how !== 'equals' ? sql<boolean>`true` : compareText(column, { how, value, ignoreCase: match.ignoreCase }, true);
  const alternatives: RawBuilder<boolean>[] = [];
  if (match.how === 'startsWith') alternatives.push(part(name, match.value, 'startsWith'));
  for (let at = match.value.indexOf('@'); at !== -1; at = match.value.indexOf('@', at + 1)) {
    const [user, rest] = [match.value.slice(0, at), match.value.slice(at + 1)];
    if (user === '') continue;
    alternatives.push(sql<boolean>`(${part(name, user, 'equals')} and ${part(domain, rest, match.how)})`);
  }
  return alternatives.length === 0 ? sql<boolean>`false` : sql<boolean>`(${sql.join(alternatives, sql` or `)})`;
}

/**
 * The ids of the instance's users whose login name matches, as a subquery found through the user
 * name's indexes for `equals` and `startsWith` (the authorization list's login name filter).
 */
export function usersWithLoginName(db: DB, instanceId: string, match: TextMatch) {
  return db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select('users.id')
    .where('users.instance_id', '=', instanceId)
    .where(compareLoginName(match, true));
}

function textSql(field: UserTextField, match: TextMatch, indexed: boolean): RawBuilder<boolean> {
  if (field === 'login_name') return compareLoginName(match, indexed);
  return compareText(sql.ref(TEXT_COLUMNS[field]), match, indexed);
}

/**
 * The filter as SQL. `positive`: no `not` above, so that a comparison answering null where the
 * filter's rule says false (a missing value) selects the same rows.
 */
function filterSql(filter: UserFilter, positive = true): RawBuilder<boolean> {
  switch (filter.kind) {
    case 'text':
      return textSql(filter.field, filter.match, positive);
    case 'state':
      return sql<boolean>`users.state = ${filter.state}`;
    case 'lockedOut':
      return sql<boolean>`coalesce(users.locked_until > ${filter.at}::timestamptz, false)`;
    case 'type':
      return sql<boolean>`users.kind = ${filter.type}`;
    case 'ids':
      return filter.ids.length === 0 ? sql<boolean>`false` : sql<boolean>`users.id in (${sql.join(filter.ids)})`;
    case 'emails': {
      if (filter.emails.length === 0) return sql<boolean>`false`;
      const folded = filter.emails.map((e) => e.toLowerCase());
      // as compareText: the index's expression where '' is not asked for and null answers as false
      if (positive && !folded.includes('')) return sql<boolean>`lower(users.email) in (${sql.join(folded)})`;
      return sql<boolean>`lower(coalesce(users.email, '')) in (${sql.join(folded)})`;
    }
    case 'org':
      return sql<boolean>`users.org_id = ${filter.orgId}`;
    case 'and':
    case 'or':
      if (filter.filters.length === 0) return filter.kind === 'and' ? sql<boolean>`true` : sql<boolean>`false`;
      return sql<boolean>`(${sql.join(
        filter.filters.map((inner) => filterSql(inner, positive)),
        filter.kind === 'and' ? sql` and ` : sql` or `,
      )})`;
    case 'not':
      return sql<boolean>`not (${filterSql(filter.filter, false)})`;
  }
}

/** `orgIds` as a condition on `users.org_id` (none: no organization). */
function inOrgs(orgIds: readonly string[]): RawBuilder<boolean> {
  if (orgIds.length === 1) return sql<boolean>`users.org_id = ${orgIds[0]}`;
  return orgIds.length === 0 ? sql<boolean>`false` : sql<boolean>`users.org_id in (${sql.join(orgIds)})`;
}

function scopedUsers(db: DB, scope: UserListScope) {
  return db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .where('users.instance_id', '=', scope.instanceId)
    .$if(scope.orgIds !== undefined, (qb) => qb.where(inOrgs(scope.orgIds!)))
    .$if(scope.rolesWithin !== undefined, (qb) => qb.where((eb) => eb.not(eb.exists(roleBeyond(eb, scope.rolesWithin!)))))
    .where(filterSql(scope.filter));
}

/** Whether a filter compares login names, which needs the organization's row. */
function comparesLoginNames(filter: UserFilter): boolean {
  switch (filter.kind) {
    case 'text':
      return filter.field === 'login_name';
    case 'and':
    case 'or':
      return filter.filters.some(comparesLoginNames);
    case 'not':
      return comparesLoginNames(filter.filter);
    default:
      return false;
  }
}

/**
 * The organizations a filter restricts the list to when it says nothing else (none, or only
 * organization filters joined by `and`): 'any' for no restriction. Undefined for any other filter.
 */
function organizationsOnly(filter: UserFilter): readonly string[] | 'any' | undefined {
  if (filter.kind === 'org') return [filter.orgId];
  if (filter.kind !== 'and') return undefined;
  let orgs: readonly string[] | 'any' = 'any';
  for (const inner of filter.filters) {
    const named = organizationsOnly(inner);
    if (named === undefined) return undefined;
    if (named !== 'any') orgs = orgs === 'any' ? named : orgs.filter((id) => named.includes(id));
  }
  return orgs;
}

/**
 * How many users match, regardless of paging: exactly, always. A list without other filters than
 * organizations is counted from the organizations' user counts (org_user_counts), less the users an
 * org-scoped caller may not see; any other filter counts the rows it matches, through the same
 * indexes that find the page.
 */
export async function countUsers(db: DB, scope: UserListScope): Promise<number> {
  const named = organizationsOnly(scope.filter);
  if (named === undefined) {
    const row = await db
      .selectFrom('users')
      .$if(comparesLoginNames(scope.filter), (qb) => qb.innerJoin('orgs', 'orgs.id', 'users.org_id'))
      .where('users.instance_id', '=', scope.instanceId)
      .$if(scope.orgIds !== undefined, (qb) => qb.where(inOrgs(scope.orgIds!)))
      .$if(scope.rolesWithin !== undefined, (qb) => qb.where((eb) => eb.not(eb.exists(roleBeyond(eb, scope.rolesWithin!)))))
      .where(filterSql(scope.filter))
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }
  const orgIds = named === 'any' ? scope.orgIds : scope.orgIds === undefined ? named : named.filter((id) => scope.orgIds!.includes(id));
  if (orgIds !== undefined && orgIds.length === 0) return 0;
  const counted = await db
    .selectFrom('org_user_counts')
    .where('instance_id', '=', scope.instanceId)
    .$if(orgIds !== undefined, (qb) => qb.where('org_id', 'in', [...orgIds!]))
    .select(sql<string>`coalesce(sum(users), 0)`.as('users'))
    .executeTakeFirst();
  let total = Number(counted?.users ?? 0);
  if (scope.rolesWithin !== undefined) {
    // the users with a role beyond the caller's organizations, found from the (few) roles
    const hidden = await db
      .selectFrom('user_roles')
      .innerJoin('users', 'users.id', 'user_roles.user_id')
      .where('users.instance_id', '=', scope.instanceId)
      .$if(orgIds !== undefined, (qb) => qb.where(inOrgs(orgIds!)))
      .where((r) => beyond(r, scope.rolesWithin!))
      .select(sql<string>`count(distinct user_roles.user_id)`.as('count'))
      .executeTakeFirst();
    total -= Number(hidden?.count ?? 0);
  }
  return total;
}

/** One page of the users that match, ordered by `sort` (then by id), with their organization's primary domain. */
export async function listUsers(
  db: DB,
  scope: UserListScope,
  page: { sort: UserSortColumn; asc: boolean; offset: number; limit: number },
): Promise<ListedUser[]> {
  const direction = page.asc ? 'asc' : 'desc';
  return scopedUsers(db, scope)
    .select(LISTED_USER_COLUMNS.map((column) => `users.${column}` as const))
    .select('orgs.primary_domain')
    .orderBy(`users.${page.sort}`, direction)
    .orderBy('users.id', direction)
    .offset(page.offset)
    .limit(page.limit)
    .execute();
}

/**
 * Whether a user other than `exceptUserId`, of an organization not in `orgIds`, has `email` (any
 * letter case, verified or not): what an org-scoped administrator may not vouch for.
 */
export async function emailHeldOutside(db: DB, instanceId: string, email: string, orgIds: readonly string[], exceptUserId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('users.id')
    .where('users.instance_id', '=', instanceId)
    .where(sql`lower(users.email)`, '=', sql`lower(${email})`)
    .where('users.id', '<>', exceptUserId)
    .$if(orgIds.length > 0, (qb) => qb.where('users.org_id', 'not in', [...orgIds]))
    .executeTakeFirst();
  return row !== undefined;
}
