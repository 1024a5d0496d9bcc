/**
 * zitadel.user.v2 RegisterTOTP, VerifyTOTPRegistration, RemoveTOTP and ListAuthenticationMethodTypes:
 * the authenticator-app factor the login UI asks for and auth v1's AddMyAuthFactorOTP sets up
 * (domain/otp.ts: one factor per user, the secret sealed under the master key), for the user itself
 * or an administrator of it. Machine users have none (FailedPrecondition).
 *
 * - Wrong codes count towards the user's lockout (docs/security.md 10.3); while it is locked no code
 *   is checked.
 * - The user itself sets one up only with a recent sign-in that used every factor it has
 *   (domain/fresh-sign-in.ts); an administrator acting on another user is not asked.
 * - docs/security.md 10.4: the user itself removes a ready factor only with a token from a sign-in
 *   that used it (and no one acting for it); an administrator acting on another user removes it
 *   without (a lost authenticator is what it is there for).
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { AuthenticationMethodType, type UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { latestSequence } from '../../domain/kernel/events.ts';
import { countFailedAttempt } from '../../domain/sign-in/lockout.ts';
import { addOtpFactor, hasReadyOtp, OTP_AMR, otpSetupWouldAdd, removeOtpFactor, verifyOtpFactor, type OtpUser } from '../../domain/credentials/otp.ts';
import { hasReadyPasskey } from '../../domain/passkeys/passkeys.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import { countUserIdpLinks } from '../../store/idp-links.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { changeDetails, listDetails } from '../management/details.ts';
import { fieldError, lockedError, requireFreshSignIn, requireHuman } from './credentials-common.ts';
import { targetUser, userNotFound, type TargetUser } from './target.ts';

type TotpMethods = Pick<ServiceImpl<typeof UserService>, 'registerTOTP' | 'verifyTOTPRegistration' | 'removeTOTP' | 'listAuthenticationMethodTypes'>;

/** docs/security.md 10.4: the token comes from the user's own sign-in, and that sign-in used the authenticator app. */
function signedInWithOtp(principal: Principal): boolean {
  return principal.actorId === undefined && (principal.amr ?? []).includes(OTP_AMR);
}

export function totpMethods(gh: Gatehouse): TotpMethods {
  /** The human user the call names, as the OTP functions take it. */
  async function otpTarget(principal: Principal, userId: string): Promise<{ target: TargetUser; user: OtpUser }> {
    const target = await targetUser(gh.db, gh.instanceId, principal, userId, { allowSelf: true });
    requireHuman(target.row);
    const cached = await gh.directory.user(target.row.id);
    if (cached === undefined) throw userNotFound();
    return { target, user: { id: cached.id, orgId: cached.orgId, loginName: cached.loginName, creator: creatorOf(principal) } };
  }

  return {
    async registerTOTP(req, ctx) {
      const principal = requirePrincipal(ctx);
      const { target, user } = await otpTarget(principal, req.userId);
      if (await otpSetupWouldAdd(gh.db, user.id, 'add')) await requireFreshSignIn(gh.db, principal, target.access);
      const result = await addOtpFactor(gh, user);
      if (result.kind === 'exists') throw apiError(Code.AlreadyExists, 'USER-TOTPExists', 'the user already has a verified authenticator app (TOTP)');
      const { url, secret, details } = result.otp;
      return { details: { ...changeDetails(details), creationDate: timestampFromDate(details.creationDate) }, uri: url, secret };
    },

    async verifyTOTPRegistration(req, ctx) {
      const code = req.code.trim();
      if (code === '') throw fieldError('code', 'is required');
      const principal = requirePrincipal(ctx);
      const { target, user } = await otpTarget(principal, req.userId);
      if (await otpSetupWouldAdd(gh.db, user.id, 'verify')) await requireFreshSignIn(gh.db, principal, target.access);
      const now = new Date();
      const result = await verifyOtpFactor(gh, user, code, now, (trx) => countFailedAttempt(gh, { user, factor: 'otp' }, now, trx));
      switch (result.kind) {
        case 'verified':
          return { details: changeDetails(result.details) };
        case 'not_found':
          throw apiError(Code.NotFound, 'USER-TOTPNotFound', 'no authenticator app (TOTP) registration to verify: call RegisterTOTP first');
        case 'already_ready':
          throw apiError(Code.FailedPrecondition, 'USER-TOTPReady', 'the authenticator app (TOTP) is already verified');
        case 'locked':
          throw lockedError(result.until, now);
        case 'invalid':
          if (result.refusal.kind === 'locked') throw lockedError(result.refusal.until, now);
          throw apiError(Code.InvalidArgument, 'USER-TOTPInvalid', 'code: is invalid');
      }
    },

    async removeTOTP(req, ctx) {
      const principal = requirePrincipal(ctx);
      const { target, user } = await otpTarget(principal, req.userId);
      const result = await removeOtpFactor(gh, user, target.access === 'manage' || signedInWithOtp(principal));
      switch (result.kind) {
        case 'removed':
          return { details: changeDetails(result.details) };
        case 'not_found':
          throw apiError(Code.NotFound, 'USER-TOTPNotFound', 'the user has no authenticator app (TOTP)');
        case 'needs_otp_sign_in':
          throw apiError(Code.PermissionDenied, 'USER-TOTPSignInAgain', 'removing the authenticator app needs a sign-in that used it: sign in again with the authenticator app');
      }
    },

    async listAuthenticationMethodTypes(req, ctx) {
      const target = await targetUser(gh.db, gh.instanceId, requirePrincipal(ctx), req.userId, { allowSelf: true });
      const types: AuthenticationMethodType[] = [];
      if (target.row.kind === 'human') {
        if (target.row.password_hash !== null) types.push(AuthenticationMethodType.PASSWORD);
        // Passkeys are bound to a relying party id; `domainQuery.domain` asks about one of them.
        const domain = req.domainQuery?.domain.trim().toLowerCase() || undefined;
        if (await hasReadyPasskey(gh.db, target.row.id, domain)) types.push(AuthenticationMethodType.PASSKEY);
        // An account at an identity provider (docs/federation.md#links); the list keeps the enum's order.
        if ((await countUserIdpLinks(gh.db, target.row.id)) > 0) types.push(AuthenticationMethodType.IDP);
        if (await hasReadyOtp(gh.db, target.row.id)) types.push(AuthenticationMethodType.TOTP);
      }
      return { details: listDetails(types.length, await latestSequence(gh.db)), authMethodTypes: types };
    },
  };
}
