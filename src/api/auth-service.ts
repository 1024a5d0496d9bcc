/**
 * zitadel.auth.v1.AuthService: the caller's own authenticator-app factor
 * (docs/endpoints.md#authservice-the-authenticator-app). Every call acts on the authenticated user
 * ("me"); the scope `openid` and the API audience are checked by the auth interceptor. Machine users
 * have no second factor (FailedPrecondition).
 *
 * - A wrong verification code counts towards the user's lockout exactly like a wrong password in
 *   the login UI; a right one resets nothing (docs/security.md 10.3: only a complete sign-in or an
 *   administrator's unlock does), so codes tried here cannot wipe failures counted at the login.
 * - Removing a ready factor needs a token from a sign-in that used it (docs/security.md 10.4). A
 *   token someone acts with (RFC 8693 `act`) never qualifies: its `amr` may be the actor's sign-in,
 *   not the user's.
 * - Setting one up (add and verify) needs a sign-in of the user's own within the last 10 minutes
 *   that used every factor it has (domain/fresh-sign-in.ts).
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import type { ObjectDetailsSchema } from '../../gen/zitadel/object_pb.js';
import type { Gatehouse } from '../context.ts';
import type { ChangeDetails } from '../domain/kernel/events.ts';
import { countFailedAttempt, minutesUntil } from '../domain/sign-in/lockout.ts';
import { addOtpFactor, OTP_AMR, otpSetupWouldAdd, removeOtpFactor, verifyOtpFactor, type OtpUser } from '../domain/credentials/otp.ts';
import { creatorOf, type Principal } from '../domain/kernel/principal.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';
import { requireFreshSignIn } from './user-v2/credentials-common.ts';

export function createAuthService(gh: Gatehouse): ServiceImpl<typeof AuthService> {
  /** The caller, who sets up an authenticator app only with a recent sign-in that used every factor it has. */
  async function freshHumanCaller(ctx: HandlerContext, step: 'add' | 'verify'): Promise<OtpUser> {
    const user = await humanCaller(ctx);
    if (await otpSetupWouldAdd(gh.db, user.id, step)) await requireFreshSignIn(gh.db, requirePrincipal(ctx), 'self');
    return user;
  }

  async function humanCaller(ctx: HandlerContext): Promise<OtpUser> {
    const principal = requirePrincipal(ctx);
    if (principal.kind !== 'human') throw apiError(Code.FailedPrecondition, 'AUTH-OTP-Machine', 'machine users have no OTP factor');
    const user = await gh.directory.user(principal.userId);
    if (!user) throw apiError(Code.NotFound, 'AUTH-OTP-NoUser', 'user not found');
    if (user.kind !== 'human') throw apiError(Code.FailedPrecondition, 'AUTH-OTP-Machine', 'machine users have no OTP factor');
    return { id: user.id, orgId: user.orgId, loginName: user.loginName, creator: creatorOf(principal) };
  }

  return {
    async addMyAuthFactorOTP(_req, ctx) {
      const user = await freshHumanCaller(ctx, 'add');
      const result = await addOtpFactor(gh, user);
      if (result.kind === 'exists') throw apiError(Code.AlreadyExists, 'AUTH-OTP-Exists', 'an OTP factor is already set up');
      const { url, secret, details } = result.otp;
      return { url, secret, details: { ...toDetails(details), creationDate: timestampFromDate(details.creationDate) } };
    },

    async verifyMyAuthFactorOTP(req, ctx) {
      const user = await freshHumanCaller(ctx, 'verify');
      const now = new Date();
      const result = await verifyOtpFactor(gh, user, req.code.trim(), now, (trx) => countFailedAttempt(gh, { user, factor: 'otp' }, now, trx));
      switch (result.kind) {
        case 'verified':
          return { details: toDetails(result.details) };
        case 'not_found':
          throw apiError(Code.NotFound, 'AUTH-OTP-NotFound', 'no OTP factor to verify');
        case 'already_ready':
          throw apiError(Code.FailedPrecondition, 'AUTH-OTP-Ready', 'the OTP factor is already verified');
        case 'locked':
          throw lockedError(result.until, now);
        case 'invalid': {
          if (result.refusal.kind === 'locked') throw lockedError(result.refusal.until, now);
          throw apiError(Code.InvalidArgument, 'AUTH-OTP-Invalid', 'the code is invalid');
        }
      }
    },

    async removeMyAuthFactorOTP(_req, ctx) {
      const user = await humanCaller(ctx);
      const result = await removeOtpFactor(gh, user, signedInWithOtp(requirePrincipal(ctx)));
      switch (result.kind) {
        case 'not_found':
          throw apiError(Code.NotFound, 'AUTH-OTP-NotFound', 'no OTP factor to remove');
        case 'needs_otp_sign_in':
          throw apiError(Code.PermissionDenied, 'AUTH-OTP-SignInAgain', 'removing the OTP factor needs a sign-in that used it: sign in again with the authenticator app');
        case 'removed':
          return { details: toDetails(result.details) };
      }
    },
  };
}

/** docs/security.md 10.4: the token comes from the user's own sign-in, and that sign-in used the authenticator app. */
function signedInWithOtp(principal: Principal): boolean {
  return principal.actorId === undefined && (principal.amr ?? []).includes(OTP_AMR);
}

/** Too many wrong codes or passwords: the user is locked (docs/decisions.md#login-names-and-lockout), so no code is checked. */
function lockedError(until: Date, now: Date): ConnectError {
  return apiError(Code.ResourceExhausted, 'AUTH-OTP-Locked', `too many failed attempts: the user is locked for ${minutesUntil(until, now)} more minute(s)`);
}

function toDetails(details: ChangeDetails): MessageInitShape<typeof ObjectDetailsSchema> {
  return {
    sequence: BigInt(details.sequence),
    changeDate: timestampFromDate(details.changeDate),
    resourceOwner: details.resourceOwner,
  };
}
