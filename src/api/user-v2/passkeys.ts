/**
 * zitadel.user.v2 RegisterPasskey, VerifyPasskeyRegistration, ListPasskeys, RemovePasskey and
 * CreatePasskeyRegistrationLink (docs/passkeys.md#the-api; docs/security.md 10.1, 10.2, 10.13), over
 * domain/passkeys.ts:
 *
 * - The user itself or an administrator of it (target.ts); the user itself adds one only with a
 *   recent sign-in that used every factor it has (domain/fresh-sign-in.ts); machine users have no passkeys
 *   (FailedPrecondition). With passkeys disabled (an IP-address external URL) every call is
 *   FailedPrecondition saying why.
 * - RegisterPasskey returns the creation options as ZITADEL does, `{"publicKey": {...}}` with
 *   base64url strings, for navigator.credentials.create() on a page of Gatehouse's origin. A `code`
 *   from CreatePasskeyRegistrationLink stands in for the right to act on the user (ZITADEL's
 *   semantics): any authenticated caller holding it starts one registration, and may finish that
 *   one. A wrong code, a user that does not exist and a user that has no code get the same answer.
 * - A registration not verified within 5 minutes lapses (FailedPrecondition: start again).
 * - CreatePasskeyRegistrationLink mails a link (to Gatehouse's passkey page, or `urlTemplate` with
 *   {{.UserID}}, {{.OrgID}}, {{.CodeID}}, {{.Code}}) to the verified address, under the code mail
 *   limits, or returns the code to an administrator acting on another user (docs/security.md 10.1).
 * - RemovePasskey: the user itself may not remove its last passkey when it has no password.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { PasskeyAuthenticator } from '../../../gen/zitadel/user/v2/auth_pb.js';
import { AuthFactorState } from '../../../gen/zitadel/user/v2/user_pb.js';
import type { CreatePasskeyRegistrationLinkRequest, RegisterPasskeyRequest, UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { latestSequence } from '../../domain/kernel/events.ts';
import { checkPasskeyLinkTemplate, issuePasskeyCode, type PasskeyCodeDelivery } from '../../domain/passkeys/passkey-codes.ts';
import { relyingParty } from '../../domain/passkeys/passkey-party.ts';
import { finishPasskeyRegistration, startedWithCodeBy, startPasskeyRegistration, type AuthenticatorAttachment } from '../../domain/passkeys/passkey-registration.ts';
import { listPasskeys, loadPasskeyUser, removePasskey, type PasskeyUser } from '../../domain/passkeys/passkeys.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import { TemplateError } from '../../mail/template.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { changeDetails, listDetails } from '../management/details.ts';
import { codeMailError, codeRecipient, fieldError, requireFreshSignIn, requireHuman } from './credentials-common.ts';
import { targetUser, userNotFound } from './target.ts';

type PasskeyMethods = Pick<
  ServiceImpl<typeof UserService>,
  'registerPasskey' | 'verifyPasskeyRegistration' | 'listPasskeys' | 'removePasskey' | 'createPasskeyRegistrationLink'
>;

/** Longest id, code or name looked at (ZITADEL's own limit on these fields). */
const MAX_FIELD = 200;

function requiredText(value: string, field: string): string {
  const text = value.trim();
  if (text === '') throw fieldError(field, 'is required');
  if ([...text].length > MAX_FIELD) throw fieldError(field, `must be at most ${MAX_FIELD} characters`);
  return text;
}

function invalidCode() {
  return apiError(Code.InvalidArgument, 'USER-PasskeyCodeInvalid', 'code: is invalid');
}

function passkeyNotFound() {
  return apiError(Code.NotFound, 'USER-PasskeyNotFound', 'passkey not found');
}

function attachment(value: PasskeyAuthenticator): AuthenticatorAttachment | undefined {
  switch (value) {
    case PasskeyAuthenticator.UNSPECIFIED:
      return undefined;
    case PasskeyAuthenticator.PLATFORM:
      return 'platform';
    case PasskeyAuthenticator.CROSS_PLATFORM:
      return 'cross-platform';
    default:
      throw fieldError('authenticator', 'unknown value');
  }
}

/** The code of RegisterPasskey, checked for shape. */
function givenCode(code: RegisterPasskeyRequest['code']): { id: string; code: string } | undefined {
  if (code === undefined) return undefined;
  return { id: requiredText(code.id, 'code.id'), code: requiredText(code.code, 'code.code') };
}

/** How a registration code travels; a template's syntax is checked before the user is looked up. */
function codeDelivery(medium: CreatePasskeyRegistrationLinkRequest['medium']): PasskeyCodeDelivery {
  if (medium.case === 'returnCode') return { kind: 'return' };
  const urlTemplate = medium.case === 'sendLink' ? medium.value.urlTemplate : undefined;
  if (urlTemplate !== undefined) {
    try {
      checkPasskeyLinkTemplate(urlTemplate);
    } catch (error) {
      if (error instanceof TemplateError) throw fieldError('sendLink.urlTemplate', error.message);
      throw error;
    }
  }
  return { kind: 'send', urlTemplate };
}

/** The options as the browser's JSON form: a plain object without undefined members. */
function asJson(value: object): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

