/**
 * Passwords set through the management API and the reset codes that allow it (zitadel.user.v2
 * PasswordReset and SetPassword's `verification_code`). The login UI has no "forgot password" page,
 * so a code is used with SetPassword; a mailed code carries a link only when the caller gave a URL
 * template (its application's page that takes the code).
 *
 * A reset code is 6 characters from A–Z and 0–9 like an email code, valid one hour, one pending per
 * user (a new one replaces it), stored as sha256(salt + code), void after PASSWORD_CODE_MAX_ATTEMPTS
 * wrong tries and deleted when a password is set. Reset mails share the code mail limits of SPEC
 * 10.2 (per user and per recipient address) and the rule for where links may lead.
 */
import { randomBytes } from 'node:crypto';
import { passwordResetMail } from '../../mail/messages.ts';
import { renderUrlTemplate } from '../../mail/template.ts';
import {
  countPasswordResetAttempt,
  deletePasswordResetCode,
  findPasswordResetCodeForUpdate,
  setPasswordHash,
  upsertPasswordResetCode,
} from '../../store/credentials.ts';
import type { DB } from '../../store/database.ts';
import { safeEqual, sha256 } from '../kernel/crypto.ts';
import { checkMailLimits, checkMailLink, newEmailCode, type EmailCodeUser } from './email-codes.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { enqueueMail } from '../kernel/outbox.ts';
import { secretTry } from '../sign-in/secret-tries.ts';

export const PASSWORD_CODE_SECONDS = 3600;
export const PASSWORD_CODE_MAX_ATTEMPTS = 5;

export type ResetDelivery = { kind: 'return' } | { kind: 'send'; urlTemplate?: string | undefined };

export interface IssuedResetCode {
  details: ChangeDetails;
  /** The code, for `return` delivery only. */
  code?: string;
}

/**
 * Issues a new reset code for `user` and returns or mails it; appends
 * `user.human.password.code.added`. Call it in the transaction that checked and locked the user
 * (for `send`: its address verified). Throws TemplateError for a link leading elsewhere than SPEC
 * 10.2 allows and MailLimitReached over a mail limit; either rolls back, the previous code stays.
 */
export async function issuePasswordResetCode(
  trx: DB,
  user: EmailCodeUser,
  delivery: ResetDelivery,
  context: { externalUrl: string; creator: string },
  now = new Date(),
): Promise<IssuedResetCode> {
  if (delivery.kind === 'send') await checkMailLimits(trx, user);
  const code = newEmailCode();
  const salt = randomBytes(16).toString('hex');
  await upsertPasswordResetCode(trx, user.id, {
    code_hash: sha256(salt + code),
    salt,
    expires_at: new Date(now.getTime() + PASSWORD_CODE_SECONDS * 1000),
    created_at: now,
  });
  if (delivery.kind === 'send') {
    const link = delivery.urlTemplate === undefined ? undefined : await resetLink(trx, user, code, delivery.urlTemplate, context.externalUrl);
    const mail = passwordResetMail({ language: user.preferredLanguage, code, link, name: user.name });
    await enqueueMail(trx, { instanceId: user.instanceId, to: user.email, userId: user.id, ...mail });
  }
  const details = await appendEvent(trx, {
    instanceId: user.instanceId,
    aggregateType: 'user',
    aggregateId: user.id,
    resourceOwner: user.orgId,
    type: 'user.human.password.code.added',
    creator: context.creator,
    payload: { delivery: delivery.kind },
  });
  return delivery.kind === 'return' ? { details, code } : { details };
}

function resetLink(trx: DB, user: EmailCodeUser, code: string, template: string, externalUrl: string): Promise<string> {
  return checkMailLink(trx, externalUrl, user, renderUrlTemplate(template, { UserID: user.id, Code: code, OrgID: user.orgId }));
}

export type ResetCodeResult = 'valid' | 'invalid' | 'expired' | 'not_pending';

/**
 * Checks the user's reset code under its row lock without using it up: a wrong one counts a try.
 * SetPassword checks the code so before it hashes the new password, so that a wrong code costs no
 * argon2 run, and uses it (useResetCode) in the transaction that stores the password. The check is
 * one of the client address's tries (secret-tries.ts: Throttled past the limit, nothing checked).
 * On anything but `valid` the caller commits (so the try counts).
 */
export async function checkResetCode(trx: DB, userId: string, code: string, now = new Date()): Promise<ResetCodeResult> {
  return secretTry(() => resetCodeMatches(trx, userId, code, now), (result) => result !== 'valid');
}

/**
 * Checks the user's reset code under its row lock: a right one is deleted (used once), a wrong one
 * counts a try. Call it in the transaction that sets the password; on anything but `valid` the
 * caller commits (so the try counts) and sets nothing.
 */
export async function useResetCode(trx: DB, userId: string, code: string, now = new Date()): Promise<ResetCodeResult> {
  const result = await resetCodeMatches(trx, userId, code, now);
  if (result === 'valid') await deletePasswordResetCode(trx, userId);
  return result;
}

async function resetCodeMatches(trx: DB, userId: string, code: string, now: Date): Promise<ResetCodeResult> {
  const row = await findPasswordResetCodeForUpdate(trx, userId);
  if (row === undefined) return 'not_pending';
  if (row.attempts >= PASSWORD_CODE_MAX_ATTEMPTS) return 'invalid';
  if (row.expires_at.getTime() <= now.getTime()) return 'expired';
  if (!safeEqual(sha256(row.salt + code.trim().toUpperCase()), row.code_hash)) {
    await countPasswordResetAttempt(trx, userId);
    return 'invalid';
  }
  return 'valid';
}

/** How the caller proved the right to set the password, for the event. */
export type PasswordProof = 'current_password' | 'reset_code' | 'administrator';

/**
 * Stores the new password hash, voids any pending reset code and appends
 * `user.human.password.changed`. What the change ends (the user's sessions and tokens, or its other
 * sessions) is the caller's next step in the same transaction: user-lifecycle.ts
 * endAccessForPasswordChange.
 */
export async function storePassword(
  trx: DB,
  user: { id: string; instanceId: string; orgId: string },
  passwordHash: string,
  proof: PasswordProof,
  creator: string,
  now = new Date(),
): Promise<ChangeDetails> {
  await setPasswordHash(trx, user.id, passwordHash, now);
  await deletePasswordResetCode(trx, user.id);
  return appendEvent(trx, {
    instanceId: user.instanceId,
    aggregateType: 'user',
    aggregateId: user.id,
    resourceOwner: user.orgId,
    type: 'user.human.password.changed',
    creator,
    payload: { proof },
  });
}
