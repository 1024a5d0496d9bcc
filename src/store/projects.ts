/** The `projects` table: the projects of an organization, which group its applications. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import type { ProjectsTable } from './schema.ts';

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
