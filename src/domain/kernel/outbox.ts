/**
 * The mail outbox (docs/decisions.md#mail-delivery): a message is a row written in the same
 * transaction as whatever it reports (a verification code, ...); the delivery worker sends due rows
 * and records the outcome. Sent rows keep recipient, subject and times only (docs/security.md 10.2),
 * which is what the mail limits count: the outbox is durable and shared by every process on the
 * database.
 */
import type { DB } from '../../store/database.ts';
import { insertOutboxMail, lockOutboxRecipient, secondsLeftInMailWindow, type MailCount } from '../../store/outbox.ts';
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
  /** The user the mail is about (whose code it carries), for the per-user limit. */
  userId?: string | undefined;
}

/** Queues a message for delivery; `db` may be a transaction. Resolves to the outbox row's id. */
export async function enqueueMail(db: DB, mail: OutgoingMail): Promise<string> {
  const id = newId();
  await insertOutboxMail(db, {
    id,
    instance_id: mail.instanceId,
    recipient: mail.to,
    subject: mail.subject,
    text_body: mail.text,
    html_body: mail.html,
    user_id: mail.userId ?? null,
  });
  return id;
}

/** Which mails a limit counts (the type lives beside its statement). */
export type { MailCount };

/**
 * Whether `limit` mails of `which` were queued within the last `windowSeconds` (database time, so
 * every process counts alike) and, if so, in how many seconds the oldest of those leaves the window.
 * Mails queued earlier in the caller's transaction count too.
 */
export async function mailLimitReached(db: DB, which: MailCount, limit: number, windowSeconds: number): Promise<{ retryAfterSeconds: number } | undefined> {
  const left = await secondsLeftInMailWindow(db, which, limit, windowSeconds);
  if (left.length < limit) return undefined;
  return { retryAfterSeconds: Math.max(1, left[left.length - 1]!) };
}

/**
 * Serializes the transactions that queue mail to one address until they end (a transaction-level
 * advisory lock), so that concurrent requests for different users cannot both pass the
 * per-recipient count. The per-user count is serialized by the caller's lock on the user row.
 */
export async function lockRecipient(db: DB, recipient: string): Promise<void> {
  await lockOutboxRecipient(db, recipient);
}
