/**
 * Ids for contact email codes, so that a stranger cannot use up someone else's code.
 *
 * - `email_codes.id`: the pending code's id, which the default mailed link carries beside the code.
 *   At the login UI's verification page only a try that presents it counts towards the code's five
 *   tries (`attempts`). Codes issued before have none: their links work as tries without an id.
 * - `email_codes.anonymous_attempts`: wrong tries without the id. They have a small limit of their
 *   own, which stops only further tries without the id, so the user's own link keeps working.
 *
 * Frozen in time: this file never imports application code.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('email_codes')
    .addColumn('id', 'text')
    .addColumn('anonymous_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_codes').dropColumn('anonymous_attempts').dropColumn('id').execute();
}
