/**
 * The `events` table: one row per change, appended in the same transaction as the change, and the
 * reads of the change watcher (the last sequence, the changes among the last sequence numbers).
 */
import type { Insertable } from 'kysely';
import type { DB } from './database.ts';
import type { EventsTable } from './schema.ts';

/** Appends one event; resolves to its global sequence and time. `db` may be a transaction. */
export async function insertEvent(db: DB, event: Insertable<EventsTable>): Promise<{ sequence: string; created_at: Date }> {
  return db.insertInto('events').values(event).returning(['sequence', 'created_at']).executeTakeFirstOrThrow();
}

/** The highest sequence of an event that changed state (audit records excluded; events_changes_idx answers it), or null. */
export async function maxChangeSequence(db: DB): Promise<string | null> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('sequence').as('max'))
    .where('audit', '=', false)
    .executeTakeFirst();
  return row?.max === null || row?.max === undefined ? null : String(row.max);
}

/** How many events that changed state have a sequence above `sequence`. */
export async function countChangesAbove(db: DB, sequence: string): Promise<string> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('audit', '=', false)
    .where('sequence', '>', sequence)
    .executeTakeFirst();
  return String(row?.count ?? 0);
}

/** The last `instance.features.*` event of the instance, or undefined before any feature change. */
export async function findLastFeatureEvent(db: DB, instanceId: string): Promise<{ sequence: string; created_at: Date; resource_owner: string } | undefined> {
  return db
    .selectFrom('events')
    .select(['sequence', 'created_at', 'resource_owner'])
    .where('aggregate_type', '=', 'instance')
    .where('aggregate_id', '=', instanceId)
    .where('event_type', 'like', 'instance.features.%')
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
}
