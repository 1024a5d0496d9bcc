/**
 * The `apps` and `app_keys` tables: the applications (OAuth clients and API resource servers) of a
 * project, and the public keys an application signs its assertions with (private_key_jwt).
 */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import type { AppKeysTable, AppRow, AppsTable } from './schema.ts';

export async function findApp(db: DB, appId: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}

export async function findApplicationByClientId(db: DB, instanceId: string, clientId: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('instance_id', '=', instanceId).where('client_id', '=', clientId).executeTakeFirst();
}

/** An application of the project other than `exceptAppId` with this name, compared case-insensitively. */
export async function findOtherAppNamed(db: DB, projectId: string, name: string, exceptAppId: string | undefined): Promise<{ id: string } | undefined> {
  return db
    .selectFrom('apps')
    .select('id')
    .where('project_id', '=', projectId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .where('id', '!=', exceptAppId ?? '')
    .executeTakeFirst();
}

/** The redirect and post-logout redirect URIs of every application of the instance. */
export async function listAppRedirectUris(db: DB, instanceId: string): Promise<{ redirect_uris: string[]; post_logout_redirect_uris: string[] }[]> {
  return db.selectFrom('apps').select(['redirect_uris', 'post_logout_redirect_uris']).where('instance_id', '=', instanceId).execute();
}

export async function insertApp(db: DB, app: Insertable<AppsTable>): Promise<void> {
  await db.insertInto('apps').values(app).execute();
}

/** Writes `changes` and stamps `changed_at`. */
export async function updateApp(db: DB, appId: string, changes: Updateable<AppsTable>): Promise<void> {
  await db.updateTable('apps').set({ ...changes, changed_at: new Date() }).where('id', '=', appId).execute();
}

export async function listAppKeys(db: DB, appId: string): Promise<{ id: string; public_key: string; expires_at: Date | null }[]> {
  return db.selectFrom('app_keys').select(['id', 'public_key', 'expires_at']).where('app_id', '=', appId).execute();
}

/** An application key by its id, with the application it belongs to as `owner`. */
export async function findAppKey(
  db: DB,
  keyId: string,
): Promise<{ id: string; owner: string; public_key: string; expires_at: Date | null } | undefined> {
  return db.selectFrom('app_keys').select(['id', 'app_id as owner', 'public_key', 'expires_at']).where('id', '=', keyId).executeTakeFirst();
}

export async function insertAppKey(db: DB, key: Insertable<AppKeysTable>): Promise<void> {
  await db.insertInto('app_keys').values(key).execute();
}

export async function updateAppKey(db: DB, keyId: string, changes: Updateable<AppKeysTable>): Promise<void> {
  await db.updateTable('app_keys').set(changes).where('id', '=', keyId).execute();
}

/** The redirect URIs of every application of the organization, one list per application. */
export async function listOrgRedirectUris(db: DB, instanceId: string, orgId: string): Promise<string[][]> {
  const apps = await db.selectFrom('apps').select('redirect_uris').where('instance_id', '=', instanceId).where('org_id', '=', orgId).execute();
  return apps.map((app) => app.redirect_uris);
}
