/**
 * Changing a human user's contact email (`users.email`, docs/security.md 10.1): the write both the
 * v3alpha contact email calls and zitadel.user.v2 SetEmail make. The address is stored with its
 * verified flag and `user.human.email.changed` appended; an address an administrator vouched for
 * is verified at once (`user.human.email.verified`, any pending code dropped), any other gets a
 * new code, mailed or returned (domain/email-codes.ts).
 *
 * The caller has checked who may do what (docs/security.md 10.1) and holds the user's row lock.
 *
 * Whose word counts (vouchedChange, address-holders.ts): an instance-wide administrator vouches for
 * any address; an organization's administrator only for an address no user outside its
 * organizations has. Otherwise the address is stored unverified and a code is mailed to it, with the
 * answer a vouch gets, so the owner does not learn that the address is taken either.
 */
import { deleteEmailCode } from '../../store/email-codes.ts';
import type { DB } from '../../store/database.ts';
import { setUserEmail } from '../../store/users.ts';
import { addressBeyond, type Voucher } from '../credentials/address-holders.ts';
import { checkMailLimits, issueEmailCode, MailLimitReached, type CodeDelivery, type EmailCodeUser, type IssueContext, type IssuedEmailCode } from '../credentials/email-codes.ts';
import { appendEvent } from '../kernel/events.ts';

export type EmailChange =
  /** Verified by an administrator's word: no code. */
  | { address: string; verified: true }
  /** Unverified, with a code delivered as said, or no code now (`undefined`: a vouch that did not count, past the mail limits). */
  | { address: string; verified: false; delivery: CodeDelivery | undefined };

/**
 * What an administrator's `isVerified` for `address` becomes (see the module comment): verified, or
 * unverified with a code mailed to the address (none when a mail limit is reached, rather than an
 * answer that differs).
 */
export async function vouchedChange(trx: DB, user: Pick<EmailCodeUser, 'id' | 'instanceId' | 'orgId' | 'preferredLanguage'>, address: string, voucher: Voucher): Promise<EmailChange> {
  if (!(await addressBeyond(trx, user, address, voucher))) return { address, verified: true };
  try {
    await checkMailLimits(trx, { ...user, email: address });
    return { address, verified: false, delivery: { kind: 'send' } };
  } catch (error) {
    if (error instanceof MailLimitReached) return { address, verified: false, delivery: undefined };
    throw error;
  }
}

export async function changeContactEmail(trx: DB, user: EmailCodeUser, change: EmailChange, context: IssueContext, now = new Date()): Promise<IssuedEmailCode> {
  await setUserEmail(trx, user.id, change.address, change.verified, now);
  const event = { instanceId: user.instanceId, aggregateId: user.id, resourceOwner: user.orgId, creator: context.creator, payload: { email: change.address } };
  const changed = await appendEvent(trx, { ...event, type: 'user.human.email.changed' });
  if (!change.verified) {
    if (change.delivery === undefined) return { details: changed };
    return issueEmailCode(trx, { ...user, email: change.address }, change.delivery, context);
  }
  await deleteEmailCode(trx, user.id);
  return { details: await appendEvent(trx, { ...event, type: 'user.human.email.verified' }) };
}

export type { Voucher } from '../credentials/address-holders.ts';
