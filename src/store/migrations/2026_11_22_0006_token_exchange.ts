/**
 * Token exchange. Frozen in time: this file never imports application code.
 *
 * - events.audit: an event that records what happened (a token exchange) without changing any state
 *   a cache holds. The change watcher looks only at the other events, so a busy exchange endpoint
 *   does not empty every cache once per poll; the partial index keeps that max() an index lookup.
 * - tokens.exchanged_as: for refresh tokens issued by a token exchange, the access token type they
 *   mint ('opaque' or 'jwt'), their audience and actor staying those of the exchange. Null for
 *   refresh tokens of a sign-in.
 * - tokens.impersonation: refresh tokens of an impersonation, whose actor must still be allowed to
 *   impersonate the subject at every refresh.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('audit', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.createIndex('events_changes_idx').on('events').column('sequence').where(sql.ref('audit'), '=', false).execute();
  await db.schema.alterTable('tokens').addColumn('exchanged_as', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('impersonation', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('impersonation').execute();
  await db.schema.alterTable('tokens').dropColumn('exchanged_as').execute();
  await db.schema.dropIndex('events_changes_idx').ifExists().execute();
  await db.schema.alterTable('events').dropColumn('audit').execute();
}
