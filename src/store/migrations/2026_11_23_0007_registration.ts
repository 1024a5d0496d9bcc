/**
 * Registration and browser sessions (docs/security.md 10.7, 10.12). Frozen in time: this file never
 * imports application code.
 *
 * - orgs.allow_register: whether self-registration may create users in the organization; null
 *   means the default (allowed for the instance's default organization only).
 * - users_instance_name_idx: user names looked up across the instance, case-insensitively (a short
 *   login name at sign-in; registration refusing a name any user already has).
 * - auth_requests_browser_idx: a completed sign-in moves the browser's pending requests to its new
 *   cookie by browser hash.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('orgs').addColumn('allow_register', 'boolean').execute();
  await sql`create index users_instance_name_idx on users (instance_id, lower(user_name))`.execute(db);
  await db.schema.createIndex('auth_requests_browser_idx').on('auth_requests').column('browser_hash').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('auth_requests_browser_idx').ifExists().execute();
  await db.schema.dropIndex('users_instance_name_idx').ifExists().execute();
  await db.schema.alterTable('orgs').dropColumn('allow_register').execute();
}
