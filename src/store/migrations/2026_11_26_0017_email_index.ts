/**
 * Users by email address, in any letter case: an organization's administrator vouches for an
 * address only while no user outside its organizations holds it, which is asked at every such
 * vouch; the lists' email filters use the same expression.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index users_email_lower_idx on users (instance_id, lower(email)) where email is not null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_email_lower_idx').ifExists().execute();
}
