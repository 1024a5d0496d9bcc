/**
 * A sign-in that owes a second factor remembers how its first factor was proven.
 *
 * - `auth_requests.first_factor_amr`: the `amr` values of the first factor (space-separated: `pwd`
 *   after a password, `fed` and what the provider said after an external identity provider), set
 *   with `otp_pending_user_id`. The step that asks for the second factor, or sets one up, ends the
 *   sign-in with these and its own. Null on requests marked before this column: a password.
 *
 * Frozen in time: this file never imports application code.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_requests').addColumn('first_factor_amr', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_requests').dropColumn('first_factor_amr').execute();
}
