/**
 * Contact email verification codes: 6 characters from A–Z and 0–9, valid one hour, one pending code
 * per user (a new one replaces the previous one), void after EMAIL_CODE_MAX_ATTEMPTS wrong tries;
 * the user then needs a new code. How codes are drawn, stored, tried and mailed: one-time-codes.ts.
 *
 * A code has an id, which the default mailed link carries beside it. The verification page takes
 * tries from anyone for any user, so only a try that presents the id counts towards the code's
 * tries; tries without it count on a small counter of their own that stops only further tries
 * without it, so a stranger can neither void a user's code nor keep its link from working. Every
 * try is also one of the client address's tries (secret-tries.ts).
 *
 * The address is not verified yet, so the mail carries nothing the user chose (no name in the
 * greeting). An administrator whose word does not count for the address gets no code back: it is
 * mailed to the address instead (address-holders.ts).
 */
import { verificationMail } from '../../mail/messages.ts';
import { inTransaction, type DB } from '../../store/database.ts';
import { countEmailCodeAttempt, deleteEmailCode, findEmailCodeForUpdate, upsertEmailCode, type PendingEmailCodeRow } from '../../store/email-codes.ts';
import { markEmailVerified } from '../../store/users.ts';
import { addressBeyond, type Voucher } from './address-holders.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { secretTry } from '../sign-in/secret-tries.ts';
import type { Directory } from '../instance/directory.ts';
import {
  CAPITALS_AND_DIGITS,
  checkMailLimits,
  drawCode,
  issueCode,
  MailLimitReached,
  storeNewCode,
  tryCode,
  type CodeDelivery,
  type CodeKind,
  type CodeUser,
} from './one-time-codes.ts';

export { CODE_MAILS_PER_RECIPIENT, CODE_MAILS_PER_USER, checkMailLimits, MailLimitReached } from './one-time-codes.ts';
export type { CodeDelivery } from './one-time-codes.ts';
/** Who gets the code, as the caller loaded (and locked) the user. */
export type EmailCodeUser = CodeUser;

export const EMAIL_CODE_SECONDS = 3600;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
/** Wrong tries without the code's id after which such tries are refused unchecked (the code stays valid). */
export const EMAIL_CODE_MAX_ANONYMOUS_ATTEMPTS = 5;
export const EMAIL_CODE_LENGTH = 6;

export type EmailCodeResult = 'verified' | 'invalid' | 'expired' | 'not_pending';

/** The default link of the verification mail: the login UI's verification page, with the code's id. */
export function defaultVerifyEmailTemplate(externalUrl: string): string {
  return `${externalUrl}/ui/login/verify-email?userID={{.UserID}}&code={{.Code}}&orgID={{.OrgID}}&codeID={{.CodeID}}`;
}

const EMAIL_CODE: CodeKind<PendingEmailCodeRow, string, string> = {
  alphabet: CAPITALS_AND_DIGITS,
  length: EMAIL_CODE_LENGTH,
  lifetimeSeconds: EMAIL_CODE_SECONDS,
  maxTries: EMAIL_CODE_MAX_ATTEMPTS,
  newId,
  withoutId: { countApartUpTo: EMAIL_CODE_MAX_ANONYMOUS_ATTEMPTS },
  table: { save: upsertEmailCode, findForUpdate: findEmailCodeForUpdate, countWrongTry: countEmailCodeAttempt, remove: deleteEmailCode },
  addedEvent: 'user.human.email.code.added',
  defaultLink: defaultVerifyEmailTemplate,
  // The address is not verified yet: no name the user chose goes to it.
  mail: (user, { code }, link) => verificationMail({ language: user.preferredLanguage, code, link }),
};

/**
 * Stores a new code for the user, replacing any previous one, and resolves to the code in clear.
 * `db` should be the transaction that also sends or returns it.
 */
export async function createEmailCode(db: DB, userId: string, now = new Date()): Promise<string> {
  return (await storeNewCode(db, EMAIL_CODE, userId, now)).code;
}

export interface IssueContext {
  /** GATEHOUSE_EXTERNAL_URL: the default link, and an origin links may always lead to. */
  externalUrl: string;
  /** Who asks (the event's creator), when not the user itself. */
  creator?: string | undefined;
  /** For `return` delivery: whose addresses the caller may have a code of (address-holders.ts); any when absent. */
  voucher?: Voucher | undefined;
}

export interface IssuedEmailCode {
  details: ChangeDetails;
  /** The code, for `return` delivery only. */
  code?: string;
  /** The outbox row, for `send` delivery only. */
  outboxId?: string;
}

/**
 * Issues a new code and returns or mails it; appends `user.human.email.code.added`. Call it in the
 * transaction that checked (and locked) the user: email set and unverified. Throws TemplateError
 * for an invalid template or a link leading elsewhere, and MailLimitReached over a mail limit;
 * either rolls the transaction back, so the previous code stays pending.
 */
