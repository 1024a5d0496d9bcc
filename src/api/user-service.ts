/**
 * zitadel.user.v3alpha.UserService: the contact email calls
 * (docs/endpoints.md#userservice-v3alpha-the-contact-email). Scopes (openid and the API audience) are
 * checked by the auth interceptor; this file checks permissions:
 *
 * - The user itself, or a caller who may manage it (domain/permissions.ts: IAM_OWNER; ORG_OWNER of
 *   the user's org unless the user holds an instance-wide role, docs/security.md 10.13) may act;
 *   anyone else gets PermissionDenied.
 * - docs/security.md 10.1: `returnCode` and `isVerified` are for callers managing *another* user. A
 *   user acting on itself (whatever its roles) gets PermissionDenied for them and receives its codes
 *   by mail, so `email_verified` always means someone read a mail at the address, or an administrator
 *   vouched.
 * - An unknown user id is NotFound only for IAM_OWNER (the only caller who may see every org) and
 *   for a caller whose own id it is; everyone else gets the same PermissionDenied as for a known
 *   user they may not act on, so the answer does not tell which ids exist.
 * - Machine users have no contact email: FailedPrecondition. No email set, or already verified
 *   (resend): FailedPrecondition. Invalid URL template or email address, or a link leading outside
 *   Gatehouse and the user's organization's applications (docs/security.md 10.2): InvalidArgument. A
 *   code mail over a limit (docs/security.md 10.2): ResourceExhausted with Retry-After, nothing
 *   changed.
 * - Verify: a wrong code (or one void after too many tries) is InvalidArgument; an expired code or
 *   no pending code is FailedPrecondition.
 *
 * - The request itself (address, URL template syntax) is validated before the user is looked up:
 *   that answer depends on the request only, so it reveals nothing about the user.
 *
 * Every response carries `details` of the event the call appended (resource owner: the user's org).
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import type { DetailsSchema } from '../../gen/zitadel/object/v2beta/object_pb.js';
import type { SendEmailVerificationCode } from '../../gen/zitadel/user/v3alpha/communication_pb.js';
import { UserService } from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { isValidEmail } from '../domain/users/email-address.ts';
import { issueEmailCode, verifyEmailCodeWithDetails, type CodeDelivery, type EmailCodeUser } from '../domain/credentials/email-codes.ts';
import { changeContactEmail, vouchedChange, type EmailChange } from '../domain/users/contact-email.ts';
import type { ChangeDetails } from '../domain/kernel/events.ts';
import { accessTo, type UserAccess } from '../domain/users/permissions.ts';
import { creatorOf, hasRole, type Principal } from '../domain/kernel/principal.ts';
import { parseUrlTemplate, TemplateError } from '../mail/template.ts';
import type { DB } from '../store/database.ts';
import { findContactUserForUpdate, listUserRoles } from '../store/users.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';
import { voucherOf } from './management/access.ts';

interface TargetUser extends EmailCodeUser {
  kind: 'human' | 'machine';
  emailVerified: boolean;
  rawEmail: string | null;
  /** How far the caller may act on this user: itself, or as its administrator. */
  access: Exclude<UserAccess, 'none'>;
}

