/**
 * Passkey registration codes (zitadel.user.v2 CreatePasskeyRegistrationLink, SPEC §11, 10.1, 10.2):
 * a code lets whoever holds it start one passkey registration for the user without a right to act
 * on that user (RegisterPasskey's `code`), as ZITADEL's passwordless init codes do. The code is
 * mailed as a link to the user's verified address, or returned to an administrator acting on
 * another user.
 *
 * A code is 12 characters from A–Z, a–z and 0–9 (about 71 bits: it stands in for a sign-in), with an
 * id of its own (the link carries both), valid one hour, one pending per user (a new one replaces
 * it), stored as sha256(salt + code), used once, and void after PASSKEY_CODE_MAX_ATTEMPTS wrong
 * tries. Mails share the code mail limits and the link rule of SPEC 10.2 with the other code mails.
 * A try counts towards the code's tries only under the code's id, which travels only in the link,
 * and every try is one of the client address's tries (secret-tries.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { passkeyRegistrationMail } from '../../mail/messages.ts';
import { parseUrlTemplate, renderUrlTemplate } from '../../mail/template.ts';
import type { DB } from '../../store/database.ts';
import { countPasskeyCodeAttempt, deletePasskeyCode, findPasskeyCodeForUpdate, upsertPasskeyCode } from '../../store/passkeys.ts';
import { safeEqual, sha256 } from '../kernel/crypto.ts';
import { checkMailLimits, checkMailLink, fillCodeId, type EmailCodeUser } from '../credentials/email-codes.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { enqueueMail } from '../kernel/outbox.ts';
import { secretTry } from '../sign-in/secret-tries.ts';

export const PASSKEY_CODE_SECONDS = 3600;
export const PASSKEY_CODE_MAX_ATTEMPTS = 5;
export const PASSKEY_CODE_LENGTH = 12;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export type PasskeyCodeDelivery = { kind: 'return' } | { kind: 'send'; urlTemplate?: string | undefined };

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
export function checkPasskeyLinkTemplate(template: string): void {
  parseUrlTemplate(fillCodeId(template, '0'));
}

function renderPasskeyLink(template: string, values: { userId: string; orgId: string; codeId: string; code: string }): string {
  return renderUrlTemplate(fillCodeId(template, values.codeId), { UserID: values.userId, OrgID: values.orgId, Code: values.code });
}

function newPasskeyCode(): string {
  let code = '';
  for (let i = 0; i < PASSKEY_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/**
 * Issues a new code for `user` and returns or mails it; appends
 * `user.human.passwordless.initialization.code.added`. Call it in the transaction that checked and
 * locked the user (for `send`: its address verified). Throws TemplateError for a link leading
 * elsewhere than SPEC 10.2 allows and MailLimitReached over a mail limit; either rolls back.
 */
export async function issuePasskeyCode(
  trx: DB,
  user: EmailCodeUser,
  delivery: PasskeyCodeDelivery,
  context: { externalUrl: string; creator: string },
  now = new Date(),
): Promise<IssuedPasskeyCode> {
  if (delivery.kind === 'send') await checkMailLimits(trx, user);
  const codeId = newId();
  const code = newPasskeyCode();
  const salt = randomBytes(16).toString('hex');
  await upsertPasskeyCode(trx, {
    user_id: user.id,
    id: codeId,
    code_hash: sha256(salt + code),
    salt,
    expires_at: new Date(now.getTime() + PASSKEY_CODE_SECONDS * 1000),
    created_at: now,
  });
  if (delivery.kind === 'send') {
    const rendered = renderPasskeyLink(delivery.urlTemplate ?? defaultPasskeyLinkTemplate(context.externalUrl), { userId: user.id, orgId: user.orgId, codeId, code });
    const link = await checkMailLink(trx, context.externalUrl, user, rendered);
    const mail = passkeyRegistrationMail({ language: user.preferredLanguage, link, name: user.name }); // a verified address
    await enqueueMail(trx, { instanceId: user.instanceId, to: user.email, userId: user.id, ...mail });
  }
  const details = await appendEvent(trx, {
    instanceId: user.instanceId,
    aggregateType: 'user',
    aggregateId: user.id,
    resourceOwner: user.orgId,
    type: 'user.human.passwordless.initialization.code.added',
    creator: context.creator,
    payload: { codeId, delivery: delivery.kind },
  });
  return delivery.kind === 'return' ? { details, codeId, code } : { details, codeId };
}

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
  return secretTry(() => checkRegistrationCode(trx, userId, given, now), (result) => result !== 'valid');
}

async function checkRegistrationCode(trx: DB, userId: string, given: { id: string; code: string }, now: Date): Promise<'valid' | 'invalid'> {
  const row = await findPasskeyCodeForUpdate(trx, userId);
  if (row === undefined) return 'invalid';
  if (row.attempts >= PASSKEY_CODE_MAX_ATTEMPTS || row.expires_at.getTime() <= now.getTime()) return 'invalid';
  // A try counts only against the pending code it names: the code id travels only in the link, so
  // whoever merely knows a user id cannot use up that user's tries (the link page needs no sign-in).
  if (!safeEqual(row.id, given.id)) return 'invalid';
  if (!safeEqual(sha256(row.salt + given.code.trim()), row.code_hash)) {
    await countPasskeyCodeAttempt(trx, userId);
    return 'invalid';
  }
  await deletePasskeyCode(trx, userId);
  return 'valid';
}
