/**
 * zitadel.user.v2 SetPassword and PasswordReset (docs/decisions.md#passwords;
 * docs/security.md 10.1, 10.11):
 *
 * - The new password follows the password policy (InvalidArgument naming `newPassword.password`);
 *   it is stored as an argon2id hash. A password set by an administrator or with a reset code ends
 *   the user's sessions, refresh families and tokens, as a deactivation does; the user itself changing
 *   it with its current password ends its other sessions (domain/user-lifecycle.ts).
 * - The user itself proves the right with its current password or a reset code; an administrator
 *   (ORG_OWNER of the user's organization, IAM_OWNER) may set it without, and when it gives either,
 *   it is checked as well. A wrong current password counts towards the user's lockout like a wrong
 *   password at the login; a locked user's is refused without a hash, with the same answer. Both
 *   proofs are tries of the caller's address (20 failures a minute, then ResourceExhausted with
 *   Retry-After before any hash), and a reset code is checked before the new password is hashed.
 * - PasswordReset mails a code to the user's verified address (a link too, with `urlTemplate`), or
 *   returns it to an administrator acting on another user (docs/security.md 10.1: a user asking for
 *   itself gets its code by mail only). The code is used with SetPassword's `verificationCode`; the
 *   login UI's "Forgot your password?" mails its own link to the same kind of code
 *   (docs/login-ui.md). There is no SMS delivery.
 */