export function createUserService(gh: Gatehouse): ServiceImpl<typeof UserService> {
  /** Loads (and locks) the user the call names, after the permission check. */
  async function target(db: DB, principal: Principal, userId: string): Promise<TargetUser> {
    const row = userId === '' ? undefined : await findContactUserForUpdate(db, gh.instanceId, userId);
    if (row === undefined) {
      if (hasRole(principal, 'IAM_OWNER') || principal.userId === userId) throw apiError(Code.NotFound, 'USER-NotFound', 'user not found');
      throw permissionDenied();
    }
    const roles = await listUserRoles(db, row.id);
    const access = accessTo(principal, { id: row.id, orgId: row.org_id, roles: roles.map((r) => ({ role: r.role, orgId: r.scope_org_id })) });
    if (access === 'none') throw permissionDenied();
    if (row.kind !== 'human') throw apiError(Code.FailedPrecondition, 'USER-Machine', 'machine users have no contact email');
    return {
      access,
      id: row.id,
      instanceId: row.instance_id,
      orgId: row.org_id,
      kind: row.kind,
      email: row.email ?? '',
      rawEmail: row.email,
      emailVerified: row.email_verified,
      preferredLanguage: row.preferred_language,
      name: row.display_name ?? row.given_name,
    };
  }

  /** How the code travels; a template's syntax is checked here, where it leads once the user is known. */
  function delivery(send: SendEmailVerificationCode | undefined, returnCode: boolean): CodeDelivery {
    if (returnCode) return { kind: 'return' };
    const urlTemplate = send?.urlTemplate;
    try {
      if (urlTemplate !== undefined) parseUrlTemplate(urlTemplate);
    } catch (error) {
      throw asIssueError(error);
    }
    return { kind: 'send', urlTemplate };
  }

  async function issue(db: DB, user: TargetUser, how: CodeDelivery, principal: Principal) {
    try {
      return await issueEmailCode(db, user, how, { externalUrl: gh.config.externalUrl, creator: creatorOf(principal), voucher: voucherOf(principal) });
    } catch (error) {
      throw asIssueError(error);
    }
  }

  return {
    async resendContactEmailCode(req, ctx) {
      const principal = requirePrincipal(ctx);
      const how = delivery(req.verification.case === 'sendCode' ? req.verification.value : undefined, req.verification.case === 'returnCode');
      const issued = await gh.db.transaction().execute(async (trx) => {
        const user = await target(trx, principal, req.userId);
        checkReturnCode(user, how);
        if (user.rawEmail === null || user.rawEmail === '') throw apiError(Code.FailedPrecondition, 'EMAIL-NoEmail', 'the user has no contact email');
        if (user.emailVerified) throw apiError(Code.FailedPrecondition, 'EMAIL-AlreadyVerified', 'the contact email is already verified');
        return issue(trx, user, how, principal);
      });
      return { details: toDetails(issued.details), ...(issued.code !== undefined ? { verificationCode: issued.code } : {}) };
    },

    async setContactEmail(req, ctx) {
      const principal = requirePrincipal(ctx);
      const email = req.email;
      if (email === undefined) throw apiError(Code.InvalidArgument, 'EMAIL-Missing', 'email is required');
      const address = email.address.trim();
      if (!isValidEmail(address)) throw apiError(Code.InvalidArgument, 'EMAIL-Invalid', 'email address is invalid');
      const verified = email.verification.case === 'isVerified' && email.verification.value;
      const how = verified ? undefined : delivery(email.verification.case === 'sendCode' ? email.verification.value : undefined, email.verification.case === 'returnCode');
      const result = await gh.db.transaction().execute(async (trx) => {
        const user = await target(trx, principal, req.userId);
        // docs/security.md 10.1: nobody vouches for its own address, not even an IAM_OWNER.
        if (verified && user.access !== 'manage') {
          throw apiError(Code.PermissionDenied, 'EMAIL-VerifyPermission', 'isVerified is only for administrators (ORG_OWNER, IAM_OWNER) acting on another user');
        }
        checkReturnCode(user, how);
        const change: EmailChange = how === undefined ? await vouchedChange(trx, user, address, voucherOf(principal)) : { address, verified: false, delivery: how };
        try {
          return await changeContactEmail(trx, user, change, { externalUrl: gh.config.externalUrl, creator: creatorOf(principal), voucher: voucherOf(principal) });
        } catch (error) {
          throw asIssueError(error);
        }
      });
      gh.directory.clear();
      return { details: toDetails(result.details), ...(result.code !== undefined ? { verificationCode: result.code } : {}) };
    },

    async verifyContactEmail(req, ctx) {
      const principal = requirePrincipal(ctx);
      await gh.db.transaction().execute((trx) => target(trx, principal, req.userId));
      if (req.verificationCode.trim() === '') throw apiError(Code.InvalidArgument, 'EMAIL-CodeMissing', 'verification code is required');
      const outcome = await verifyEmailCodeWithDetails(gh, req.userId, req.verificationCode, { creator: creatorOf(principal) });
      switch (outcome.result) {
        case 'verified':
          if (outcome.details === undefined) throw new Error('verified without details');
          return { details: toDetails(outcome.details) };
        case 'invalid':
          throw apiError(Code.InvalidArgument, 'EMAIL-CodeInvalid', 'verification code is invalid');
        case 'expired':
          throw apiError(Code.FailedPrecondition, 'EMAIL-CodeExpired', 'verification code has expired');
        case 'not_pending':
          throw apiError(Code.FailedPrecondition, 'EMAIL-NoCode', 'no verification code is pending');
      }
    },
  };
}

/** docs/security.md 10.1: a code handed to the caller proves nothing about the mailbox; only for administrators. */
function checkReturnCode(user: TargetUser, how: CodeDelivery | undefined): void {
  if (how?.kind === 'return' && user.access !== 'manage') {
    throw apiError(Code.PermissionDenied, 'EMAIL-ReturnCodeSelf', 'returnCode is only for administrators acting on another user: your code is sent by mail');
  }
}

function permissionDenied() {
  return apiError(Code.PermissionDenied, 'USER-Permission', 'no permission for this user');
}

/** A link template the domain refused (it leads elsewhere than code mails may) as an API error; anything else as is. */
function asIssueError(error: unknown): unknown {
  return error instanceof TemplateError ? apiError(Code.InvalidArgument, 'EMAIL-Template', error.message) : error;
}

function toDetails(details: ChangeDetails): MessageInitShape<typeof DetailsSchema> {
  return { sequence: BigInt(details.sequence), changeDate: timestampFromDate(details.changeDate), resourceOwner: details.resourceOwner };
}
