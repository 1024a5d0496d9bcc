/**
 * Self-registrations, counted per client address and per instance for their hourly limits.
 *
 * One row per registered user: the instance, the key of the client address it registered from (an
 * IPv4 address or an IPv6 /64) and when. Counted from the database, so that every process on it and
 * every restart sees the same count; rows older than the limits' hour are deleted by the next
 * registration of the instance, so addresses are kept no longer than the limits need them.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('registrations')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('registrations_address_idx').on('registrations').columns(['instance_id', 'address', 'created_at']).execute();
  await db.schema.createIndex('registrations_created_idx').on('registrations').columns(['instance_id', 'created_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('registrations').ifExists().execute();
}
