/**
 * zitadel.user.v2 StartIdentityProviderIntent and RetrieveIdentityProviderIntent
 * (docs/federation.md#the-intent-calls): a sign-in at an external identity provider for a login UI
 * of the caller's own, through the intents wing (domain/federation/intents.ts).
 *
 * - Who may call: ZITADEL's login holds IAM_LOGIN_CLIENT, a role Gatehouse does not have; here the
 *   caller needs a management role for the provider: IAM_OWNER, or ORG_OWNER of the organization
 *   an organization's provider belongs to. Another organization's provider is NotFound, as
 *   everywhere. RetrieveIdentityProviderIntent needs the same role and the intent's token.
 * - Only `urls`: Gatehouse has no LDAP providers, so `ldap` is InvalidArgument.
 * - The intent is used once: a second RetrieveIdentityProviderIntent is FailedPrecondition, as ZITADEL
 *   answers an intent its session check consumed. A wrong token is PermissionDenied.
 * - The user prefilled from the provider's answer (ZITADEL `internal/api/grpc/user/v2/intent.go`),
 *   in the deprecated fields older ZITADEL logins read and the `user_action` oneof its current login
 *   reads: `add_human_user` and `create_user` when no user is linked, `update_human_user` and
 *   `update_user` when one is. The email is marked verified only when an OpenID provider vouches for
 *   it (a generic OAuth server never does).
 */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import { Code, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { AddHumanUserRequestSchema, CreateUserRequestSchema, UpdateHumanUserRequestSchema, UpdateUserRequestSchema, UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { consumeIntent, IntentTokenRefused, startIntent, type IntentContext, type SucceededIntent } from '../../domain/federation/intents.ts';
import { anyProvider, type Provider } from '../../domain/federation/providers.ts';
import { latestSequence } from '../../domain/kernel/events.ts';
import { hasRole, type Principal } from '../../domain/kernel/principal.ts';
import { findIdpIntent } from '../../store/idp-intents.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { changeDetails } from '../management/details.ts';
import { permissionDenied } from '../management/access.ts';
import { fieldError } from './credentials-common.ts';

type IntentMethods = Pick<ServiceImpl<typeof UserService>, 'startIdentityProviderIntent' | 'retrieveIdentityProviderIntent'>;

const MAX_ID = 200;

export function intentContext(gh: Gatehouse): IntentContext {
  return { db: gh.db, instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, masterKey: gh.masterKey, allowPrivateNetworks: gh.config.idpAllowPrivateNetworks, log: gh.log };
}

function providerNotFound() {
  return apiError(Code.NotFound, 'IDP-NotFound', 'identity provider not found');
}

/** The provider, when the caller may sign in with it on behalf of a login UI; else NotFound or PermissionDenied. */
async function allowedProvider(gh: Gatehouse, principal: Principal, idpId: string): Promise<Provider> {
  const isOwner = hasRole(principal, 'IAM_OWNER');
  const orgOwner = hasRole(principal, 'ORG_OWNER');
  if (!isOwner && !orgOwner) throw permissionDenied();
  let provider: Provider;
  try {
    provider = await anyProvider(gh.db, gh.instanceId, idpId);
  } catch {
    throw providerNotFound();
  }
  if (isOwner) return provider;
  if (provider.orgId === null) throw permissionDenied(); // the instance's providers: IAM_OWNER
  if (!hasRole(principal, 'ORG_OWNER', provider.orgId)) throw providerNotFound(); // another organization's: as if not there
  return provider;
}

/** What the provider said, as the user fields of ZITADEL's requests: verified only where it vouches. */
function prefilledParts(intent: SucceededIntent) {
  const { profile } = intent;
  const userName = profile.userName ?? profile.email;
  return {
    userName,
    profile: {
      givenName: profile.givenName ?? '',
      familyName: profile.familyName ?? '',
      ...(profile.nickName !== undefined ? { nickName: profile.nickName } : {}),
      ...(profile.displayName !== undefined ? { displayName: profile.displayName } : {}),
      ...(profile.locale !== undefined ? { preferredLanguage: profile.locale } : {}),
    },
    email: { email: profile.email ?? '', ...(profile.emailVerified ? { verification: { case: 'isVerified' as const, value: true } } : {}) },
    phone: profile.phone === undefined ? undefined : { phone: profile.phone, ...(profile.phoneVerified ? { verification: { case: 'isVerified' as const, value: true } } : {}) },
  };
}

/** ZITADEL's prefilled AddHumanUserRequest (the deprecated field its own login still reads). */
function prefilledHuman(intent: SucceededIntent): MessageInitShape<typeof AddHumanUserRequestSchema> {
  const { userName, profile, email, phone } = prefilledParts(intent);
  return { ...(userName !== undefined ? { username: userName } : {}), profile, email, ...(phone !== undefined ? { phone } : {}), idpLinks: [linkOf(intent)] };
}

/** The account at the provider, to link to the user created from the prefilled request. */
function linkOf(intent: SucceededIntent) {
  return { idpId: intent.providerId, userId: intent.subject, userName: intent.userName ?? intent.profile.email ?? intent.subject };
}

/** The same user as ZITADEL's new CreateUserRequest, in the provider's organization (the instance's: none). */
function prefilledCreate(intent: SucceededIntent, organizationId: string): MessageInitShape<typeof CreateUserRequestSchema> {
  const { userName, profile, email, phone } = prefilledParts(intent);
  return {
    organizationId,
    ...(userName !== undefined ? { username: userName } : {}),
    userType: { case: 'human', value: { profile, email, ...(phone !== undefined ? { phone } : {}), idpLinks: [linkOf(intent)] } },
  };
}

/** For a linked user: its changes from what the provider said, as UpdateHumanUserRequest. */
function prefilledUpdate(intent: SucceededIntent, userId: string): MessageInitShape<typeof UpdateHumanUserRequestSchema> {
  const { userName, profile, email, phone } = prefilledParts(intent);
  return { userId, ...(userName !== undefined ? { username: userName } : {}), profile, ...(email.email !== '' ? { email } : {}), ...(phone !== undefined ? { phone } : {}) };
}

/**
 * The same changes as ZITADEL's new UpdateUserRequest. Its profile fields are each optional, so
 * only what the provider said is set: an unset field leaves the user's value as it is.
 */
function prefilledUserUpdate(intent: SucceededIntent, userId: string): MessageInitShape<typeof UpdateUserRequestSchema> {
  const { userName, email, phone } = prefilledParts(intent);
  const { givenName, familyName, nickName, displayName, locale } = intent.profile;
  const profile = {
    ...(givenName !== undefined ? { givenName } : {}),
    ...(familyName !== undefined ? { familyName } : {}),
    ...(nickName !== undefined ? { nickName } : {}),
    ...(displayName !== undefined ? { displayName } : {}),
    ...(locale !== undefined ? { preferredLanguage: locale } : {}),
  };
  return {
    userId,
    ...(userName !== undefined ? { username: userName } : {}),
    userType: { case: 'human', value: { profile, ...(email.email !== '' ? { email } : {}), ...(phone !== undefined ? { phone } : {}) } },
  };
}

function idField(value: string, field: string): string {
  if (value === '') throw fieldError(field, 'is required');
  if (value.length > MAX_ID) throw fieldError(field, `must be at most ${MAX_ID} characters`);
  return value;
}

export function intentMethods(gh: Gatehouse): IntentMethods {
  return {
    async startIdentityProviderIntent(req, ctx: HandlerContext) {
      const principal = requirePrincipal(ctx);
      const idpId = idField(req.idpId, 'idpId');
      if (req.content.case === 'ldap') throw fieldError('ldap', 'Gatehouse has no LDAP providers: start the sign-in with urls');
      if (req.content.case !== 'urls') throw fieldError('urls', 'is required (successUrl and failureUrl)');
      const provider = await allowedProvider(gh, principal, idpId);
      const urls = req.content.value;
      if (urls.successUrl === '') throw fieldError('urls.successUrl', 'is required');
      if (urls.failureUrl === '') throw fieldError('urls.failureUrl', 'is required');
      if ((urls.loginHint ?? '').length > 200) throw fieldError('urls.loginHint', 'must be at most 200 characters');
      const loginHint = urls.loginHint === undefined || urls.loginHint === '' ? {} : { loginHint: urls.loginHint };
      const started = await startIntent(intentContext(gh), { provider, successUrl: urls.successUrl, failureUrl: urls.failureUrl, ...loginHint });
      return { details: changeDetails(started.details), nextStep: { case: 'authUrl', value: started.authUrl } };
    },

    async retrieveIdentityProviderIntent(req, ctx) {
      const principal = requirePrincipal(ctx);
      const intentId = idField(req.idpIntentId, 'idpIntentId');
      const token = idField(req.idpIntentToken, 'idpIntentToken');
      const row = await findIdpIntent(gh.db, gh.instanceId, intentId);
      // The role is checked for the intent's provider before the intent is used up; an unknown
      // intent is answered by the wing (FailedPrecondition, as ZITADEL).
      const provider = row === undefined ? undefined : await allowedProvider(gh, principal, row.idp_id);
      let intent: SucceededIntent;
      try {
        intent = await consumeIntent(intentContext(gh), intentId, token);
      } catch (error) {
        if (error instanceof IntentTokenRefused) throw apiError(Code.PermissionDenied, error.id, error.message);
        throw error;
      }
      // ZITADEL's generic OAuth provider hands on the user endpoint's answer under RawInfo; an OpenID provider's claims as they are.
      const raw = provider?.kind === 'oauth' ? { RawInfo: intent.raw } : intent.raw;
      return {
        details: changeDetails({ sequence: await latestSequence(gh.db), changeDate: new Date(), resourceOwner: provider?.orgId ?? gh.instanceId }),
        idpInformation: {
          access: {
            case: 'oauth',
            value: {
              accessToken: intent.tokens.accessToken,
              ...(intent.tokens.idToken !== undefined ? { idToken: intent.tokens.idToken } : {}),
              ...(intent.tokens.refreshToken !== undefined ? { refreshToken: intent.tokens.refreshToken } : {}),
            },
          },
          idpId: intent.providerId,
          userId: intent.subject,
          userName: intent.userName ?? '',
          rawInformation: raw as JsonObject,
        },
        userId: intent.linkedUserId ?? '',
        // Both the deprecated field and the new one, as ZITADEL fills them (older logins read the old).
        ...(intent.linkedUserId === undefined
          ? { addHumanUser: prefilledHuman(intent), userAction: { case: 'createUser' as const, value: prefilledCreate(intent, provider?.orgId ?? '') } }
          : { updateHumanUser: prefilledUpdate(intent, intent.linkedUserId), userAction: { case: 'updateUser' as const, value: prefilledUserUpdate(intent, intent.linkedUserId) } }),
      };
    },
  };
}
