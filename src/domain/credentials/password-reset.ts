/**
 * Passwords set through the management API and the reset codes that allow it (zitadel.user.v2
 * PasswordReset and SetPassword's `verification_code`), and the login UI's "Forgot your password?"
 * (docs/login-ui.md#forgot-your-password), which mails the same codes with a link to its "Set a new
 * password" page. A code the API mails carries a link only when the caller gave a URL template (its
 * application's page that takes the code).
 *
 * A reset code is 6 characters from A–Z and 0–9 like an email code, valid one hour, one pending per
 * user (a new one replaces it), void after PASSWORD_CODE_MAX_ATTEMPTS wrong tries and deleted when a
 * password is set. Through the API only the user or its administrator tries it, so every such try
 * counts towards its tries. The login UI's page takes tries from anyone for any user: there only a
 * try that presents the link's id counts (docs/security.md 10.22), any other is refused unchecked,
 * so a stranger cannot void someone's code. The link's id is an HMAC, under a key derived from the
 * master key, of the user and the code's expiry: no column to store, unforgeable, and a newer code
 * (another expiry) voids the older link. How codes are drawn, stored, tried and mailed (with the
 * mail limits and link rule every code mail shares): one-time-codes.ts.
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
import { createHmac, type KeyObject } from 'node:crypto';
import type { DB } from '../../store/database.ts';
import { findUserForUpdate } from '../../store/users.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { secretTry } from '../sign-in/secret-tries.ts';
import { CAPITALS_AND_DIGITS, issueCode, MailLimitReached, tryCode, type CodeDelivery, type CodeIssuer, type CodeKind } from './one-time-codes.ts';
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
  // The API's mail has a link only with the caller's template: the login UI's page takes only links
  // that carry their id, which the login UI's own mails do (requestResetLink).
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

// --- the login UI's reset link (docs/login-ui.md#forgot-your-password) ---

/** What a reset link needs: where Gatehouse is, and the key of the links' ids (MasterKey.derive). */
export interface ResetLinkContext {
  instanceId: string;
  /** GATEHOUSE_EXTERNAL_URL. */
  externalUrl: string;
  linkKey: KeyObject;
}

/** The login UI's "Set a new password" page, the target of the link. */
export const SET_PASSWORD_PATH = '/ui/login/set-password';

/** The id a reset link carries: an HMAC of the user and its code's expiry (see the file's comment). */
export function resetLinkId(linkKey: KeyObject, userId: string, expiresAt: Date): string {
  return createHmac('sha256', linkKey).update(`${userId}\n${expiresAt.toISOString()}`).digest('base64url').slice(0, 22);
}

/** The reset code kind of the page: its rows carry their link's id, and tries without it are refused unchecked. */
function linkedResetCode(linkKey: KeyObject): CodeKind<PendingPasswordResetCode & { id: string }, null, undefined> {
  return {
    ...RESET_CODE,
    withoutId: 'refuse',
    table: {
      ...RESET_CODE.table,
      async findForUpdate(db, userId) {
        const row = await findPasswordResetCodeForUpdate(db, userId);
        return row === undefined ? undefined : { ...row, id: resetLinkId(linkKey, userId, row.expires_at) };
      },
    },
  };
}

export type ResetLinkRequest =
  /** A code was mailed to the user's verified address. */
  | { kind: 'mailed' }
  /** Nothing was mailed: no such user, not an active human, no verified address, or a mail limit reached. */
  | { kind: 'not_mailed' };

/**
 * "Forgot your password?": mails a reset code with a link to the login UI's page to the user's
 * verified address, when `userId` names an active human user who has one. Every other case (no
 * user, another state, no verified address, a mail limit of docs/security.md 10.2 reached) mails
 * nothing and changes nothing; the caller answers all alike, so the page tells no one whether an
 * account or an address exists. `returnTo` (an authorization request's id) travels in the link, so
 * that the page can go back to that sign-in afterwards.
 */
export async function requestResetLink(db: DB, ctx: ResetLinkContext, userId: string | undefined, returnTo: string | undefined, now = new Date()): Promise<ResetLinkRequest> {
  if (userId === undefined) return { kind: 'not_mailed' };
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await findUserForUpdate(trx, userId);
      if (row === undefined || row.instance_id !== ctx.instanceId || row.kind !== 'human' || row.state !== 'active' || !row.email_verified || !row.email) return { kind: 'not_mailed' } as const;
      const expires = new Date(now.getTime() + PASSWORD_CODE_SECONDS * 1000);
      const template = resetLinkTemplate(ctx.externalUrl, resetLinkId(ctx.linkKey, userId, expires), returnTo);
      const user = { id: row.id, instanceId: row.instance_id, orgId: row.org_id, email: row.email, preferredLanguage: row.preferred_language, name: row.display_name ?? row.given_name };
      await issueCode(trx, RESET_CODE, user, { kind: 'send', urlTemplate: template }, { externalUrl: ctx.externalUrl, creator: userId, now, payload: () => ({ delivery: 'send' }) });
      return { kind: 'mailed' } as const;
    });
  } catch (error) {
    if (error instanceof MailLimitReached) return { kind: 'not_mailed' };
    throw error;
  }
}

/** The link of a reset mail: the page, the user, the code, the link's id and the sign-in to return to. */
function resetLinkTemplate(externalUrl: string, linkId: string, returnTo: string | undefined): string {
  const back = returnTo === undefined ? '' : `&authRequestID=${encodeURIComponent(returnTo)}`;
  return `${externalUrl}${SET_PASSWORD_PATH}?userID={{.UserID}}&code={{.Code}}&codeID=${linkId}${back}`;
}

/**
 * A try of a reset code at the login UI's page: under the user's row lock, a right code presented
 * with its link's id is `valid` (used up unless `keep`), a wrong one counts towards the code's
 * tries; without the right id nothing is checked (`invalid`). One of the client address's tries
 * (secret-tries.ts: Throttled past the limit). On anything but `valid` the caller commits.
 */
export async function tryResetCodeFromLink(
  trx: DB,
  linkKey: KeyObject,
  userId: string,
  given: { code: string; codeId: string },
  options: { keep: boolean },
  now = new Date(),
): Promise<ResetCodeResult> {
  const check = async () => RESULTS[(await tryCode(trx, linkedResetCode(linkKey), userId, { code: given.code, codeId: given.codeId, keep: options.keep }, now)).result];
  return options.keep ? secretTry(check, (result) => result !== 'valid') : check();
}

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
