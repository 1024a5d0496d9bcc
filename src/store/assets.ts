/**
 * The `assets` table: uploaded logos and icons, by owner and key, served publicly at
 * /assets/v1/{owner}/{key} (docs/branding-and-login-policy.md#uploading-a-logo-or-an-icon).
 * domain/instance/policies.ts is its one writer.
 */
import type { Insertable, Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { AssetsTable } from './schema.ts';

export type AssetRow = Selectable<AssetsTable>;

export async function findAsset(db: DB, ownerId: string, key: string): Promise<AssetRow | undefined> {
  return db.selectFrom('assets').selectAll().where('owner_id', '=', ownerId).where('key', '=', key).executeTakeFirst();
}

/** The hash of an asset, without its bytes: what a conditional request compares. */
export async function findAssetHash(db: DB, ownerId: string, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('assets').select('hash').where('owner_id', '=', ownerId).where('key', '=', key).executeTakeFirst();
  return row?.hash;
}

export async function insertAsset(db: DB, row: Insertable<AssetsTable>): Promise<void> {
  await db.insertInto('assets').values(row).execute();
}

/** Deletes the owner's assets under `prefix` whose keys are not in `keep`. */
export async function deleteAssetsExcept(db: DB, ownerId: string, prefix: string, keep: readonly string[]): Promise<void> {
  let query = db.deleteFrom('assets').where('owner_id', '=', ownerId).where('key', 'like', `${prefix}%`);
  if (keep.length > 0) query = query.where('key', 'not in', keep);
  await query.execute();
}
