/**
 * zitadel.user.v2 SetEmail, ResendEmailCode and VerifyEmail: the same contact email (`users.email`)
 * and the same rules as the v3alpha contact email calls (docs/decisions.md#email-codes;
 * docs/security.md 10.1, 10.2), through the same domain functions:
 *
 * - the user itself or an administrator of it; `returnCode` and `isVerified` only for an
 *   administrator acting on another user (PermissionDenied otherwise); machine users have no email
 *   (FailedPrecondition);
 * - an invalid address or URL template, or a link leading outside Gatehouse and the applications of
 *   the user's organization: InvalidArgument naming the field; a code mail over a limit:
 *   ResourceExhausted with Retry-After, nothing changed;
 * - Resend: no email, or already verified: FailedPrecondition. Verify: a wrong code (or one void
 *   after too many tries) is InvalidArgument, an expired code or none pending FailedPrecondition.
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import type { SendEmailVerificationCode } from '../../../gen/zitadel/user/v2/email_pb.js';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { changeContactEmail, vouchedChange, type EmailChange } from '../../domain/users/contact-email.ts';
import { isValidEmail } from '../../domain/users/email-address.ts';
import { issueEmailCode, verifyEmailCodeWithDetails, type CodeDelivery, type EmailCodeUser } from '../../domain/credentials/email-codes.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import type { DB } from '../../store/database.ts';
import { findContactUserForUpdate, type ContactUserRow } from '../../store/users.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { voucherOf } from '../management/access.ts';
import { changeDetails } from '../management/details.ts';
import { checkUrlTemplate, codeMailError, emailCodeUserOf, fieldError, requireHuman, requireManagerForReturnedCode } from './credentials-common.ts';
import { targetUser, userNotFound } from './target.ts';

type EmailMethods = Pick<ServiceImpl<typeof UserService>, 'setEmail' | 'resendEmailCode' | 'verifyEmail'>;

interface LockedContact {
  access: 'self' | 'manage';
  row: ContactUserRow;
  user: EmailCodeUser;
}

/** How a code travels (`returnCode`, else a mail); the template's syntax is checked here. */
function codeDelivery(verification: { case: 'sendCode'; value: SendEmailVerificationCode } | { case: 'returnCode' } | { case: undefined | 'isVerified' }): CodeDelivery {
  if (verification.case === 'returnCode') return { kind: 'return' };
  const urlTemplate = verification.case === 'sendCode' ? verification.value.urlTemplate : undefined;
  checkUrlTemplate(urlTemplate, 'sendCode.urlTemplate');
  return { kind: 'send', urlTemplate };
}

export function emailMethods(gh: Gatehouse): EmailMethods {
  /** The human user the call names, after the permission check, its row locked. */
  async function lockedContact(trx: DB, principal: Principal, userId: string): Promise<LockedContact> {
    const target = await targetUser(trx, gh.instanceId, principal, userId, { allowSelf: true });
    requireHuman(target.row);
    const row = await findContactUserForUpdate(trx, gh.instanceId, target.row.id);
    if (row === undefined) throw userNotFound();
    return { access: target.access, row, user: emailCodeUserOf(row) };
  }

  function issueContext(principal: Principal) {
    return { externalUrl: gh.config.externalUrl, creator: creatorOf(principal), voucher: voucherOf(principal) };
  }

  return {
    async setEmail(req, ctx) {
      const principal = requirePrincipal(ctx);
      const address = req.email.trim();
      if (!isValidEmail(address)) throw fieldError('email', 'is not a valid email address');
      const verification = req.verification;
      const verified = verification.case === 'isVerified' && verification.value;
      const delivery = verified ? undefined : codeDelivery(verification);
      const result = await gh.db.transaction().execute(async (trx) => {
        const { access, user } = await lockedContact(trx, principal, req.userId);
        // docs/security.md 10.1: nobody vouches for its own address, not even an IAM_OWNER.
        if (verified && access !== 'manage') {
          throw apiError(Code.PermissionDenied, 'USER-VerifyPermission', 'isVerified is only for administrators (ORG_OWNER, IAM_OWNER) acting on another user');
        }
        if (delivery?.kind === 'return') requireManagerForReturnedCode(access, 'returnCode');
        const change: EmailChange = delivery === undefined ? await vouchedChange(trx, user, address, voucherOf(principal)) : { address, verified: false, delivery };
        try {
          return await changeContactEmail(trx, user, change, issueContext(principal));
        } catch (error) {
          throw codeMailError(error, 'sendCode.urlTemplate');
        }
      });
      gh.directory.clear();
      return { details: changeDetails(result.details), ...(result.code !== undefined ? { verificationCode: result.code } : {}) };
    },

    async resendEmailCode(req, ctx) {
      const principal = requirePrincipal(ctx);
      const delivery = codeDelivery(req.verification);
      const issued = await gh.db.transaction().execute(async (trx) => {
        const { access, row, user } = await lockedContact(trx, principal, req.userId);
        if (delivery.kind === 'return') requireManagerForReturnedCode(access, 'returnCode');
        if (row.email === null || row.email === '') throw apiError(Code.FailedPrecondition, 'USER-NoEmail', 'the user has no email');
        if (row.email_verified) throw apiError(Code.FailedPrecondition, 'USER-EmailVerified', 'the email is already verified');
        try {
          return await issueEmailCode(trx, user, delivery, issueContext(principal));
        } catch (error) {
          throw codeMailError(error, 'sendCode.urlTemplate');
        }
      });
      return { details: changeDetails(issued.details), ...(issued.code !== undefined ? { verificationCode: issued.code } : {}) };
    },

    async verifyEmail(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      requireHuman(target.row);
      if (req.verificationCode.trim() === '') throw fieldError('verificationCode', 'is required');
      const outcome = await verifyEmailCodeWithDetails(gh, target.row.id, req.verificationCode, { creator: creatorOf(principal) });
      switch (outcome.result) {
        case 'verified':
          if (outcome.details === undefined) throw new Error('verified without details');
          return { details: changeDetails(outcome.details) };
        case 'invalid':
          throw apiError(Code.InvalidArgument, 'USER-EmailCodeInvalid', 'verificationCode: is invalid');
        case 'expired':
          throw apiError(Code.FailedPrecondition, 'USER-EmailCodeExpired', 'verificationCode: has expired; ask for a new one with ResendEmailCode');
        case 'not_pending':
          throw apiError(Code.FailedPrecondition, 'USER-NoEmailCode', 'verificationCode: no email verification code is pending');
      }
    },
  };
}
