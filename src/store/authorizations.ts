/**
 * The `authorizations` table: roles of a project given to a user
 * (docs/decisions.md#authorizations), one row per user and project, in the project's organization.
 */
import { sql, type Expression, type Insertable, type Selectable, type SqlBool } from 'kysely';
import type { DB } from './database.ts';
import { textCondition, type Page, type TextFilter } from './list-query.ts';
import { usersWithLoginName } from './users.ts';
import type { AuthorizationsTable } from './schema.ts';

export type AuthorizationRow = Selectable<AuthorizationsTable>;

export async function findAuthorization(db: DB, instanceId: string, id: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('instance_id', '=', instanceId).where('id', '=', id).executeTakeFirst();
}

export async function findUserProjectAuthorization(db: DB, userId: string, projectId: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
}

export async function insertAuthorization(db: DB, row: Insertable<AuthorizationsTable>): Promise<void> {
  await db.insertInto('authorizations').values(row).execute();
}

export async function setAuthorizationRoles(db: DB, id: string, roles: readonly string[]): Promise<void> {
  await db.updateTable('authorizations').set({ roles: [...roles], changed_at: new Date() }).where('id', '=', id).execute();
}

export async function deleteAuthorization(db: DB, id: string): Promise<void> {
  await db.deleteFrom('authorizations').where('id', '=', id).execute();
}

export type AuthorizationFilter =
  | { kind: 'ids'; ids: readonly string[] }
  | { kind: 'org'; orgId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'userOrg'; orgId: string }
  | { kind: 'loginName'; text: TextFilter }
  | { kind: 'displayName'; text: TextFilter }
  | { kind: 'project'; projectId: string }
  | { kind: 'projectName'; text: TextFilter }
  | { kind: 'roleKey'; text: TextFilter }
  /** Matches nothing (an inactive state, a project grant: Gatehouse has neither). */
  | { kind: 'none' };

export type AuthorizationSort = 'created_at' | 'changed_at' | 'id' | 'user_id' | 'project_id' | 'org_id' | 'user_org_id';

export interface AuthorizationListRow extends AuthorizationRow {
  project_name: string;
  user_org_id: string;
  user_name: string;
  user_domain: string;
  display_name: string | null;
  given_name: string | null;
  family_name: string | null;
}

/** Authorizations with their project's name and their user, a page of those matching every filter, and how many match. */
export async function listAuthorizations(
  db: DB,
  query: { instanceId: string; within: readonly string[] | undefined; filters: readonly AuthorizationFilter[]; page: Page; sort: AuthorizationSort },
): Promise<{ rows: AuthorizationListRow[]; total: number }> {
  const base = db
    .selectFrom('authorizations as a')
    .innerJoin('projects as p', 'p.id', 'a.project_id')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .innerJoin('orgs as uo', 'uo.id', 'u.org_id')
    .where((eb) => {
      const all: Expression<SqlBool>[] = [eb('a.instance_id', '=', query.instanceId)];
      if (query.within !== undefined) all.push(query.within.length === 0 ? sql<SqlBool>`false` : eb('a.org_id', 'in', [...query.within]));
      for (const filter of query.filters) {
        switch (filter.kind) {
          case 'ids': all.push(filter.ids.length === 0 ? sql<SqlBool>`false` : eb('a.id', 'in', [...filter.ids])); break;
          case 'org': all.push(eb('a.org_id', '=', filter.orgId)); break;
          case 'user': all.push(eb('a.user_id', '=', filter.userId)); break;
          case 'userOrg': all.push(eb('u.org_id', '=', filter.orgId)); break;
          case 'loginName': {
            // found through the user name's indexes (store/users.ts), not by joining every name
            const match = { how: filter.text.match, value: filter.text.value, ignoreCase: filter.text.ignoreCase };
            all.push(eb('a.user_id', 'in', usersWithLoginName(db, query.instanceId, match)));
            break;
          }
          case 'displayName': all.push(textCondition(sql`coalesce(u.display_name, '')`, filter.text)); break;
          case 'project': all.push(eb('a.project_id', '=', filter.projectId)); break;
          case 'projectName': all.push(textCondition('p.name', filter.text)); break;
          case 'roleKey': all.push(sql<SqlBool>`exists (select 1 from unnest(a.roles) as r(key) where ${textCondition(sql`r.key`, filter.text)})`); break;
          case 'none': all.push(sql<SqlBool>`false`); break;
        }
      }
      return eb.and(all);
    });
  const sortColumn = query.sort === 'user_org_id' ? 'u.org_id' : (`a.${query.sort}` as const);
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    base
      .selectAll('a')
      .select(['p.name as project_name', 'u.org_id as user_org_id', 'u.user_name', 'uo.primary_domain as user_domain', 'u.display_name', 'u.given_name', 'u.family_name'])
      .orderBy(sortColumn, direction)
      .orderBy('a.id', direction)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    countAuthorizations(db, query, async () => Number((await base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow()).total)),
  ]);
  return { rows, total: count };
}

/**
 * How many authorizations match, exactly: from the organizations' counts (org_authorization_counts)
 * when the filters name nothing but organizations, else by counting the matching rows through the
 * indexes that find the page. Every authorization has its user and project (foreign keys), so the
 * list's joins drop none.
 */
async function countAuthorizations(
  db: DB,
  query: { instanceId: string; within: readonly string[] | undefined; filters: readonly AuthorizationFilter[] },
  countRows: () => Promise<number>,
): Promise<number> {
  if (!query.filters.every((filter) => filter.kind === 'org')) return countRows();
  let orgs: readonly string[] | undefined = query.within;
  for (const filter of query.filters) {
    if (filter.kind === 'org') orgs = orgs === undefined ? [filter.orgId] : orgs.filter((id) => id === filter.orgId);
  }
  if (orgs !== undefined && orgs.length === 0) return 0;
  const row = await db
    .selectFrom('org_authorization_counts')
    .where('instance_id', '=', query.instanceId)
    .$if(orgs !== undefined, (qb) => qb.where('org_id', 'in', [...orgs!]))
    .select(sql<string>`coalesce(sum(authorizations), 0)`.as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