export async function issueEmailCode(db: DB, user: EmailCodeUser, asked: CodeDelivery, context: IssueContext): Promise<IssuedEmailCode> {
  return inTransaction(db, async (trx) => {
    const plan = await planDelivery(trx, user, asked, context);
    const issued = await issueCode(trx, EMAIL_CODE, user, plan.delivery, {
      externalUrl: context.externalUrl,
      creator: context.creator,
      now: new Date(),
      payload: () => ({ delivery: plan.withheld ? 'withheld' : asked.kind }),
      limitsChecked: plan.withheld,
    });
    const { details } = issued;
    const outbox = issued.outboxId === undefined ? {} : { outboxId: issued.outboxId };
    if (asked.kind === 'send') return { details, ...outbox };
    // a withheld code's caller gets one of the same shape that verifies nothing
    return { details, code: plan.withheld ? drawCode(EMAIL_CODE) : issued.code.code, ...outbox };
  });
}

/**
 * How a code travels. Asked to be mailed: mailed. Asked to be returned: returned, unless the caller
 * is an administrator whose word does not count for the address (address-holders.ts); then it is
 * withheld from the caller and mailed to the address instead (unless a mail limit is reached, when
 * it goes nowhere), and the answer looks the same.
 */
async function planDelivery(trx: DB, user: EmailCodeUser, asked: CodeDelivery, context: IssueContext): Promise<{ delivery: CodeDelivery; withheld: boolean }> {
  if (asked.kind === 'send') return { delivery: asked, withheld: false };
  if (context.voucher === undefined || !(await addressBeyond(trx, user, user.email, context.voucher))) return { delivery: asked, withheld: false };
  try {
    await checkMailLimits(trx, user); // checked here, so issuing does not check them again
    return { delivery: { kind: 'send' }, withheld: true };
  } catch (error) {
    if (error instanceof MailLimitReached) return { delivery: asked, withheld: true };
    throw error;
  }
}

export interface VerifyEmailCodeOutcome {
  result: EmailCodeResult;
  /** The `user.human.email.verified` event, when verified. */
  details?: ChangeDetails;
}

/**
 * Who tries a code. An authenticated caller (the user itself or its administrator, through the API)
 * is no stranger to the user: its tries count towards the code's tries. At the verification page
 * anyone may try any user's code: a try counts towards the code's tries only when it presents the
 * code's id from the mailed link (`codeId`); other tries count separately (see the file's comment).
 */
export type TriedBy = { by: 'caller' } | { by: 'page'; codeId: string | undefined };

/**
 * Checks a code and, when it is right, marks the user's email verified, deletes the code and
 * appends `user.human.email.verified`. A wrong code counts a try (see TriedBy); after
 * EMAIL_CODE_MAX_ATTEMPTS the code is void (every further try is 'invalid'), after
 * EMAIL_CODE_MAX_ANONYMOUS_ATTEMPTS tries without the id only those are. 'not_pending' means there is
 * no code for the user (none issued, already used, or the user is unknown). Every try is one of the
 * client address's tries (Throttled past the limit, nothing checked). With a directory, its cache is
 * cleared after a verification.
 */
export async function verifyEmailCodeWithDetails(
  target: CodeVerifier | DB,
  userId: string,
  code: string,
  options: { creator?: string; via?: TriedBy } = {},
): Promise<VerifyEmailCodeOutcome> {
  const verifier = isVerifier(target) ? target : undefined;
  const db = verifier ? verifier.db : (target as DB);
  const via = options.via ?? { by: 'caller' };
  const outcome = await secretTry(
    () => inTransaction(db, (trx) => verifyInTransaction(trx, userId, code, via, options.creator)),
    (checked) => checked.result !== 'verified',
  );
  if (outcome.result === 'verified') verifier?.directory.clear();
  return outcome;
}

const RESULTS = { wrong: 'invalid', expired: 'expired', missing: 'not_pending' } as const;

async function verifyInTransaction(trx: DB, userId: string, code: string, via: TriedBy, creator: string | undefined): Promise<VerifyEmailCodeOutcome> {
  const given = via.by === 'caller' ? { code, authenticated: true } : { code, codeId: via.codeId };
  const checked = await tryCode(trx, EMAIL_CODE, userId, given, new Date());
  if (checked.result !== 'right') return { result: RESULTS[checked.result] };
  const { row } = checked;
  await markEmailVerified(trx, userId, new Date());
  const details = await appendEvent(trx, {
    instanceId: row.instance_id,
    aggregateId: userId,
    resourceOwner: row.org_id,
    type: 'user.human.email.verified',
    creator,
    payload: { email: row.email },
  });
  return { result: 'verified', details };
}

/**
 * verifyEmailCodeWithDetails for the login UI's verification page, without the event details: a
 * try of anyone, which counts towards the code's tries only with the code's id from the link.
 */
export async function verifyEmailCode(target: CodeVerifier | DB, userId: string, code: string, codeId?: string): Promise<EmailCodeResult> {
  return (await verifyEmailCodeWithDetails(target, userId, code, { via: { by: 'page', codeId } })).result;
}

/** What verifying a code uses beside the database: the directory whose cache a verification changes. */
export interface CodeVerifier {
  db: DB;
  directory: Pick<Directory, 'clear'>;
}

function isVerifier(target: CodeVerifier | DB): target is CodeVerifier {
  return 'directory' in target && 'db' in target;
}
