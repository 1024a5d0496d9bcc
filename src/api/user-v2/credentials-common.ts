/** What the zitadel.user.v2 credential calls share: the kind of user a call needs, and its refusals. */
import { Code, type ConnectError } from '@connectrpc/connect';
import { parseUrlTemplate, TemplateError } from '../../mail/template.ts';
import type { EmailCodeUser } from '../../domain/credentials/email-codes.ts';
import { mayAddCredential } from '../../domain/credentials/fresh-sign-in.ts';
import type { Principal } from '../../domain/kernel/principal.ts';
import { minutesUntil } from '../../domain/sign-in/lockout.ts';
import type { DB } from '../../store/database.ts';
import type { UserRow } from '../../store/schema.ts';
import { findContactUserForUpdate, type ContactUserRow } from '../../store/users.ts';
import { apiError } from '../errors.ts';
import { targetUser, userNotFound } from './target.ts';

/** InvalidArgument naming the field (docs/errors.md#the-api). */
export function fieldError(field: string, problem: string): ConnectError {
  return apiError(Code.InvalidArgument, 'USER-InvalidArgument', `${field}: ${problem}`);
}

/** Passwords, email, one-time passwords: human users only. */
export function requireHuman(row: UserRow): void {
  if (row.kind !== 'human') throw apiError(Code.FailedPrecondition, 'USER-Machine', 'machine users have no password, email or second factor');
}

/** Keys, secrets and personal access tokens: machine users only. */
export function requireMachine(row: UserRow): void {
  if (row.kind !== 'machine') throw apiError(Code.FailedPrecondition, 'USER-Human', 'only machine users have keys, secrets and personal access tokens');
}

/**
 * A user adding a sign-in credential for itself (a passkey, an authenticator app) needs a recent
 * sign-in of its own that used every factor it has (domain/fresh-sign-in.ts); PermissionDenied
 * otherwise. Administrators acting on another user are not asked.
 */
export async function requireFreshSignIn(db: DB, principal: Principal, access: 'self' | 'manage'): Promise<void> {
  if (access !== 'self') return;
  if (await mayAddCredential(db, principal)) return;
  throw apiError(
    Code.PermissionDenied,
    'USER-SignInAgain',
    'adding a sign-in method needs a sign-in of your own within the last 10 minutes that used every factor you have: sign in again',
  );
}

/** docs/security.md 10.1: a code handed to the caller proves nothing about the mailbox; only for administrators. */
export function requireManagerForReturnedCode(access: 'self' | 'manage', field: string): void {
  if (access !== 'manage') {
    throw apiError(Code.PermissionDenied, 'USER-ReturnCodeSelf', `${field} is only for administrators acting on another user: your code is sent by mail`);
  }
}

/** A URL template's syntax, checked before the user is looked up (where it may lead is checked later). */
export function checkUrlTemplate(template: string | undefined, field: string): void {
  if (template === undefined) return;
  try {
    parseUrlTemplate(template);
  } catch (error) {
    if (error instanceof TemplateError) throw fieldError(field, error.message);
    throw error;
  }
}

/** A link template the domain refused (it leads elsewhere than code mails may) as an error of `templateField`; anything else as is. */
export function codeMailError(error: unknown, templateField: string): unknown {
  return error instanceof TemplateError ? fieldError(templateField, error.message) : error;
}

/** Too many wrong passwords or codes: the user is locked (docs/decisions.md#login-names-and-lockout). */
export function lockedError(until: Date, now: Date): ConnectError {
  return apiError(Code.ResourceExhausted, 'USER-Locked', `too many failed attempts: the user is locked for ${minutesUntil(until, now)} more minute(s)`);
}

/**
 * The human user a code is issued for (a password reset code, a passkey registration code), its row
 * locked: the user itself or a manager may ask; only a manager may have the code returned
 * (docs/security.md 10.1); a mailed code goes only to a verified address. `mailed` names what would
 * be mailed, for the refusal.
 */
export async function codeRecipient(
  trx: DB,
  instanceId: string,
  principal: Principal,
  userId: string,
  delivery: 'send' | 'return',
  mailed: string,
  options: { addsCredential?: boolean } = {},
): Promise<EmailCodeUser> {
  const target = await targetUser(trx, instanceId, principal, userId, { allowSelf: true });
  requireHuman(target.row);
  if (delivery === 'return') requireManagerForReturnedCode(target.access, 'returnCode');
  // A link that adds a credential is adding one: for oneself only with a fresh, full sign-in (else a
  // stale token could set its own address, verify it, and mail itself a passkey link).
  if (options.addsCredential === true) await requireFreshSignIn(trx, principal, target.access);
  const contact = await findContactUserForUpdate(trx, instanceId, target.row.id); // the user's row lock
  if (contact === undefined) throw userNotFound();
  // docs/security.md 10.1: a code goes only to an address someone has read a mail at (or an
  // administrator vouched for).
  if (delivery === 'send' && (contact.email === null || contact.email === '' || !contact.email_verified)) {
    throw apiError(Code.FailedPrecondition, 'USER-NoVerifiedEmail', `the user has no verified email to send ${mailed} to`);
  }
  return emailCodeUserOf(contact);
}

/** The user a code mail is about and for, from its contact row. */
export function emailCodeUserOf(contact: ContactUserRow): EmailCodeUser {
  return {
    id: contact.id,
    instanceId: contact.instance_id,
    orgId: contact.org_id,
    email: contact.email ?? '',
    preferredLanguage: contact.preferred_language,
    name: contact.display_name ?? contact.given_name,
  };
}
