/**
 * Passwords set through the management API and the reset codes that allow it (zitadel.user.v2
 * PasswordReset and SetPassword's `verification_code`). The login UI has no "forgot password" page,
 * so a code is used with SetPassword; a mailed code carries a link only when the caller gave a URL
 * template (its application's page that takes the code).
 *
 * A reset code is 6 characters from A–Z and 0–9 like an email code, valid one hour, one pending per
 * user (a new one replaces it), void after PASSWORD_CODE_MAX_ATTEMPTS wrong tries and deleted when a
 * password is set. It has no id: only the user or its administrator tries it, through the API, so
 * every try counts towards its tries. How codes are drawn, stored, tried and mailed (with the mail
 * limits and link rule every code mail shares): one-time-codes.ts.
 */
import { passwordResetMail } from '../../mail/messages.ts';
import {
  countPasswordResetAttempt,
  deletePasswordResetCode,
  findPasswordResetCodeForUpdate,
  setPasswordHash,
  upsertPasswordResetCode,
  type PendingPasswordResetCode,
} from '../../store/credentials.ts';
import type { DB } from '../../store/database.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { secretTry } from '../sign-in/secret-tries.ts';
import { CAPITALS_AND_DIGITS, issueCode, tryCode, type CodeDelivery, type CodeIssuer, type CodeKind } from './one-time-codes.ts';
import type { PasswordProof } from '../kernel/event-types.ts';

export const PASSWORD_CODE_SECONDS = 3600;
export const PASSWORD_CODE_MAX_ATTEMPTS = 5;

export type ResetDelivery = CodeDelivery;

export interface IssuedResetCode {
  details: ChangeDetails;
  /** The code, for `return` delivery only. */
  code?: string;
}

const RESET_CODE: CodeKind<PendingPasswordResetCode, null, undefined> = {
  alphabet: CAPITALS_AND_DIGITS,
  length: 6,
  lifetimeSeconds: PASSWORD_CODE_SECONDS,
  maxTries: PASSWORD_CODE_MAX_ATTEMPTS,
  newId: () => null,
  withoutId: 'count',
  table: {
    save: upsertPasswordResetCode,
    findForUpdate: findPasswordResetCodeForUpdate,
    countWrongTry: countPasswordResetAttempt,
    remove: deletePasswordResetCode,
  },
  addedEvent: 'user.human.password.code.added',
  // no page of Gatehouse's takes a reset code: a link only with the caller's template
  defaultLink: () => undefined,
  mail: (user, { code }, link) => passwordResetMail({ language: user.preferredLanguage, code, link, name: user.name }),
};

/**
 * Issues a new reset code for `user` and returns or mails it; appends
 * `user.human.password.code.added`. Throws TemplateError for a link leading elsewhere than code
 * mail links may lead and MailLimitReached over a mail limit; either rolls back, the previous code
 * stays.
 */
export const issuePasswordResetCode: CodeIssuer<IssuedResetCode> = async (trx, user, delivery, context, now = new Date()) => {
  const { code, details } = await issueCode(trx, RESET_CODE, user, delivery, { ...context, now, payload: () => ({ delivery: delivery.kind }) });
  return delivery.kind === 'return' ? { details, code: code.code } : { details };
};

export type ResetCodeResult = 'valid' | 'invalid' | 'expired' | 'not_pending';

const RESULTS = { right: 'valid', wrong: 'invalid', expired: 'expired', missing: 'not_pending' } as const;

/**
 * Checks the user's reset code under its row lock without using it up: a wrong one counts a try.
 * SetPassword checks the code so before it hashes the new password, so that a wrong code costs no
 * argon2 run, and uses it (useResetCode) in the transaction that stores the password. The check is
 * one of the client address's tries (secret-tries.ts: Throttled past the limit, nothing checked).
 * On anything but `valid` the caller commits (so the try counts).
 */
export async function checkResetCode(trx: DB, userId: string, code: string, now = new Date()): Promise<ResetCodeResult> {
  const check = async () => RESULTS[(await tryCode(trx, RESET_CODE, userId, { code, keep: true }, now)).result];
  return secretTry(check, (result) => result !== 'valid');
}

/**
 * Checks the user's reset code under its row lock: a right one is deleted (used once), a wrong one
 * counts a try. Call it in the transaction that sets the password; on anything but `valid` the
 * caller commits (so the try counts) and sets nothing.
 */
export async function useResetCode(trx: DB, userId: string, code: string, now = new Date()): Promise<ResetCodeResult> {
  return RESULTS[(await tryCode(trx, RESET_CODE, userId, { code }, now)).result];
}

export type { PasswordProof };

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
    aggregateId: user.id,
    resourceOwner: user.orgId,
    type: 'user.human.password.changed',
    creator,
    payload: { proof },
  });
}
