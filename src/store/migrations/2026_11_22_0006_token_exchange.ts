/**
 * Token exchange (issue 5). Frozen in time: this file never imports application code.
 *
 * - events.audit: an event that records what happened (a token exchange) without changing any state
 *   a cache holds. The change watcher looks only at the other events, so a busy exchange endpoint
 *   does not empty every cache once per poll; the partial index keeps that max() an index lookup.
 * - tokens.exchanged_as: for a refresh token family started by a token exchange, the access token
 *   type it mints ('opaque' or 'jwt'), its audience and its actor staying those of the exchange.
 *   Null for families that started with a sign-in.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('audit', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.createIndex('events_changes_idx').on('events').column('sequence').where(sql.ref('audit'), '=', false).execute();
  await db.schema.alterTable('tokens').addColumn('exchanged_as', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('exchanged_as').execute();
  await db.schema.dropIndex('events_changes_idx').ifExists().execute();
  await db.schema.alterTable('events').dropColumn('audit').execute();
}
