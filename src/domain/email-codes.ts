/**
 * Contact email verification codes (SPEC §3, §8): 6 characters from A–Z and 0–9, valid one hour,
 * one pending code per user (a new one replaces the previous one). Stored as sha256(salt + code)
 * with a random per-row salt (the code has only ~31 bits). A code is void after
 * EMAIL_CODE_MAX_ATTEMPTS wrong tries; the user then needs a new code.
 *
 * When the code is sent, the outbox row is written in the same transaction as the code.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { Gatehouse } from '../context.ts';
import { verificationMail } from '../mail/messages.ts';
import { renderUrlTemplate } from '../mail/template.ts';
import type { DB } from '../store/database.ts';
import { safeEqual, sha256 } from './crypto.ts';
import { appendEvent, type ChangeDetails } from './events.ts';
import { enqueueMail } from './outbox.ts';

export const EMAIL_CODE_SECONDS = 3600;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
export const EMAIL_CODE_LENGTH = 6;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export type EmailCodeResult = 'verified' | 'invalid' | 'expired' | 'not_pending';

/** The default link of the verification mail: the login UI's verification page. */
export function defaultVerifyEmailTemplate(externalUrl: string): string {
  return `${externalUrl}/ui/login/verify-email?userID={{.UserID}}&code={{.Code}}&orgID={{.OrgID}}`;
}

export function newEmailCode(): string {
  let code = '';
  for (let i = 0; i < EMAIL_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

function hashCode(salt: string, code: string): string {
  return sha256(salt + code);
}

/** Runs `fn` in a transaction, or in the one `db` already is. */
function inTransaction<T>(db: DB, fn: (trx: DB) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/**
 * Stores a new code for the user, replacing any previous one, and resolves to the code in clear.
 * `db` should be the transaction that also sends or returns it.
 */
export async function createEmailCode(db: DB, userId: string, now = new Date()): Promise<string> {
  const code = newEmailCode();
  const salt = randomBytes(16).toString('hex');
  const row = { code_hash: hashCode(salt, code), salt, expires_at: new Date(now.getTime() + EMAIL_CODE_SECONDS * 1000), created_at: now, attempts: 0 };
  await db
    .insertInto('email_codes')
    .values({ user_id: userId, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
    .execute();
  return code;
}

/** Who gets the code, as the caller loaded (and locked) the user. */
export interface EmailCodeUser {
  id: string;
  instanceId: string;
  orgId: string;
  email: string;
  preferredLanguage: string | null;
  name?: string | null;
}

export type CodeDelivery =
  /** Return the code to the caller; no mail. */
  | { kind: 'return' }
  /** Mail it, with the link rendered from `urlTemplate` (see src/mail/template.ts). */
  | { kind: 'send'; urlTemplate: string };

export interface IssuedEmailCode {
  details: ChangeDetails;
  /** The code, for `return` delivery only. */
  code?: string;
  /** The outbox row, for `send` delivery only. */
  outboxId?: string;
}

/**
 * Issues a new code and returns or mails it; appends `user.human.email.code.added`. Call it in the
 * transaction that checked the user (email set and unverified). Throws TemplateError for an invalid
 * template, which rolls the transaction back.
 */
export async function issueEmailCode(db: DB, user: EmailCodeUser, delivery: CodeDelivery, creator?: string): Promise<IssuedEmailCode> {
  return inTransaction(db, async (trx) => {
    const code = await createEmailCode(trx, user.id);
    let outboxId: string | undefined;
    if (delivery.kind === 'send') {
      const link = renderUrlTemplate(delivery.urlTemplate, { UserID: user.id, Code: code, OrgID: user.orgId });
      const mail = verificationMail({ language: user.preferredLanguage, code, link, name: user.name });
      outboxId = await enqueueMail(trx, { instanceId: user.instanceId, to: user.email, ...mail });
    }
    const details = await appendEvent(trx, {
      instanceId: user.instanceId,
      aggregateType: 'user',
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.email.code.added',
      creator,
      payload: { delivery: delivery.kind },
    });
    return delivery.kind === 'return' ? { details, code } : { details, ...(outboxId ? { outboxId } : {}) };
  });
}

export interface VerifyEmailCodeOutcome {
  result: EmailCodeResult;
  /** The `user.human.email.verified` event, when verified. */
  details?: ChangeDetails;
}

/**
 * Checks a code and, when it is right, marks the user's email verified, deletes the code and
 * appends `user.human.email.verified`. A wrong code counts an attempt; after
 * EMAIL_CODE_MAX_ATTEMPTS the code is void (every further try is 'invalid'). 'not_pending' means
 * there is no code for the user (none issued, already used, or the user is unknown).
 * With a Gatehouse, the directory cache is cleared after a verification.
 */
export async function verifyEmailCodeWithDetails(target: Gatehouse | DB, userId: string, code: string, options: { creator?: string } = {}): Promise<VerifyEmailCodeOutcome> {
  const gh = isGatehouse(target) ? target : undefined;
  const db = gh ? gh.db : (target as DB);
  const outcome = await inTransaction(db, async (trx): Promise<VerifyEmailCodeOutcome> => {
    const row = await trx
      .selectFrom('email_codes')
      .innerJoin('users', 'users.id', 'email_codes.user_id')
      .select(['email_codes.code_hash', 'email_codes.salt', 'email_codes.expires_at', 'email_codes.attempts', 'users.instance_id', 'users.org_id', 'users.email'])
      .where('email_codes.user_id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) return { result: 'not_pending' };
    if (row.attempts >= EMAIL_CODE_MAX_ATTEMPTS) return { result: 'invalid' };
    if (row.expires_at.getTime() <= Date.now()) return { result: 'expired' };
    const given = code.trim().toUpperCase();
    if (!safeEqual(hashCode(row.salt, given), row.code_hash)) {
      await trx.updateTable('email_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('user_id', '=', userId).execute();
      return { result: 'invalid' };
    }
    await trx.deleteFrom('email_codes').where('user_id', '=', userId).execute();
    await trx.updateTable('users').set({ email_verified: true, changed_at: new Date() }).where('id', '=', userId).execute();
    const details = await appendEvent(trx, {
      instanceId: row.instance_id,
      aggregateType: 'user',
      aggregateId: userId,
      resourceOwner: row.org_id,
      type: 'user.human.email.verified',
      creator: options.creator,
      payload: { email: row.email },
    });
    return { result: 'verified', details };
  });
  if (outcome.result === 'verified') gh?.directory.clear();
  return outcome;
}

/** verifyEmailCodeWithDetails without the event details: for the login UI's verification page. */
export async function verifyEmailCode(target: Gatehouse | DB, userId: string, code: string): Promise<EmailCodeResult> {
  return (await verifyEmailCodeWithDetails(target, userId, code)).result;
}

function isGatehouse(target: Gatehouse | DB): target is Gatehouse {
  return 'directory' in target && 'config' in target;
}
