/**
 * Changing a human user's contact email (`users.email`, SPEC §3, §8, 10.1): the write both the
 * v3alpha contact email calls and zitadel.user.v2 SetEmail make. The address is stored with its
 * verified flag and `user.human.email.changed` appended; an address an administrator vouched for
 * is verified at once (`user.human.email.verified`, any pending code dropped), any other gets a
 * new code, mailed or returned (domain/email-codes.ts).
 *
 * The caller has checked who may do what (SPEC 10.1) and holds the user's row lock.
 */
import { deleteEmailCode } from '../store/email-codes.ts';
import type { DB } from '../store/database.ts';
import { setUserEmail } from '../store/users.ts';
import { issueEmailCode, type CodeDelivery, type EmailCodeUser, type IssueContext, type IssuedEmailCode } from './email-codes.ts';
import { appendEvent } from './events.ts';

export type EmailChange =
  /** Verified by an administrator's word: no code. */
  | { address: string; verified: true }
  | { address: string; verified: false; delivery: CodeDelivery };

export async function changeContactEmail(trx: DB, user: EmailCodeUser, change: EmailChange, context: IssueContext, now = new Date()): Promise<IssuedEmailCode> {
  await setUserEmail(trx, user.id, change.address, change.verified, now);
  const event = { instanceId: user.instanceId, aggregateType: 'user', aggregateId: user.id, resourceOwner: user.orgId, creator: context.creator, payload: { email: change.address } };
  await appendEvent(trx, { ...event, type: 'user.human.email.changed' });
  if (!change.verified) return issueEmailCode(trx, { ...user, email: change.address }, change.delivery, context);
  await deleteEmailCode(trx, user.id);
  return { details: await appendEvent(trx, { ...event, type: 'user.human.email.verified' }) };
}
