/**
 * The `authorizations` table: roles of a project given to a user (SPEC §12), one row per user and
 * project, in the project's organization.
 */
import type { Insertable, Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { AuthorizationsTable } from './schema.ts';

export type AuthorizationRow = Selectable<AuthorizationsTable>;

export async function findAuthorization(db: DB, instanceId: string, id: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('instance_id', '=', instanceId).where('id', '=', id).executeTakeFirst();
}

export async function findUserProjectAuthorization(db: DB, userId: string, projectId: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
}

/** A user's authorizations with the primary domain of each one's organization (the role claims' values). */
export async function listUserAuthorizations(
  db: DB,
  userId: string,
): Promise<Array<{ project_id: string; org_id: string; primary_domain: string; roles: string[] }>> {
  return db
    .selectFrom('authorizations')
    .innerJoin('orgs', 'orgs.id', 'authorizations.org_id')
    .select(['authorizations.project_id', 'authorizations.org_id', 'orgs.primary_domain', 'authorizations.roles'])
    .where('authorizations.user_id', '=', userId)
    .execute();
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
