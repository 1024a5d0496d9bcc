/**
 * The authenticator-app factor: one TOTP factor per user, its secret sealed with the
 * master key, and the login UI's note that a request's password was checked for a user who still
 * owes a one-time code. Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('otp_factors')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    // AES-256-GCM under the master key: the base32 secret.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('unverified', 'ready')`))
    // The last accepted 30-second time step: a code of this step or an earlier one is refused (replay).
    .addColumn('last_step', 'bigint')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The user whose password this request checked and who must still give a one-time code. Bound to
  // the user, so that naming another user afterwards does not carry the checked password over.
  await db.schema.alterTable('auth_requests').addColumn('otp_pending_user_id', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_requests').dropColumn('otp_pending_user_id').execute();
  await db.schema.dropTable('otp_factors').ifExists().execute();
}
