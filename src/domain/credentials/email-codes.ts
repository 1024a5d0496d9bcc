/**
 * Contact email verification codes (SPEC §3, §8): 6 characters from A–Z and 0–9, valid one hour,
 * one pending code per user (a new one replaces the previous one). Stored as sha256(salt + code)
 * with a random per-row salt (the code has only ~31 bits). A code is void after
 * EMAIL_CODE_MAX_ATTEMPTS wrong tries; the user then needs a new code.
 *
 * A code has an id, which the default mailed link carries beside it. The verification page takes
 * tries from anyone for any user, so only a try that presents the id counts towards the code's
 * tries; tries without it count on a small counter of their own that stops only further tries
 * without it, so a stranger can neither void a user's code nor keep its link from working. Every
 * try is also one of the client address's tries (secret-tries.ts).
 *
 * When the code is sent, the outbox row is written in the same transaction as the code. SPEC 10.2
 * keeps the mail from serving as a relay for someone else's message: its link must lead to Gatehouse
 * or to an application of the user's organization, and code mails are limited per user and per
 * recipient address. A mail refused by a limit leaves the pending code as it was. The address is not
 * verified yet, so the mail carries nothing the user chose (no name in the greeting).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { httpOrigin } from '../kernel/origin.ts';
import { verificationMail } from '../../mail/messages.ts';
import { renderUrlTemplate, TemplateError } from '../../mail/template.ts';
import { listOrgRedirectUris } from '../../store/apps.ts';
import { inTransaction, type DB } from '../../store/database.ts';
import { countEmailCodeAttempt, deleteEmailCode, findEmailCodeForUpdate, upsertEmailCode } from '../../store/email-codes.ts';
import { markEmailVerified } from '../../store/users.ts';
import { safeEqual, sha256 } from '../kernel/crypto.ts';
import { addressBeyond, type Voucher } from './address-holders.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { enqueueMail, lockRecipient, mailLimitReached, type MailCount } from '../kernel/outbox.ts';
import { secretTry } from '../sign-in/secret-tries.ts';
import type { Directory } from '../instance/directory.ts';

export const EMAIL_CODE_SECONDS = 3600;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
/** Wrong tries without the code's id after which such tries are refused unchecked (the code stays valid). */
export const EMAIL_CODE_MAX_ANONYMOUS_ATTEMPTS = 5;
export const EMAIL_CODE_LENGTH = 6;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export type EmailCodeResult = 'verified' | 'invalid' | 'expired' | 'not_pending';

/** SPEC 10.2: code mails per user per hour, and per recipient address per 10 minutes. */
export const CODE_MAILS_PER_USER = { limit: 5, windowSeconds: 3600 } as const;
export const CODE_MAILS_PER_RECIPIENT = { limit: 3, windowSeconds: 600 } as const;

