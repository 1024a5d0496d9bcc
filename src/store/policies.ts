/**
 * The `label_policies` and `login_policies` tables (docs/branding-and-login-policy.md): branding, a
 * preview and an active row per owner, and the login policy, one row per owner. The owner is the
 * instance (its id) or an organization (its id). domain/instance/policies.ts is their one writer.
 */
import type { Insertable, Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { LabelPoliciesTable, LabelPolicyState, LoginPoliciesTable } from './schema.ts';

export type LabelPolicyRow = Selectable<LabelPoliciesTable>;
export type LoginPolicyRow = Selectable<LoginPoliciesTable>;

/** Both branding rows of an owner (preview, active), either possibly absent. */
export async function findLabelPolicies(db: DB, ownerId: string): Promise<Partial<Record<LabelPolicyState, LabelPolicyRow>>> {
  const rows = await db.selectFrom('label_policies').selectAll().where('owner_id', '=', ownerId).execute();
  return Object.fromEntries(rows.map((row) => [row.state, row]));
}

/** The active branding of the organization and of its instance, in one statement. */
export async function findActiveLabelPolicies(db: DB, instanceId: string, orgId: string | undefined): Promise<LabelPolicyRow[]> {
  return db
    .selectFrom('label_policies')
    .selectAll()
    .where('state', '=', 'active')
    .where('owner_id', 'in', orgId === undefined ? [instanceId] : [instanceId, orgId])
    .where('instance_id', '=', instanceId)
    .execute();
}

/** Inserts or replaces one branding row. */
export async function upsertLabelPolicy(db: DB, row: Insertable<LabelPoliciesTable>): Promise<void> {
  const { owner_id: _owner, state: _state, instance_id: _instance, org_id: _org, created_at: _created, ...changes } = row;
  await db
    .insertInto('label_policies')
    .values(row)
    .onConflict((oc) => oc.columns(['owner_id', 'state']).doUpdateSet({ ...changes, changed_at: row.changed_at ?? new Date() }))
    .execute();
}

export async function deleteLabelPolicies(db: DB, ownerId: string): Promise<number> {
  const result = await db.deleteFrom('label_policies').where('owner_id', '=', ownerId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The login policies of the organization and of its instance, in one statement. */
export async function findLoginPolicies(db: DB, instanceId: string, orgId: string | undefined): Promise<LoginPolicyRow[]> {
  return db
    .selectFrom('login_policies')
    .selectAll()
    .where('owner_id', 'in', orgId === undefined ? [instanceId] : [instanceId, orgId])
    .where('instance_id', '=', instanceId)
    .execute();
}

export async function findLoginPolicy(db: DB, ownerId: string): Promise<LoginPolicyRow | undefined> {
  return db.selectFrom('login_policies').selectAll().where('owner_id', '=', ownerId).executeTakeFirst();
}

export async function upsertLoginPolicy(db: DB, row: Insertable<LoginPoliciesTable>): Promise<void> {
  const { owner_id: _owner, instance_id: _instance, org_id: _org, created_at: _created, ...changes } = row;
  await db
    .insertInto('login_policies')
    .values(row)
    .onConflict((oc) => oc.column('owner_id').doUpdateSet({ ...changes, changed_at: row.changed_at ?? new Date() }))
    .execute();
}

export async function deleteLoginPolicy(db: DB, ownerId: string): Promise<number> {
  const result = await db.deleteFrom('login_policies').where('owner_id', '=', ownerId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
