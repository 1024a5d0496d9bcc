/**
 * The `outbox` table (docs/decisions.md#mail-delivery): mail written in the same transaction as
 * whatever it reports, the counts behind the mail limits, and the statements of the delivery worker
 * (mail/worker.ts), which claims due rows with `for update skip locked` so that processes on one
 * database never share a row. Times are the database's (`now()`), so every process counts and
 * schedules alike.
 */
import { sql, type Insertable } from 'kysely';
import type { DB } from './database.ts';
import type { OutboxTable } from './schema.ts';

/** Which mails a limit counts: those about one user, or those to one address (case-insensitive). */
export type MailCount = { userId: string } | { recipient: string };

/** A due row as the SMTP delivery reads it. */
export interface DueMail {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
}

/** What `sent` leaves of a row (docs/security.md 10.2): the bodies (with their codes) go. */
const WITHOUT_BODIES = { text_body: '', html_body: '' } as const;

export async function insertOutboxMail(db: DB, mail: Insertable<OutboxTable>): Promise<void> {
  await db.insertInto('outbox').values(mail).execute();
}

/**
 * The newest `limit` mails of `which` queued within the last `windowSeconds`: for each, in how many
 * seconds (rounded up) it leaves the window, newest first. Rows of the caller's transaction count too.
 */
export async function secondsLeftInMailWindow(db: DB, which: MailCount, limit: number, windowSeconds: number): Promise<number[]> {
  const window = sql<Date>`now() - make_interval(secs => ${windowSeconds})`;
  const rows = await db
    .selectFrom('outbox')
    .select(sql<number>`ceil(extract(epoch from created_at - (${window})))::int`.as('left'))
    .where((eb) => ('userId' in which ? eb('user_id', '=', which.userId) : eb(sql<string>`lower(recipient)`, '=', which.recipient.toLowerCase())))
    .where('created_at', '>', window)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.left);
}

/**
 * Serializes the transactions that queue mail to one address until they end (a transaction-level
 * advisory lock, keyed by the lower-cased address).
 */
export async function lockOutboxRecipient(trx: DB, recipient: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`outbox recipient ${recipient.toLowerCase()}`}))`.execute(trx);
}

/** Whether any unsent row of the instance is due: a plain read, no lock. */
export async function anyMailDue(db: DB, instanceId: string): Promise<boolean> {
  const due = await db
    .selectFrom('outbox')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where('sent_at', 'is', null)
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .limit(1)
    .executeTakeFirst();
  return due !== undefined;
}

/** The row due earliest, locked until `trx` ends; rows other transactions hold are skipped. */
export async function lockNextDueMail(trx: DB, instanceId: string): Promise<DueMail | undefined> {
  return trx
    .selectFrom('outbox')
    .select(['id', 'recipient', 'subject', 'text_body', 'html_body', 'attempts'])
    .where('instance_id', '=', instanceId)
    .where('sent_at', 'is', null)
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('next_attempt_at')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** Up to `limit` due rows, oldest first, locked until `trx` ends; rows other transactions hold are skipped. */
export async function lockDueMails(trx: DB, instanceId: string, limit: number): Promise<Array<Pick<DueMail, 'id' | 'recipient' | 'subject' | 'text_body'>>> {
  return trx
    .selectFrom('outbox')
    .select(['id', 'recipient', 'subject', 'text_body'])
    .where('instance_id', '=', instanceId)
    .where('sent_at', 'is', null)
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Moves a row's next attempt `seconds` ahead of now (a lease, or a retry's backoff). */
export async function postponeMail(db: DB, id: string, seconds: number): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ next_attempt_at: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where('id', '=', id)
    .execute();
}

/** Records a failed attempt: the attempt count, a short error and the next attempt `retrySeconds` from now. */
export async function recordMailFailure(db: DB, id: string, attempts: number, lastError: string, retrySeconds: number): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ attempts, last_error: lastError, next_attempt_at: sql<Date>`now() + make_interval(secs => ${retrySeconds})` })
    .where('id', '=', id)
    .execute();
}

/** Records a row as sent (docs/security.md 10.2: its bodies are removed). */
export async function markMailSent(db: DB, id: string): Promise<void> {
  await db.updateTable('outbox').set({ sent_at: sql<Date>`now()`, last_error: null, ...WITHOUT_BODIES }).where('id', '=', id).execute();
}

/** Records rows as delivered otherwise (to the log), with `note` as their last error; bodies removed too. */
export async function markMailsDelivered(db: DB, ids: readonly string[], note: string): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ sent_at: sql<Date>`now()`, last_error: note, ...WITHOUT_BODIES })
    .where('id', 'in', ids)
    .execute();
}

/** Deletes the instance's rows sent more than `keepSeconds` ago; resolves to how many went. */
export async function deleteSentMail(db: DB, instanceId: string, keepSeconds: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('instance_id', '=', instanceId)
    .where('sent_at', '<', sql<Date>`now() - make_interval(secs => ${keepSeconds})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
