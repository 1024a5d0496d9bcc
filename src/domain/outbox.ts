/**
 * The mail outbox (SPEC §8): a message is a row written in the same transaction as whatever it
 * reports (a verification code, ...); the delivery worker sends due rows and records the outcome.
 */
import type { DB } from '../store/database.ts';
import { newId } from './ids.ts';

export interface OutgoingMail {
  instanceId: string;
  /** One recipient address. */
  to: string;
  subject: string;
  /** The plain-text body. */
  text: string;
  /** The HTML body (already escaped). */
  html: string;
}

/** Queues a message for delivery; `db` may be a transaction. Resolves to the outbox row's id. */
export async function enqueueMail(db: DB, mail: OutgoingMail): Promise<string> {
  const id = newId();
  await db
    .insertInto('outbox')
    .values({
      id,
      instance_id: mail.instanceId,
      recipient: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
    })
    .execute();
  return id;
}
