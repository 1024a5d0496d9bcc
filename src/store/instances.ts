/**
 * The `instances` and `instance_features` tables: the instance row (default organization, the
 * impersonation switch), the features set on it, and the advisory lock that serializes instance
 * set-up (bootstrap, first run) across processes.
 */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import type { InstancesTable } from './schema.ts';

export type InstanceRow = Selectable<InstancesTable>;

/**
 * Instance set-up (bootstrap, first run) is serialized across processes sharing one PostgreSQL:
 * whoever takes this transaction-scoped advisory lock second sees what the first one created.
 */
const SETUP_LOCK = 0x6761_7465_686f; // "gateho"

/** Holds the set-up lock until `trx` ends. */
export async function lockInstanceSetup(trx: DB): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(SETUP_LOCK)})`.execute(trx);
}

export async function findInstance(db: DB, instanceId: string): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().where('id', '=', instanceId).executeTakeFirst();
}

/** The oldest instance (ties broken by id), or undefined on a database without one. */
export async function findFirstInstance(db: DB): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

export async function insertInstance(db: DB, instance: Insertable<InstancesTable>): Promise<void> {
  await db.insertInto('instances').values(instance).execute();
}

export async function updateInstance(db: DB, instanceId: string, changes: Updateable<InstancesTable>): Promise<void> {
  await db.updateTable('instances').set(changes).where('id', '=', instanceId).execute();
}

/** The features set on the instance (a feature without a row inherits the system default). */
export async function listInstanceFeatures(db: DB, instanceId: string): Promise<{ name: string; enabled: boolean }[]> {
  return db.selectFrom('instance_features').select(['name', 'enabled']).where('instance_id', '=', instanceId).execute();
}

/** Sets one feature on the instance, inserting or overwriting its row. */
export async function upsertInstanceFeature(db: DB, instanceId: string, name: string, enabled: boolean): Promise<void> {
  await db
    .insertInto('instance_features')
    .values({ instance_id: instanceId, name, enabled, changed_at: new Date() })
    .onConflict((oc) => oc.columns(['instance_id', 'name']).doUpdateSet({ enabled, changed_at: new Date() }))
    .execute();
}

/** Removes every feature set on the instance: all of them inherit the system default again. */
export async function deleteInstanceFeatures(db: DB, instanceId: string): Promise<void> {
  await db.deleteFrom('instance_features').where('instance_id', '=', instanceId).execute();
}

/** The id of the first instance created, or undefined on a database without one. */
export async function findFirstInstanceId(db: DB): Promise<string | undefined> {
  const row = await db.selectFrom('instances').select('id').orderBy('created_at').executeTakeFirst();
  return row?.id;
}
