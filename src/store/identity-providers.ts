/**
 * The `identity_providers` and `login_policy_idps` tables (docs/federation.md): external identity
 * providers of the instance (`org_id` null) or of an organization, and the providers each login
 * policy offers. domain/federation/providers.ts is their one writer.
 */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import type { IdentityProvidersTable } from './schema.ts';

export type IdentityProviderRow = Selectable<IdentityProvidersTable>;

/** A provider of the instance by id, whoever owns it. */
export async function findIdentityProvider(db: DB, instanceId: string, id: string): Promise<IdentityProviderRow | undefined> {
  return db.selectFrom('identity_providers').selectAll().where('id', '=', id).where('instance_id', '=', instanceId).executeTakeFirst();
}

/**
 * The providers of an owner: the instance's (`orgId` undefined), or an organization's own and,
 * with `withInstance`, the instance's too. By name, then id.
 */
export async function listIdentityProviders(db: DB, instanceId: string, orgId: string | undefined, withInstance: boolean): Promise<IdentityProviderRow[]> {
  let query = db.selectFrom('identity_providers').selectAll().where('instance_id', '=', instanceId);
  if (orgId === undefined) query = query.where('org_id', 'is', null);
  else if (withInstance) query = query.where((eb) => eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]));
  else query = query.where('org_id', '=', orgId);
  return query.orderBy('name').orderBy('id').execute();
}

export async function insertIdentityProvider(db: DB, row: Insertable<IdentityProvidersTable>): Promise<void> {
  await db.insertInto('identity_providers').values(row).execute();
}

export async function updateIdentityProvider(db: DB, id: string, changes: Updateable<IdentityProvidersTable>): Promise<void> {
  await db.updateTable('identity_providers').set(changes).where('id', '=', id).execute();
}

/** Removes a provider; its login policy entries and user links go with it (foreign keys). */
export async function deleteIdentityProvider(db: DB, id: string): Promise<void> {
  await db.deleteFrom('identity_providers').where('id', '=', id).execute();
}

/** A provider a login policy offers, with what the policy's list shows of it. */
export interface PolicyIdpRow {
  idp_id: string;
  name: string;
  kind: IdentityProviderRow['kind'];
  org_id: string | null;
}

/** The providers the login policy of `ownerId` (the instance's or an organization's id) offers, by name. */
export async function listPolicyIdps(db: DB, instanceId: string, ownerId: string): Promise<PolicyIdpRow[]> {
  return db
    .selectFrom('login_policy_idps as l')
    .innerJoin('identity_providers as p', 'p.id', 'l.idp_id')
    .select(['l.idp_id', 'p.name', 'p.kind', 'p.org_id'])
    .where('l.owner_id', '=', ownerId)
    .where('l.instance_id', '=', instanceId)
    .orderBy('p.name')
    .orderBy('l.idp_id')
    .execute();
}

/** The full providers a login policy offers, in its list's order. */
export async function listPolicyProviders(db: DB, instanceId: string, ownerId: string): Promise<IdentityProviderRow[]> {
  return db
    .selectFrom('login_policy_idps as l')
    .innerJoin('identity_providers as p', 'p.id', 'l.idp_id')
    .selectAll('p')
    .where('l.owner_id', '=', ownerId)
    .where('l.instance_id', '=', instanceId)
    .orderBy('p.name')
    .orderBy('p.id')
    .execute();
}

/** Adds a provider to a login policy; false when it was there already. */
export async function insertPolicyIdp(db: DB, row: { owner_id: string; instance_id: string; org_id: string | null; idp_id: string }): Promise<boolean> {
  const result = await db.insertInto('login_policy_idps').values(row).onConflict((oc) => oc.columns(['owner_id', 'idp_id']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Removes a provider from a login policy; false when it was not there. */
export async function deletePolicyIdp(db: DB, ownerId: string, idpId: string): Promise<boolean> {
  const result = await db.deleteFrom('login_policy_idps').where('owner_id', '=', ownerId).where('idp_id', '=', idpId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Empties a login policy's list (the organization's policy was removed). */
export async function deletePolicyIdps(db: DB, ownerId: string): Promise<void> {
  await db.deleteFrom('login_policy_idps').where('owner_id', '=', ownerId).execute();
}

/**
 * The human users of the instance whose verified email is `email` (case-insensitively), for the
 * auto-linking by email of a first external sign-in; at most `limit`.
 */
export async function findHumansByVerifiedEmail(db: DB, instanceId: string, email: string, limit: number): Promise<Array<{ id: string; org_id: string }>> {
  return db
    .selectFrom('users')
    .select(['id', 'org_id'])
    .where('instance_id', '=', instanceId)
    .where('kind', '=', 'human')
    .where('email_verified', '=', true)
    .where(sql<boolean>`lower(email) = lower(${email})`)
    .orderBy('id')
    .limit(limit)
    .execute();
}