export function passkeyMethods(gh: Gatehouse): PasskeyMethods {
  /** The relying party id, or FailedPrecondition saying why passkeys are off. */
  function requireEnabled(): string {
    const party = relyingParty(gh.config);
    if (!party.enabled) throw apiError(Code.FailedPrecondition, 'USER-PasskeysDisabled', party.reason);
    return party.id;
  }

  /** The human user the call names, after the permission check. */
  async function passkeyTarget(principal: Principal, userId: string): Promise<{ access: 'self' | 'manage'; user: PasskeyUser }> {
    const target = await targetUser(gh.db, gh.instanceId, principal, userId, { allowSelf: true });
    requireHuman(target.row);
    const user = await loadPasskeyUser(gh.db, gh.instanceId, target.row.id);
    if (user === undefined) throw userNotFound();
    return { access: target.access, user };
  }

  /** The user a passkey is added to without a code: the user itself needs a fresh, full sign-in. */
  async function freshTarget(principal: Principal, userId: string): Promise<PasskeyUser> {
    const { access, user } = await passkeyTarget(principal, userId);
    await requireFreshSignIn(gh.db, principal, access);
    return user;
  }

  /** The user of a registration started with a code: no permission needed, one answer for every miss. */
  async function codeTarget(userId: string): Promise<PasskeyUser> {
    const user = userId === '' ? undefined : await loadPasskeyUser(gh.db, gh.instanceId, userId);
    if (user === undefined || user.kind !== 'human') throw invalidCode();
    return user;
  }

  return {
    async registerPasskey(req, ctx) {
      const principal = requirePrincipal(ctx);
      const rpId = requireEnabled();
      if (req.domain !== '' && req.domain.toLowerCase() !== rpId) throw fieldError('domain', `must be empty or ${rpId}, the relying party id of this server`);
      const wanted = attachment(req.authenticator);
      const code = givenCode(req.code);
      const user = code === undefined ? await freshTarget(principal, req.userId) : await codeTarget(req.userId);
      const result = await startPasskeyRegistration(gh, user, {
        attachment: wanted,
        creator: creatorOf(principal),
        code: code === undefined ? undefined : { ...code, holder: principal.userId },
      });
      if (result.kind === 'invalid_code') throw invalidCode();
      const { passkeyId, options, details } = result.registration;
      return { details: changeDetails(details), passkeyId, publicKeyCredentialCreationOptions: { publicKey: asJson(options) } };
    },

    async verifyPasskeyRegistration(req, ctx) {
      const principal = requirePrincipal(ctx);
      requireEnabled();
      const passkeyId = requiredText(req.passkeyId, 'passkeyId');
      const name = requiredText(req.passkeyName, 'passkeyName');
      if (req.publicKeyCredential === undefined) throw fieldError('publicKeyCredential', 'is required');
      const byCode = req.userId !== '' && (await startedWithCodeBy(gh.db, req.userId, passkeyId, principal.userId));
      const user = byCode ? await codeTarget(req.userId) : await freshTarget(principal, req.userId);
      const result = await finishPasskeyRegistration(gh, user, { passkeyId, credential: req.publicKeyCredential, name, creator: creatorOf(principal) });
      switch (result.kind) {
        case 'verified':
          return { details: changeDetails(result.details) };
        case 'not_found':
          throw passkeyNotFound();
        case 'expired':
          throw apiError(Code.FailedPrecondition, 'USER-PasskeyExpired', 'the passkey registration expired (it must be verified within 5 minutes): start again with RegisterPasskey');
        case 'already_ready':
          throw apiError(Code.FailedPrecondition, 'USER-PasskeyReady', 'the passkey is already verified');
        case 'invalid':
          throw apiError(Code.InvalidArgument, 'USER-PasskeyInvalid', 'publicKeyCredential: is not a valid answer to this registration');
        case 'exists':
          throw apiError(Code.AlreadyExists, 'USER-PasskeyExists', 'publicKeyCredential: this passkey is registered already');
      }
    },

    async listPasskeys(req, ctx) {
      requireEnabled();
      const { user } = await passkeyTarget(requirePrincipal(ctx), req.userId);
      const passkeys = await listPasskeys(gh.db, user.id);
      return {
        details: listDetails(passkeys.length, await latestSequence(gh.db)),
        result: passkeys.map((p) => ({ id: p.id, name: p.name, state: p.state === 'ready' ? AuthFactorState.READY : AuthFactorState.NOT_READY })),
      };
    },

    async removePasskey(req, ctx) {
      const principal = requirePrincipal(ctx);
      requireEnabled();
      const passkeyId = requiredText(req.passkeyId, 'passkeyId');
      const { access, user } = await passkeyTarget(principal, req.userId);
      const result = await removePasskey(gh, user, passkeyId, { creator: creatorOf(principal), byAdministrator: access === 'manage' });
      switch (result.kind) {
        case 'removed':
          return { details: changeDetails(result.details) };
        case 'not_found':
          throw passkeyNotFound();
        case 'last_sign_in_method':
          throw apiError(
            Code.FailedPrecondition,
            'USER-PasskeyLast',
            'this is your last passkey and you have no password: add another passkey or set a password before removing it',
          );
      }
    },

    async createPasskeyRegistrationLink(req, ctx) {
      const principal = requirePrincipal(ctx);
      requireEnabled();
      const delivery = codeDelivery(req.medium);
      const issued = await gh.db.transaction().execute(async (trx) => {
        const user = await codeRecipient(trx, gh.instanceId, principal, req.userId, delivery.kind, 'a passkey registration link', { addsCredential: true });
        try {
          return await issuePasskeyCode(trx, user, delivery, { externalUrl: gh.config.externalUrl, creator: creatorOf(principal) });
        } catch (error) {
          throw codeMailError(error, 'sendLink.urlTemplate');
        }
      });
      return { details: changeDetails(issued.details), ...(issued.code !== undefined ? { code: { id: issued.codeId, code: issued.code } } : {}) };
    },
  };
}
