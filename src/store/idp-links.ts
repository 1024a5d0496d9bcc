/**
 * The `idp_links` table: users' accounts at external identity providers (docs/federation.md#links).
 * domain/federation/links.ts is its one writer.
 */
import type { Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { IdpLinksTable } from './schema.ts';

export type IdpLinkRow = Selectable<IdpLinksTable>;

/** The link of an account at a provider (the upstream subject), if any. */
export async function findIdpLinkBySubject(db: DB, instanceId: string, idpId: string, externalUserId: string): Promise<IdpLinkRow | undefined> {
  return db.selectFrom('idp_links').selectAll().where('instance_id', '=', instanceId).where('idp_id', '=', idpId).where('external_user_id', '=', externalUserId).executeTakeFirst();
}

/** A user's links, oldest first; a page of them with the total. */
export async function listUserIdpLinks(db: DB, userId: string, page: { offset: number; limit: number; asc: boolean }): Promise<{ rows: IdpLinkRow[]; total: number }> {
  const base = db.selectFrom('idp_links').where('user_id', '=', userId);
  const direction = page.asc ? 'asc' : 'desc';
  let query = base.selectAll().orderBy('created_at', direction).orderBy('idp_id', direction).orderBy('external_user_id', direction).offset(page.offset);
  if (page.limit > 0) query = query.limit(page.limit);
  const [rows, count] = await Promise.all([query.execute(), base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()]);
  return { rows, total: Number(count.n) };
}

export async function countUserIdpLinks(db: DB, userId: string): Promise<number> {
  const row = await db.selectFrom('idp_links').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Adds a link; false when the account at the provider is linked already (to this or another user). */
export async function insertIdpLink(db: DB, row: { instance_id: string; idp_id: string; user_id: string; external_user_id: string; external_user_name: string }): Promise<boolean> {
  const result = await db
    .insertInto('idp_links')
    .values({ ...row, created_at: new Date() })
    .onConflict((oc) => oc.columns(['idp_id', 'external_user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Removes a user's link; false when the user has no such link. */
export async function deleteIdpLink(db: DB, userId: string, idpId: string, externalUserId: string): Promise<boolean> {
  const result = await db.deleteFrom('idp_links').where('user_id', '=', userId).where('idp_id', '=', idpId).where('external_user_id', '=', externalUserId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
