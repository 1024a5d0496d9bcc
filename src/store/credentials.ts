/**
 * Credentials the management API changes (zitadel.user.v2): password hashes, machine secrets,
 * machine keys and personal access tokens (listing with filters and paging), key deletion and password reset codes
 * (`password_reset_codes`: one pending code per user, a salted hash and the count of wrong tries).
 */
import { sql, type ExpressionBuilder, type SqlBool, type Expression, type RawBuilder } from 'kysely';
import type { DB } from './database.ts';
import type { Database } from './schema.ts';
import type { Page } from './list-query.ts';
import { roleBeyond } from './users.ts';

export async function setPasswordHash(db: DB, userId: string, passwordHash: string, at: Date): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, changed_at: at }).where('id', '=', userId).execute();
}

/** Stores the machine user's secret hash, replacing any previous one. */
export async function setMachineSecretHash(db: DB, userId: string, secretHash: string, at: Date): Promise<void> {
  await db.updateTable('users').set({ secret_hash: secretHash, changed_at: at }).where('id', '=', userId).execute();
}

/** Removes the machine user's secret; false when it had none. */
export async function clearMachineSecretHash(db: DB, userId: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ secret_hash: null, changed_at: at })
    .where('id', '=', userId)
    .where('secret_hash', 'is not', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes the key if it belongs to the user; false when the user has no key with that id. */
export async function deleteMachineKey(db: DB, userId: string, keyId: string): Promise<boolean> {
  const row = await db.deleteFrom('machine_keys').where('id', '=', keyId).where('user_id', '=', userId).returning('id').executeTakeFirst();
  return row !== undefined;
}

export type TimeComparison = '=' | '>' | '>=' | '<' | '<=';

/** One filter of a key listing; every filter of a listing must hold. */
export type KeyFilter =
  | { kind: 'keyId' | 'userId' | 'orgId'; id: string }
  /** A key without expiry compares as later than any time. */
  | { kind: 'createdAt' | 'expiresAt'; op: TimeComparison; at: Date };

export type KeySortColumn = 'createdAt' | 'id' | 'userId' | 'orgId' | 'expiresAt';

export interface KeyQuery {
  instanceId: string;
  /** Only keys of users of these organizations; undefined for every organization. */
  orgIds: readonly string[] | undefined;
  /**
   * For callers with org-scoped roles: leave out the keys of users holding a role beyond these
   * organizations (instance-wide, or in another organization: store/users.ts `roleBeyond`).
   */
  rolesWithin: readonly string[] | undefined;
  filters: readonly KeyFilter[];
  sortBy: KeySortColumn;
  page: Page;
}

export interface MachineKeyListRow {
  id: string;
  user_id: string;
  org_id: string;
  created_at: Date;
  expires_at: Date | null;
}

/** The tables of a machine user's credentials that the API lists alike (keys, personal access tokens). */
export type CredentialTable = 'machine_keys' | 'personal_access_tokens';

type KeyScope = ExpressionBuilder<Database, CredentialTable | 'users'>;

const NEVER = sql<Date>`'infinity'::timestamptz`;

/** The table's own columns, by name: both tables have id, user_id, created_at and expires_at. */
function column<T>(table: CredentialTable, name: 'id' | 'user_id' | 'created_at' | 'expires_at'): RawBuilder<T> {
  return sql.ref<T>(`${table}.${name}`);
}

function expiry(table: CredentialTable): Expression<Date> {
  return sql<Date>`coalesce(${column(table, 'expires_at')}, ${NEVER})`;
}

function keyCondition(eb: KeyScope, table: CredentialTable, filter: KeyFilter): Expression<SqlBool> {
  switch (filter.kind) {
    case 'keyId':
      return eb(column<string>(table, 'id'), '=', filter.id);
    case 'userId':
      return eb(column<string>(table, 'user_id'), '=', filter.id);
    case 'orgId':
      return eb('users.org_id', '=', filter.id);
    case 'createdAt':
      return eb(column<Date>(table, 'created_at'), filter.op, filter.at);
    case 'expiresAt':
      return eb(expiry(table), filter.op, filter.at);
  }
}

function keyConditions(table: CredentialTable, query: KeyQuery) {
  return (eb: KeyScope): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [eb('users.instance_id', '=', query.instanceId), eb('users.kind', '=', 'machine')];
    if (query.orgIds !== undefined) conditions.push(query.orgIds.length === 0 ? sql<SqlBool>`false` : eb('users.org_id', 'in', query.orgIds));
    if (query.rolesWithin !== undefined) conditions.push(eb.not(eb.exists(roleBeyond(eb, query.rolesWithin))));
    for (const filter of query.filters) conditions.push(keyCondition(eb, table, filter));
    return eb.and(conditions);
  };
}