import { Code, type ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { Password } from '../../../gen/zitadel/user/v2/password_pb.js';
import { NotificationType } from '../../../gen/zitadel/user/v2/password_pb.js';
import type { PasswordResetRequest, UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { hashSecret } from '../../domain/kernel/crypto.ts';
import { checkResetCode, issuePasswordResetCode, storePassword, useResetCode, type PasswordProof, type ResetCodeResult, type ResetDelivery } from '../../domain/credentials/password-reset.ts';
import { passwordPolicyProblem } from '../../domain/credentials/password-policy.ts';
import { checkCurrentPassword } from '../../domain/users/user-admin.ts';
import { creatorOf } from '../../domain/kernel/principal.ts';
import { afterAccessEnded, endAccessForPasswordChange, passwordChangeBy } from '../../domain/users/user-lifecycle.ts';
import type { UserRow } from '../../store/schema.ts';
import { holdUser } from '../../domain/users/row-lock.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { changeDetails } from '../management/details.ts';
import { checkUrlTemplate, codeMailError, codeRecipient, fieldError, requireHuman } from './credentials-common.ts';
import { targetUser } from './target.ts';

type PasswordMethods = Pick<ServiceImpl<typeof UserService>, 'setPassword' | 'passwordReset'>;

/** Longest current password or code looked at; anything longer is wrong without hashing it. */
const MAX_PROOF_LENGTH = 1024;


/** The new password against the policy. */
function checkNewPassword(password: Password | undefined): string {
  if (password === undefined) throw fieldError('newPassword', 'is required');
  const problem = passwordPolicyProblem(password.password);
  if (problem !== undefined) throw fieldError('newPassword.password', problem);
  // Gatehouse's login UI has no step that makes a user change its password.
  if (password.changeRequired) throw fieldError('newPassword.changeRequired', 'is not supported: the login UI never asks for a password change');
  return password.password;
}

/** The user's current password (domain/user-admin.ts): a locked user's is refused unchecked. */
async function proveCurrentPassword(gh: Gatehouse, row: UserRow, given: string, now: Date): Promise<void> {
  const check = await checkCurrentPassword(gh, row, given, now);
  if (check.kind !== 'valid') throw apiError(Code.InvalidArgument, 'USER-PasswordInvalid', 'currentPassword: is not the current password');
}

/** A reset code that does not allow setting the password. */
function resetCodeError(result: Exclude<ResetCodeResult, 'valid'>): ConnectError {
  switch (result) {
    case 'invalid':
      return apiError(Code.InvalidArgument, 'USER-CodeInvalid', 'verificationCode: is invalid');
    case 'expired':
      return apiError(Code.FailedPrecondition, 'USER-CodeExpired', 'verificationCode: has expired; ask for a new one with PasswordReset');
    case 'not_pending':
      return apiError(Code.FailedPrecondition, 'USER-NoCode', 'verificationCode: no password reset code is pending');
  }
}

/** How a reset code travels; a template's syntax is checked before the user is looked up. */
function resetDelivery(medium: PasswordResetRequest['medium']): ResetDelivery {
  if (medium.case === 'returnCode') return { kind: 'return' };
  if (medium.case === undefined) return { kind: 'send' };
  const { notificationType, urlTemplate } = medium.value;
  if (notificationType === NotificationType.SMS) throw fieldError('sendLink.notificationType', 'SMS is not supported; codes go by email');
  if (notificationType !== NotificationType.Email && notificationType !== NotificationType.Unspecified) throw fieldError('sendLink.notificationType', 'unknown notification type');
  checkUrlTemplate(urlTemplate, 'sendLink.urlTemplate');
  return { kind: 'send', urlTemplate };
}

export function passwordMethods(gh: Gatehouse): PasswordMethods {
  return {
    async setPassword(req, ctx) {
      const principal = requirePrincipal(ctx);
      const now = new Date();
      const password = checkNewPassword(req.newPassword);
      const verification = req.verification;
      if (verification.case === 'verificationCode' && verification.value.trim() === '') throw fieldError('verificationCode', 'must not be empty');
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      requireHuman(target.row);
      if (verification.case === undefined && target.access === 'self') {
        throw apiError(Code.PermissionDenied, 'USER-PasswordProof', 'changing your own password needs currentPassword or a verificationCode from PasswordReset');
      }
      if (verification.case === 'currentPassword') await proveCurrentPassword(gh, target.row, verification.value, now);
      const code = verification.case !== 'verificationCode' ? undefined : verification.value.length <= MAX_PROOF_LENGTH ? verification.value : '';
      // A reset code is checked before the new password is hashed: a wrong one costs no argon2 run.
      const checked = code === undefined ? 'valid' : await gh.db.transaction().execute(async (trx) => {
        await holdUser(trx, target.row.id);
        return checkResetCode(trx, target.row.id, code, now);
      });
      if (checked !== 'valid') throw resetCodeError(checked);
      const passwordHash = await hashSecret(password);
      const proof: PasswordProof = verification.case === 'currentPassword' ? 'current_password' : verification.case === 'verificationCode' ? 'reset_code' : 'administrator';
      const passwordChange = passwordChangeBy(
        { self: target.access === 'self', provedWithCurrentPassword: proof === 'current_password', actorId: principal.actorId, sessionId: principal.sessionId },
        gh.config.lifetimes,
        now,
      );
      const outcome = await gh.db.transaction().execute(async (trx) => {
        await holdUser(trx, target.row.id);
        if (code !== undefined) {
          const result = await useResetCode(trx, target.row.id, code, now); // used by a concurrent call meanwhile?
          if (result !== 'valid') return { result } as const;
        }
        const user = { id: target.row.id, instanceId: target.row.instance_id, orgId: target.row.org_id };
        const details = await storePassword(trx, user, passwordHash, proof, creatorOf(principal), now);
        const ended = await endAccessForPasswordChange(trx, user.id, passwordChange, now);
        return { result: 'set', details, ended } as const;
      });
      if (outcome.result !== 'set') throw resetCodeError(outcome.result);
      afterAccessEnded(outcome.ended, { directory: gh.directory, revocations: gh.tokens.revocations });
      return { details: changeDetails(outcome.details) };
    },

    async passwordReset(req, ctx) {
      const principal = requirePrincipal(ctx);
      const delivery = resetDelivery(req.medium);
      const issued = await gh.db.transaction().execute(async (trx) => {
        const user = await codeRecipient(trx, gh.instanceId, principal, req.userId, delivery.kind, 'a reset code');
        try {
          return await issuePasswordResetCode(trx, user, delivery, { externalUrl: gh.config.externalUrl, creator: creatorOf(principal) });
        } catch (error) {
          throw codeMailError(error, 'sendLink.urlTemplate');
        }
      });
      return { details: changeDetails(issued.details), ...(issued.code !== undefined ? { verificationCode: issued.code } : {}) };
    },
  };
}
