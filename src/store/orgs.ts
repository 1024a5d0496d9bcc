/** The `orgs` table: organizations of an instance, matched by id, name or primary domain. */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import type { OrgRow, OrgsTable } from './schema.ts';

export async function findOrg(db: DB, orgId: string): Promise<OrgRow | undefined> {
  return db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
}

/** The organization of the instance with this name, compared case-insensitively. */
export async function findOrgByName(db: DB, instanceId: string, name: string): Promise<OrgRow | undefined> {
  return db.selectFrom('orgs').selectAll().where('instance_id', '=', instanceId).where(sql<string>`lower(name)`, '=', name.toLowerCase()).executeTakeFirst();
}

/**
 * An organization other than `exceptOrgId` whose primary domain, lowercased, is `domain` (which the
 * caller gives in lower case).
 */
export async function findOtherOrgWithDomain(
  db: DB,
  instanceId: string,
  domain: string,
  exceptOrgId: string | undefined,
): Promise<{ id: string; name: string } | undefined> {
  return db
    .selectFrom('orgs')
    .select(['id', 'name'])
    .where('instance_id', '=', instanceId)
    .where(sql<string>`lower(primary_domain)`, '=', domain)
    .where('id', '!=', exceptOrgId ?? '')
    .executeTakeFirst();
}

export async function insertOrg(db: DB, org: Insertable<OrgsTable>): Promise<void> {
  await db.insertInto('orgs').values(org).execute();
}

/** Writes `changes` and stamps `changed_at`. */
export async function updateOrg(db: DB, orgId: string, changes: Updateable<OrgsTable>): Promise<void> {
  await db.updateTable('orgs').set({ ...changes, changed_at: new Date() }).where('id', '=', orgId).execute();
}
