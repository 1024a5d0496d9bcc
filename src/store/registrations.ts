/**
 * Self-registration's statements: the organization an application's users register into, and the
 * `registrations` rows its hourly limits count (per client address, per instance). Times are the
 * database's (`now()`), so every process counts alike.
 */
import { sql } from 'kysely';
import type { DB } from './database.ts';

/** An organization's registration setting, and whether it is its instance's default organization. */
export interface RegistrationOrgRow {
  id: string;
  /** Null: unset (allowed for the default organization only). */
  allow_register: boolean | null;
  is_default: boolean;
}

export async function findRegistrationOrg(db: DB, instanceId: string, orgId: string): Promise<RegistrationOrgRow | undefined> {
  return db
    .selectFrom('orgs')
    .innerJoin('instances', 'instances.id', 'orgs.instance_id')
    .select(['orgs.id', 'orgs.allow_register', sql<boolean>`coalesce(instances.default_org_id = orgs.id, false)`.as('is_default')])
    .where('orgs.instance_id', '=', instanceId)
    .where('orgs.id', '=', orgId)
    .executeTakeFirst();
}

/** Which registrations a limit counts: the instance's, or those from one address of it. */
export type RegistrationCount = { instanceId: string; address?: string };

/**
 * The newest `limit` registrations of `which` within the last `windowSeconds`: for each, in how many
 * seconds (rounded up) it leaves the window, newest first. Rows of the caller's transaction count too.
 */
export async function secondsLeftInRegistrationWindow(db: DB, which: RegistrationCount, limit: number, windowSeconds: number): Promise<number[]> {
  const window = sql<Date>`now() - make_interval(secs => ${windowSeconds})`;
  let query = db
    .selectFrom('registrations')
    .select(sql<number>`ceil(extract(epoch from created_at - (${window})))::int`.as('left'))
    .where('instance_id', '=', which.instanceId)
    .where('created_at', '>', window);
  if (which.address !== undefined) query = query.where('address', '=', which.address);
  const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
  return rows.map((row) => row.left);
}

/**
 * Serializes the transactions that add a registration to the instance until they end (a
 * transaction-level advisory lock), so that concurrent registrations cannot all pass the counts.
 */
export async function lockRegistrations(trx: DB, instanceId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`registrations ${instanceId}`}))`.execute(trx);
}

/** Records a registration, and forgets those older than `keepSeconds` (no limit looks further back). */
export async function recordRegistration(trx: DB, row: { userId: string; instanceId: string; address: string }, keepSeconds: number): Promise<void> {
  await trx
    .deleteFrom('registrations')
    .where('instance_id', '=', row.instanceId)
    .where('created_at', '<=', sql<Date>`now() - make_interval(secs => ${keepSeconds})`)
    .execute();
  await trx.insertInto('registrations').values({ user_id: row.userId, instance_id: row.instanceId, address: row.address }).execute();
}
