/** The `projects` table: the projects of an organization, which group its applications. */
import { sql, type Expression, type ExpressionBuilder, type Insertable, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import { textCondition, type Page, type TextFilter } from './list-query.ts';
import type { Database, ProjectsTable } from './schema.ts';

export type ProjectRow = Selectable<ProjectsTable>;

export async function findProject(db: DB, projectId: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
}

/** The project of the organization with this name, compared case-insensitively. */
export async function findProjectByName(db: DB, orgId: string, name: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('org_id', '=', orgId).where(sql<string>`lower(name)`, '=', name.toLowerCase()).executeTakeFirst();
}

/** A project of the instance with what sign-in and token claims need, or undefined when the instance has none with the id. */
export async function findProjectSettings(
  db: DB,
  instanceId: string,
  projectId: string,
): Promise<Pick<ProjectRow, 'id' | 'org_id' | 'role_assertion' | 'authorization_required' | 'project_access_required'> | undefined> {
  return db
    .selectFrom('projects')
    .select(['id', 'org_id', 'role_assertion', 'authorization_required', 'project_access_required'])
    .where('instance_id', '=', instanceId)
    .where('id', '=', projectId)
    .executeTakeFirst();
}

export async function insertProject(db: DB, project: Insertable<ProjectsTable>): Promise<void> {
  await db.insertInto('projects').values(project).execute();
}

/** Writes `changes` and stamps `changed_at`. */
export async function updateProject(db: DB, projectId: string, changes: Updateable<ProjectsTable>): Promise<void> {
  await db.updateTable('projects').set({ ...changes, changed_at: new Date() }).where('id', '=', projectId).execute();
}

/** Deletes a project; its applications, keys, roles and authorizations go with it (foreign keys). */
export async function deleteProject(db: DB, projectId: string): Promise<void> {
  await db.deleteFrom('projects').where('id', '=', projectId).execute();
}

export type ProjectFilter =
  | { kind: 'name'; text: TextFilter }
  | { kind: 'ids'; ids: readonly string[] }
  | { kind: 'org'; orgId: string }
  /** Matches nothing (project grants: Gatehouse has none). */
  | { kind: 'none' };

export type ProjectSort = 'id' | 'created_at' | 'changed_at' | 'name';

export async function listProjects(
  db: DB,
  query: { instanceId: string; within: readonly string[] | undefined; filters: readonly ProjectFilter[]; page: Page; sort: ProjectSort },
): Promise<{ rows: ProjectRow[]; total: number }> {
  const conditions = (eb: ExpressionBuilder<Database, 'projects'>) => {
    const all: Expression<SqlBool>[] = [eb('projects.instance_id', '=', query.instanceId)];
    if (query.within !== undefined) all.push(query.within.length === 0 ? sql<SqlBool>`false` : eb('projects.org_id', 'in', [...query.within]));
    for (const filter of query.filters) {
      if (filter.kind === 'name') all.push(textCondition('projects.name', filter.text));
      else if (filter.kind === 'ids') all.push(filter.ids.length === 0 ? sql<SqlBool>`false` : eb('projects.id', 'in', [...filter.ids]));
      else if (filter.kind === 'org') all.push(eb('projects.org_id', '=', filter.orgId));
      else all.push(sql<SqlBool>`false`);
    }
    return eb.and(all);
  };
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    db
      .selectFrom('projects')
      .selectAll()
      .where(conditions)
      .orderBy(`projects.${query.sort}`, direction)
      .orderBy('projects.id', direction)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    db.selectFrom('projects').select((eb) => eb.fn.countAll<string>().as('total')).where(conditions).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
