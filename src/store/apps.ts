/**
 * The `apps` and `app_keys` tables: the applications (OAuth clients and API resource servers) of a
 * project, and the public keys an application signs its assertions with (private_key_jwt).
 */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import { textCondition, type Page, type TextFilter } from './list-query.ts';
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

/** An application, locked until the transaction ends (an update, a delete, a new secret). */
export async function findAppForUpdate(db: DB, appId: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).forUpdate().executeTakeFirst();
}

/** Deletes an application; its keys go with it (app_keys cascades). */
export async function deleteApp(db: DB, appId: string): Promise<void> {
  await db.deleteFrom('apps').where('id', '=', appId).execute();
}

/** The unique index a failed insert or update ran into (PostgreSQL 23505), if that was the failure. */
export function violatedUniqueIndex(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  if (code !== '23505') return undefined;
  return typeof constraint === 'string' ? constraint : '';
}

export const APP_NAME_INDEX = 'apps_name_uq';
export const APP_CLIENT_ID_INDEX = 'apps_client_id_uq';

export type AppSortColumn = 'id' | 'name' | 'created_at' | 'changed_at';

export interface AppListQuery {
  instanceId: string;
  /** The organizations whose applications may be listed; all when undefined. */
  orgIds: readonly string[] | undefined;
  projectId: string | undefined;
  names: readonly TextFilter[];
  kind: 'oidc' | 'api' | undefined;
  /** A filter that nothing matches (SAML applications, inactive ones). */
  matchNothing: boolean;
  sort: AppSortColumn;
  page: Page;
}

/** One page of applications and how many match in all. */
export async function listApps(db: DB, query: AppListQuery): Promise<{ rows: AppRow[]; total: number }> {
  if (query.matchNothing || (query.orgIds !== undefined && query.orgIds.length === 0)) return { rows: [], total: 0 };
  let base = db.selectFrom('apps').where('instance_id', '=', query.instanceId);
  if (query.orgIds !== undefined) base = base.where('org_id', 'in', query.orgIds);
  if (query.projectId !== undefined) base = base.where('project_id', '=', query.projectId);
  if (query.kind !== undefined) base = base.where('kind', '=', query.kind);
  for (const name of query.names) base = base.where(textCondition('apps.name', name));
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy(query.sort, direction).orderBy('id', direction).offset(query.page.offset).limit(query.page.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** An application key with the application, project and organization it belongs to. */
export interface AppKeyRow {
  id: string;
  app_id: string;
  project_id: string;
  org_id: string;
  instance_id: string;
  expires_at: Date | null;
  created_at: Date;
}

const KEY_COLUMNS = ['app_keys.id', 'app_keys.app_id', 'apps.project_id', 'apps.org_id', 'apps.instance_id', 'app_keys.expires_at', 'app_keys.created_at'] as const;

function appKeysWithApps(db: DB) {
  return db.selectFrom('app_keys').innerJoin('apps', 'apps.id', 'app_keys.app_id');
}

export async function findAppKeyWithApp(db: DB, keyId: string): Promise<AppKeyRow | undefined> {
  return appKeysWithApps(db).select(KEY_COLUMNS).where('app_keys.id', '=', keyId).executeTakeFirst();
}

export async function deleteAppKey(db: DB, keyId: string): Promise<void> {
  await db.deleteFrom('app_keys').where('id', '=', keyId).execute();
}

export type AppKeySortColumn = 'app_keys.id' | 'apps.project_id' | 'app_keys.app_id' | 'app_keys.created_at' | 'apps.org_id' | 'app_keys.expires_at';

export interface AppKeyListQuery {
  instanceId: string;
  /** The organizations whose keys may be listed; all when undefined. */
  orgIds: readonly string[] | undefined;
  appId: string | undefined;
  projectId: string | undefined;
  orgId: string | undefined;
  sort: AppKeySortColumn;
  page: Page;
}

/** One page of application keys (never the key material) and how many match in all. */
export async function listAppKeysPage(db: DB, query: AppKeyListQuery): Promise<{ rows: AppKeyRow[]; total: number }> {
  if (query.orgIds !== undefined && query.orgIds.length === 0) return { rows: [], total: 0 };
  let base = appKeysWithApps(db).where('apps.instance_id', '=', query.instanceId);
  if (query.orgIds !== undefined) base = base.where('apps.org_id', 'in', query.orgIds);
  if (query.appId !== undefined) base = base.where('app_keys.app_id', '=', query.appId);
  if (query.projectId !== undefined) base = base.where('apps.project_id', '=', query.projectId);
  if (query.orgId !== undefined) base = base.where('apps.org_id', '=', query.orgId);
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    base
      .select(KEY_COLUMNS)
      .orderBy(query.sort, direction)
      .orderBy('app_keys.id', direction)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
