/**
 * Passkey registration codes (zitadel.user.v2 CreatePasskeyRegistrationLink): a code lets whoever
 * holds it start one passkey registration for the user without a right to act on that user
 * (RegisterPasskey's `code`), as ZITADEL's passwordless init codes do. The code is mailed as a link
 * to the user's verified address, or returned to an administrator acting on another user.
 *
 * A code is 12 characters from A–Z, a–z and 0–9 (about 71 bits: it stands in for a sign-in), with an
 * id of its own (the link carries both), valid one hour, one pending per user (a new one replaces
 * it), used once, and void after PASSKEY_CODE_MAX_ATTEMPTS wrong tries. A try counts towards the
 * code's tries only under the code's id, which travels only in the link: whoever merely knows a user
 * id cannot use up that user's tries (the link page needs no sign-in). Every try is one of the
 * client address's tries (secret-tries.ts). How codes are drawn, stored, tried and mailed (with the
 * mail limits and link rule every code mail shares): one-time-codes.ts.
 */
import { passkeyRegistrationMail } from '../../mail/messages.ts';
import type { DB } from '../../store/database.ts';
import { countPasskeyCodeAttempt, deletePasskeyCode, findPasskeyCodeForUpdate, upsertPasskeyCode, type PasskeyCodeRow } from '../../store/passkeys.ts';
import { checkLinkTemplate, issueCode, tryCode, type CodeDelivery, type CodeIssuer, type CodeKind } from '../credentials/one-time-codes.ts';
import type { ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { secretTry } from '../sign-in/secret-tries.ts';

export const PASSKEY_CODE_SECONDS = 3600;
export const PASSKEY_CODE_MAX_ATTEMPTS = 5;
export const PASSKEY_CODE_LENGTH = 12;

export type PasskeyCodeDelivery = CodeDelivery;

export interface IssuedPasskeyCode {
  details: ChangeDetails;
  codeId: string;
  /** The code, for `return` delivery only. */
  code?: string;
}

/** The default link: Gatehouse's own passkey page, which takes the code. */
export function defaultPasskeyLinkTemplate(externalUrl: string): string {
  return `${externalUrl}/ui/login/passkeys?userID={{.UserID}}&orgID={{.OrgID}}&codeID={{.CodeID}}&code={{.Code}}`;
}

/** A template's syntax (TemplateError when wrong): src/mail/template.ts's rules, plus {{.CodeID}}. */
export const checkPasskeyLinkTemplate = checkLinkTemplate;

const PASSKEY_CODE: CodeKind<PasskeyCodeRow, string, string> = {
  alphabet: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  length: PASSKEY_CODE_LENGTH,
  lifetimeSeconds: PASSKEY_CODE_SECONDS,
  maxTries: PASSKEY_CODE_MAX_ATTEMPTS,
  newId,
  withoutId: 'refuse',
  table: { save: upsertPasskeyCode, findForUpdate: findPasskeyCodeForUpdate, countWrongTry: countPasskeyCodeAttempt, remove: deletePasskeyCode },
  addedEvent: 'user.human.passwordless.initialization.code.added',
  defaultLink: defaultPasskeyLinkTemplate,
  // a link only, no code to type; the address is verified, so the mail greets the user
  mail: (user, _code, link) => passkeyRegistrationMail({ language: user.preferredLanguage, link, name: user.name }),
};

/**
 * Issues a new code for `user` and returns or mails it; appends
 * `user.human.passwordless.initialization.code.added`. Throws TemplateError for a link leading
 * elsewhere than code mail links may lead and MailLimitReached over a mail limit; either rolls back.
 */
export const issuePasskeyCode: CodeIssuer<IssuedPasskeyCode> = async (trx, user, delivery, context, now = new Date()) => {
  const payload = (code: { id: string }) => ({ codeId: code.id, delivery: delivery.kind });
  const { code, details } = await issueCode(trx, PASSKEY_CODE, user, delivery, { ...context, now, payload });
  return delivery.kind === 'return' ? { details, codeId: code.id, code: code.code } : { details, codeId: code.id };
};

/**
 * Uses the user's code under its row lock: a right one is deleted (used once); a wrong code under the
 * right id counts a try. Every refusal is the same `invalid` (wrong id, wrong code, expired, used up,
 * none pending), and counts as a failure of the client address of the request being served
 * (secret-tries.ts; Throttled past its limit, nothing checked): the API's RegisterPasskey counts so;
 * the passkey page, which takes the try itself before the transaction, serves its requests without
 * such an address, so nothing counts twice.
 * On `invalid` the caller commits (so the try counts) and starts nothing.
 */
export async function useRegistrationCode(trx: DB, userId: string, given: { id: string; code: string }, now: Date): Promise<'valid' | 'invalid'> {
  return secretTry(
    async () => ((await tryCode(trx, PASSKEY_CODE, userId, { code: given.code, codeId: given.id }, now)).result === 'right' ? 'valid' : 'invalid'),
    (result) => result !== 'valid',
  );
}
