/**
 * Mail limits and mail at rest (docs/security.md 10.2).
 *
 * - `outbox.user_id`: whose code a mail carries, so that code mails can be counted per user
 *   (5 an hour) as well as per recipient address (3 in 10 minutes), from the outbox itself: durable,
 *   and the same count for every process on the database. Rows written before have no user.
 * - Indexes for both counts (recipients compared case-insensitively).
 * - Bodies of mail already sent are removed (only recipient, subject and times are kept), as the
 *   worker does from now on for each mail it sends. Rows an SMTP-less worker logged before are
 *   treated the same way: the log line was their delivery.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

const LOGGED_BEFORE = 'not sent: no SMTP server configured (message logged)';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('user_id', 'text').execute();
  await db.schema.createIndex('outbox_user_created_idx').on('outbox').columns(['user_id', 'created_at']).execute();
  await sql`create index outbox_recipient_created_idx on outbox (lower(recipient), created_at)`.execute(db);
  await db
    .updateTable('outbox')
    .set({ sent_at: sql`now()` })
    .where('sent_at', 'is', null)
    .where('last_error', '=', LOGGED_BEFORE)
    .execute();
  await db.updateTable('outbox').set({ text_body: '', html_body: '' }).where('sent_at', 'is not', null).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_recipient_created_idx').ifExists().execute();
  await db.schema.dropIndex('outbox_user_created_idx').ifExists().execute();
  await db.schema.alterTable('outbox').dropColumn('user_id').execute();
}