/** A code mail over a limit of SPEC 10.2: nothing was changed, the pending code stays valid. */
export class MailLimitReached extends Error {
  override name = 'MailLimitReached';
  /** Which limit: mails about this user, or mails to this address. */
  readonly scope: 'user' | 'recipient';
  readonly retryAfterSeconds: number;
  constructor(scope: 'user' | 'recipient', retryAfterSeconds: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
    // One wording for both limits: telling which one was reached would tell a caller that someone
    // else had mail sent to an address lately (the per-recipient count spans every user).
    super(
      `too many code mails (at most ${CODE_MAILS_PER_USER.limit} an hour for a user, ${CODE_MAILS_PER_RECIPIENT.limit} in 10 minutes to an address): try again in ${minutes} minute(s)`,
    );
    this.scope = scope;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** `{{.CodeID}}`: the code's id, in the links Gatehouse writes itself (and passkey links). */
const CODE_ID_ACTION = /\{\{ *\.CodeID *\}\}/g;

/**
 * The template with `{{.CodeID}}` filled in, before src/mail/template.ts renders the rest (it knows
 * only the fields API callers may use). Code ids are decimal digits: nothing to encode, nothing
 * that could add to the URL's shape.
 */
export function fillCodeId(template: string, codeId: string): string {
  return template.replace(CODE_ID_ACTION, codeId);
}

/** The default link of the verification mail: the login UI's verification page, with the code's id. */
export function defaultVerifyEmailTemplate(externalUrl: string): string {
  return `${externalUrl}/ui/login/verify-email?userID={{.UserID}}&code={{.Code}}&orgID={{.OrgID}}&codeID={{.CodeID}}`;
}

export function newEmailCode(): string {
  let code = '';
  for (let i = 0; i < EMAIL_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

function hashCode(salt: string, code: string): string {
  return sha256(salt + code);
}

/** Stores a new code for the user, replacing any previous one; resolves to the code in clear and its id. */
async function storeNewCode(db: DB, userId: string, now: Date): Promise<{ id: string; code: string }> {
  const id = newId();
  const code = newEmailCode();
  const salt = randomBytes(16).toString('hex');
  await upsertEmailCode(db, userId, { id, code_hash: hashCode(salt, code), salt, expires_at: new Date(now.getTime() + EMAIL_CODE_SECONDS * 1000), created_at: now });
  return { id, code };
}

/**
 * Stores a new code for the user, replacing any previous one, and resolves to the code in clear.
 * `db` should be the transaction that also sends or returns it.
 */
export async function createEmailCode(db: DB, userId: string, now = new Date()): Promise<string> {
  return (await storeNewCode(db, userId, now)).code;
}

/** Who gets the code, as the caller loaded (and locked) the user. */
export interface EmailCodeUser {
  id: string;
  instanceId: string;
  orgId: string;
  email: string;
  preferredLanguage: string | null;
  /** How to greet the user, in mail to a verified address only (password reset, passkey links). */
  name?: string | null;
}

export type CodeDelivery =
  /** Return the code to the caller; no mail. */
  | { kind: 'return' }
  /**
   * Mail it, with the link rendered from `urlTemplate` (see src/mail/template.ts); without one,
   * the login UI's verification page.
   */
  | { kind: 'send'; urlTemplate?: string | undefined };

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
 * SPEC 10.2: the origins a verification link may lead to: Gatehouse's own, and those of the redirect
 * URIs registered on the applications of the user's organization (the user's own apps, whose pages
 * may take the code). Redirect URIs without an http(s) origin (custom schemes) add none.
 */
async function mailLinkOrigins(db: DB, externalUrl: string, user: Pick<EmailCodeUser, 'instanceId' | 'orgId'>): Promise<Set<string>> {
  const redirectUris = await listOrgRedirectUris(db, user.instanceId, user.orgId);
  const origins = new Set([new URL(externalUrl).origin]);
  for (const uri of redirectUris.flat()) {
    const origin = httpOrigin(uri);
    if (origin !== undefined) origins.add(origin);
  }
  return origins;
}

/**
 * A code mail's rendered link, when it leads where SPEC 10.2 allows; else TemplateError. Every code
 * mail (verification, password reset, passkey registration) checks its link here.
 */
export async function checkMailLink(db: DB, externalUrl: string, user: Pick<EmailCodeUser, 'instanceId' | 'orgId'>, link: string): Promise<string> {
  if (!(await mailLinkOrigins(db, externalUrl, user)).has(new URL(link).origin)) {
    throw new TemplateError("url template must lead to this server or to the origin of a redirect URI of an application of the user's organization");
  }
  return link;
}

/** The link of the mail: rendered from the template, and leading only where SPEC 10.2 allows. */
function verificationLink(db: DB, user: EmailCodeUser, issued: { id: string; code: string }, template: string | undefined, externalUrl: string): Promise<string> {
  const filled = fillCodeId(template ?? defaultVerifyEmailTemplate(externalUrl), issued.id);
  return checkMailLink(db, externalUrl, user, renderUrlTemplate(filled, { UserID: user.id, Code: issued.code, OrgID: user.orgId }));
}

/**
 * SPEC 10.2: refuses (MailLimitReached) a code mail over the per-user or per-recipient limit,
 * counted over every code mail (verification, password reset, passkey registration alike).
 */
export async function checkMailLimits(db: DB, user: EmailCodeUser): Promise<void> {
  await lockRecipient(db, user.email);
  const limits: Array<[MailLimitReached['scope'], MailCount, { limit: number; windowSeconds: number }]> = [
    ['user', { userId: user.id }, CODE_MAILS_PER_USER],
    ['recipient', { recipient: user.email }, CODE_MAILS_PER_RECIPIENT],
  ];
  for (const [scope, which, { limit, windowSeconds }] of limits) {
    const reached = await mailLimitReached(db, which, limit, windowSeconds);
    if (reached) throw new MailLimitReached(scope, reached.retryAfterSeconds);
  }
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
    if (plan.mail && !plan.withheld) await checkMailLimits(trx, user);
    const issued = await storeNewCode(trx, user.id, new Date());
    const { code } = issued;
    let outboxId: string | undefined;
    if (plan.mail) {
      const link = await verificationLink(trx, user, issued, asked.kind === 'send' ? asked.urlTemplate : undefined, context.externalUrl);
      // The address is not verified yet: no name the user chose goes to it.
      const mail = verificationMail({ language: user.preferredLanguage, code, link });
      outboxId = await enqueueMail(trx, { instanceId: user.instanceId, to: user.email, userId: user.id, ...mail });
    }
    const details = await appendEvent(trx, {
      instanceId: user.instanceId,
      aggregateType: 'user',
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.email.code.added',
      creator: context.creator,
      payload: { delivery: plan.withheld ? 'withheld' : asked.kind },
    });
    if (asked.kind === 'send') return { details, ...(outboxId ? { outboxId } : {}) };
    // a withheld code's caller gets one of the same shape that verifies nothing
    return { details, code: plan.withheld ? newEmailCode() : code, ...(outboxId ? { outboxId } : {}) };
  });
}

/**
 * How a code travels. Asked to be mailed: mailed. Asked to be returned: returned, unless the caller
 * is an administrator whose word does not count for the address (address-holders.ts); then it is
 * withheld from the caller and mailed to the address instead (unless a mail limit is reached, when
 * it goes nowhere), and the answer looks the same.
 */
async function planDelivery(trx: DB, user: EmailCodeUser, asked: CodeDelivery, context: IssueContext): Promise<{ mail: boolean; withheld: boolean }> {
  if (asked.kind === 'send') return { mail: true, withheld: false };
  if (context.voucher === undefined || !(await addressBeyond(trx, user, user.email, context.voucher))) return { mail: false, withheld: false };
  try {
    await checkMailLimits(trx, user);
    return { mail: true, withheld: true };
  } catch (error) {
    if (error instanceof MailLimitReached) return { mail: false, withheld: true };
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
export type CodeTry = { by: 'caller' } | { by: 'page'; codeId: string | undefined };

/**
 * Checks a code and, when it is right, marks the user's email verified, deletes the code and
 * appends `user.human.email.verified`. A wrong code counts a try (see CodeTry); after
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
  options: { creator?: string; via?: CodeTry } = {},
): Promise<VerifyEmailCodeOutcome> {
  const verifier = isVerifier(target) ? target : undefined;
  const db = verifier ? verifier.db : (target as DB);
  const via = options.via ?? { by: 'caller' };
  const outcome = await secretTry(
    () => inTransaction(db, (trx) => checkCode(trx, userId, code, via, options.creator)),
    (checked) => checked.result !== 'verified',
  );
  if (outcome.result === 'verified') verifier?.directory.clear();
  return outcome;
}

async function checkCode(trx: DB, userId: string, code: string, via: CodeTry, creator: string | undefined): Promise<VerifyEmailCodeOutcome> {
  const row = await findEmailCodeForUpdate(trx, userId);
  if (row === undefined) return { result: 'not_pending' };
  const linked = via.by === 'caller' || (via.codeId !== undefined && row.id !== null && safeEqual(row.id, via.codeId));
  if (row.attempts >= EMAIL_CODE_MAX_ATTEMPTS) return { result: 'invalid' };
  if (!linked && row.anonymous_attempts >= EMAIL_CODE_MAX_ANONYMOUS_ATTEMPTS) return { result: 'invalid' };
  if (row.expires_at.getTime() <= Date.now()) return { result: 'expired' };
  const given = code.trim().toUpperCase();
  if (!safeEqual(hashCode(row.salt, given), row.code_hash)) {
    await countEmailCodeAttempt(trx, userId, linked ? 'attempts' : 'anonymous_attempts');
    return { result: 'invalid' };
  }
  await deleteEmailCode(trx, userId);
  await markEmailVerified(trx, userId, new Date());
  const details = await appendEvent(trx, {
    instanceId: row.instance_id,
    aggregateType: 'user',
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
