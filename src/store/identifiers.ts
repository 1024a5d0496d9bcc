/**
 * The `identifiers` table: who holds each value of the instance's namespace of token names
 * (domain/identifiers.ts has the rules). Values are compared as PostgreSQL's lower() gives them.
 */
import { sql } from 'kysely';
import type { DB } from './database.ts';
import type { IdentifierOwnerType } from './schema.ts';

export interface IdentifierHolder {
  value: string;
  ownerType: IdentifierOwnerType;
  ownerId: string;
}

/**
 * Takes every value that nobody holds for the owner, in one statement; returns the values that were
 * held already (by anyone, this owner included). A value another transaction is taking waits for it
 * to end, so two callers never both get one.
 */
export async function takeIdentifiers(
  trx: DB,
  instanceId: string,
  owner: { type: IdentifierOwnerType; id: string },
  values: readonly string[],
  now: Date,
): Promise<string[]> {
  if (values.length === 0) return [];
  const { rows } = await sql<{ value: string }>`
    insert into identifiers (instance_id, key, value, owner_type, owner_id, created_at)
    select ${instanceId}, lower(v), v, ${owner.type}, ${owner.id}, ${now} from unnest(${[...values]}::text[]) as t(v)
    on conflict do nothing
    returning value`.execute(trx);
  const taken = new Set(rows.map((row) => row.value));
  return values.filter((value) => !taken.has(value));
}

/** Who holds each of these values (any letter case); values nobody holds are left out. */
export async function identifierHolders(db: DB, instanceId: string, values: readonly string[]): Promise<Map<string, IdentifierHolder>> {
  if (values.length === 0) return new Map();
  const rows = await db
    .selectFrom('identifiers')
    .select(['key', 'value', 'owner_type', 'owner_id'])
    .where('instance_id', '=', instanceId)
    .where('key', 'in', sql<string>`(select lower(v) from unnest(${[...values]}::text[]) as t(v))`)
    .execute();
  return new Map(rows.map((row) => [row.key, { value: row.value, ownerType: row.owner_type, ownerId: row.owner_id }]));
}
