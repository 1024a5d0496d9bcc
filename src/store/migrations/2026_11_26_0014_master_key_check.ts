/**
 * The master key is bound to the database: one row holding a check of the key everything here is
 * sealed under (an HMAC of a fixed label, under a key derived from the master key; it reveals nothing
 * of the key). The first process that uses the key writes the row; a process with another key reads
 * it and refuses to start. The migration creates the table only: it has no key to write.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('master_key_check')
    .addColumn('id', 'smallint', (c) => c.primaryKey().defaultTo(1).check(sql`id = 1`)) // one row at most
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('master_key_check').ifExists().execute();
}
