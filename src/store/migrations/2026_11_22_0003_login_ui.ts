/**
 * Login UI: what the login name step remembers in the authorization request.
 * Frozen in time: this file never imports application code.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The login name as the user typed it, known user or not: the password step shows it back
  // unchanged, so an unknown name looks exactly like a known one (no user enumeration).
  await db.schema.alterTable('auth_requests').addColumn('login_name', 'text').execute();
  // Failed passwords in this request. Written on every failure, known user or not, so that both
  // cost the same database write (the user's own counter is users.failed_attempts).
  await db.schema.alterTable('auth_requests').addColumn('failed_passwords', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_requests').dropColumn('failed_passwords').execute();
  await db.schema.alterTable('auth_requests').dropColumn('login_name').execute();
}
