/** The `orgs` table: organizations of an instance, matched by id, name or primary domain. */
import { sql, type Expression, type ExpressionBuilder, type Insertable, type SqlBool, type Updateable } from 'kysely';
import type { DB } from './database.ts';
import { latestSequence, textCondition, type Page, type TextFilter } from './list-query.ts';
import type { Database, OrgRow, OrgsTable } from './schema.ts';

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

export type OrgFilter =
  | { kind: 'name'; text: TextFilter }
  | { kind: 'domain'; text: TextFilter }
  | { kind: 'id'; id: string }
  | { kind: 'default' }
  /** Matches nothing (a state other than active: every organization is active). */
  | { kind: 'none' };

export interface OrgListQuery {
  instanceId: string;
  /** Only these organizations (what the caller manages); undefined for all. */
  within: readonly string[] | undefined;
  filters: readonly OrgFilter[];
  page: Page;
  sortByName: boolean;
}

/** Organizations matching every filter, a page of them with their latest event sequence, and how many match. */
export async function listOrgs(db: DB, query: OrgListQuery): Promise<{ rows: Array<OrgRow & { sequence: string | null }>; total: number }> {
  const conditions = (eb: ExpressionBuilder<Database, 'orgs'>) => {
    const all: Expression<SqlBool>[] = [eb('orgs.instance_id', '=', query.instanceId)];
    if (query.within !== undefined) all.push(query.within.length === 0 ? sql<SqlBool>`false` : eb('orgs.id', 'in', [...query.within]));
    for (const filter of query.filters) {
      if (filter.kind === 'name') all.push(textCondition('orgs.name', filter.text));
      else if (filter.kind === 'domain') all.push(textCondition('orgs.primary_domain', filter.text));
      else if (filter.kind === 'id') all.push(eb('orgs.id', '=', filter.id));
      else if (filter.kind === 'default') all.push(eb('orgs.id', '=', eb.selectFrom('instances').select('default_org_id').where('instances.id', '=', query.instanceId)));
      else all.push(sql<SqlBool>`false`);
    }
    return eb.and(all);
  };
  const direction = query.page.asc ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    db
      .selectFrom('orgs')
      .selectAll('orgs')
      .select(latestSequence('org', 'orgs.id').as('sequence'))
      .where(conditions)
      .orderBy(query.sortByName ? 'orgs.name' : 'orgs.created_at', direction)
      .orderBy('orgs.id', direction)
      .offset(query.page.offset)
      .limit(query.page.limit)
      .execute(),
    db.selectFrom('orgs').select((eb) => eb.fn.countAll<string>().as('total')).where(conditions).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