function sortColumn(table: CredentialTable, column_: KeySortColumn): Expression<unknown> {
  switch (column_) {
    case 'createdAt':
      return column(table, 'created_at');
    case 'id':
      return column(table, 'id');
    case 'userId':
      return column(table, 'user_id');
    case 'orgId':
      return sql.ref('users.org_id');
    case 'expiresAt':
      return expiry(table);
  }
}

/** One page of a machine credential table (keys or personal access tokens) and how many match in all. */
export async function listMachineCredentialsPage(db: DB, table: CredentialTable, query: KeyQuery): Promise<{ rows: MachineKeyListRow[]; total: number }> {
  const where = keyConditions(table, query);
  const direction = query.page.asc ? sql`asc` : sql`desc`;
  // Typed as the keys' table: both tables have the columns selected here (CredentialTable).
  const from = () => db.selectFrom(table as 'machine_keys').innerJoin('users', (join) => join.on(sql<SqlBool>`users.id = ${column(table, 'user_id')}`));
  const [rows, count] = await Promise.all([
    from()
      .select([
        column<string>(table, 'id').as('id'),
        column<string>(table, 'user_id').as('user_id'),
        'users.org_id',
        column<Date>(table, 'created_at').as('created_at'),
        column<Date | null>(table, 'expires_at').as('expires_at'),
      ])
      .where(where)
      .orderBy(sql`${sortColumn(table, query.sortBy)} ${direction}`)
      .orderBy(sql`${column(table, 'id')} ${direction}`)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    from()
      .select((eb) => eb.fn.countAll<string>().as('total'))
      .where(where)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export interface PasswordResetCodeValues {
  code_hash: string;
  salt: string;
  expires_at: Date;
  created_at: Date;
}

/**
 * Stores the user's reset code, replacing any previous one (and its count of wrong tries). The
 * columns are named one by one: a code may come with more than this table keeps (an id of null).
 */
export async function upsertPasswordResetCode(db: DB, userId: string, values: PasswordResetCodeValues): Promise<void> {
  const row = { code_hash: values.code_hash, salt: values.salt, expires_at: values.expires_at, created_at: values.created_at, attempts: 0 };
  await db
    .insertInto('password_reset_codes')
    .values({ user_id: userId, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
    .execute();
}

export interface PendingPasswordResetCode {
  code_hash: string;
  salt: string;
  expires_at: Date;
  attempts: number;
}

/** The user's pending code, its row locked for the transaction. */
export async function findPasswordResetCodeForUpdate(db: DB, userId: string): Promise<PendingPasswordResetCode | undefined> {
  return db
    .selectFrom('password_reset_codes')
    .select(['code_hash', 'salt', 'expires_at', 'attempts'])
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

export async function countPasswordResetAttempt(db: DB, userId: string): Promise<void> {
  await db.updateTable('password_reset_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('user_id', '=', userId).execute();
}

export async function deletePasswordResetCode(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('password_reset_codes').where('user_id', '=', userId).execute();
}
