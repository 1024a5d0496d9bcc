/** The `project_roles` table: the roles a project defines (docs/management-api.md#roles). */
import type { Expression, ExpressionBuilder, Insertable, Selectable, SqlBool, Updateable } from 'kysely';
import type { DB } from './database.ts';
import { textCondition, type Page, type TextFilter } from './list-query.ts';
import type { Database, ProjectRolesTable } from './schema.ts';

export type ProjectRoleRow = Selectable<ProjectRolesTable>;

export async function findProjectRole(db: DB, projectId: string, key: string): Promise<ProjectRoleRow | undefined> {
  return db.selectFrom('project_roles').selectAll().where('project_id', '=', projectId).where('role_key', '=', key).executeTakeFirst();
}

/** The project's roles, by key. */
export async function listProjectRoles(db: DB, projectId: string): Promise<ProjectRoleRow[]> {
  return db.selectFrom('project_roles').selectAll().where('project_id', '=', projectId).orderBy('role_key').execute();
}

/** Those of `keys` the project does not define. */
export async function undefinedRoleKeys(db: DB, projectId: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('project_roles').select('role_key').where('project_id', '=', projectId).where('role_key', 'in', [...keys]).execute();
  const known = new Set(rows.map((row) => row.role_key));
  return keys.filter((key) => !known.has(key));
}

export async function insertProjectRole(db: DB, role: Insertable<ProjectRolesTable>): Promise<void> {
  await db.insertInto('project_roles').values(role).execute();
}

/** Writes `changes` and stamps `changed_at`. */
export async function updateProjectRole(db: DB, projectId: string, key: string, changes: Updateable<ProjectRolesTable>): Promise<void> {
  await db.updateTable('project_roles').set({ ...changes, changed_at: new Date() }).where('project_id', '=', projectId).where('role_key', '=', key).execute();
}

/** Removes the role and takes it out of every authorization of the project; false when there was none. */
export async function deleteProjectRole(db: DB, projectId: string, key: string): Promise<boolean> {
  const deleted = await db.deleteFrom('project_roles').where('project_id', '=', projectId).where('role_key', '=', key).executeTakeFirst();
  if (deleted.numDeletedRows === 0n) return false;
  const now = new Date();
  await db
    .updateTable('authorizations')
    .set((eb) => ({ roles: eb.fn<string[]>('array_remove', ['roles', eb.val(key)]), changed_at: now }))
    .where('project_id', '=', projectId)
    .where((eb) => eb(eb.val(key), '=', eb.fn.any('roles')))
    .execute();
  return true;
}

export type ProjectRoleFilter = { kind: 'key'; text: TextFilter } | { kind: 'displayName'; text: TextFilter };

export type ProjectRoleSort = 'role_key' | 'created_at' | 'changed_at';

export async function listProjectRolesPage(
  db: DB,
  query: { projectId: string; filters: readonly ProjectRoleFilter[]; page: Page; sort: ProjectRoleSort },
): Promise<{ rows: ProjectRoleRow[]; total: number }> {
  const conditions = (eb: ExpressionBuilder<Database, 'project_roles'>) => {
    const all: Expression<SqlBool>[] = [eb('project_roles.project_id', '=', query.projectId)];
    for (const filter of query.filters) {
      all.push(textCondition(filter.kind === 'key' ? 'project_roles.role_key' : 'project_roles.display_name', filter.text));
    }
    return eb.and(all);
  };
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    db
      .selectFrom('project_roles')
      .selectAll()
      .where(conditions)
      .orderBy(`project_roles.${query.sort}`, direction)
      .orderBy('project_roles.role_key', direction)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    db.selectFrom('project_roles').select((eb) => eb.fn.countAll<string>().as('total')).where(conditions).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
