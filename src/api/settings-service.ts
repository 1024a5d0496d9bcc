/**
 * zitadel.settings.v2.SettingsService: the effective settings of an organization
 * (docs/branding-and-login-policy.md#reading-the-effective-settings): its own policy, else the
 * instance's, as ZITADEL's reads answer. Written through the v1 calls (management-service.ts,
 * admin-service.ts).
 *
 * - `ctx.orgId` names the organization, `ctx.instance` asks for the instance's; without ctx, the
 *   caller's organization. Reading an organization's settings needs ORG_OWNER of it or IAM_OWNER
 *   (ZITADEL's `policy.read`); the instance's, any of the two roles.
 * - Branding is the active policy (never the preview), with absolute image URLs, ThemeMode in the
 *   v2 numbering (unset reads as AUTO).
 * - Active identity providers: the effective login policy's list, when it allows external sign-in.
 * - Password complexity and lockout are the instance's fixed rules (docs/decisions.md): the same for
 *   every organization.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { DetailsSchema, RequestContext } from '../../gen/zitadel/object/v2/object_pb.js';
import { ThemeMode } from '../../gen/zitadel/settings/v2/branding_settings_pb.js';
import { MultiFactorType, PasskeysType, SecondFactorType } from '../../gen/zitadel/settings/v2/login_settings_pb.js';
import { ResourceOwnerType } from '../../gen/zitadel/settings/v2/settings_pb.js';
import type { SettingsService } from '../../gen/zitadel/settings/v2/settings_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { PASSWORD_MIN_LENGTH } from '../domain/credentials/password-policy.ts';
import type { OrgSettings } from '../domain/instance/directory.ts';
import type { MultiFactor, SecondFactor } from '../domain/instance/policies.ts';
import { LOCKOUT_THRESHOLD } from '../domain/sign-in/lockout.ts';
import { LOCALES } from '../http/locale.ts';
import type { ThemeModeName } from '../store/schema.ts';
import { findInstance } from '../store/instances.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { requireManager } from './management/access.ts';
import { activeProviders } from '../domain/federation/providers.ts';
import { toActiveProvider } from './idp/views.ts';
import { durations, imageUrls, managedOrg } from './policy/views.ts';

const V2_THEME: Record<ThemeModeName, ThemeMode> = { unspecified: ThemeMode.AUTO, auto: ThemeMode.AUTO, light: ThemeMode.LIGHT, dark: ThemeMode.DARK };
const V2_SECOND: Record<SecondFactor, SecondFactorType> = { otp: SecondFactorType.OTP, u2f: SecondFactorType.U2F, otp_email: SecondFactorType.OTP_EMAIL, otp_sms: SecondFactorType.OTP_SMS };
const V2_MULTI: Record<MultiFactor, MultiFactorType> = { u2f_with_verification: MultiFactorType.U2F_WITH_VERIFICATION };

export function createSettingsService(gh: Gatehouse): Partial<ServiceImpl<typeof SettingsService>> {
  /** The organization the request asks about (undefined: the instance), checked against the caller. */
  async function ownerOf(reqCtx: RequestContext | undefined, ctx: HandlerContext): Promise<string | undefined> {
    const principal = requirePrincipal(ctx);
    switch (reqCtx?.resourceOwner.case) {
      case 'instance':
        if (reqCtx.resourceOwner.value) {
          requireManager(principal);
          return undefined;
        }
        return managedOrg(gh, principal, undefined);
      case 'orgId':
        return managedOrg(gh, principal, reqCtx.resourceOwner.value);
      default:
        return managedOrg(gh, principal, undefined);
    }
  }

  async function settings(reqCtx: RequestContext | undefined, ctx: HandlerContext): Promise<{ orgId: string | undefined; settings: OrgSettings }> {
    const orgId = await ownerOf(reqCtx, ctx);
    return { orgId, settings: await gh.directory.orgSettings(gh.instanceId, orgId) };
  }

  function details(owner: string, created: Date | undefined, changed: Date | undefined): MessageInitShape<typeof DetailsSchema> {
    return {
      resourceOwner: owner,
      ...(created === undefined ? {} : { creationDate: timestampFromDate(created) }),
      ...(changed === undefined ? {} : { changeDate: timestampFromDate(changed) }),
    };
  }

  const ownerType = (source: 'org' | 'instance' | 'default') => (source === 'org' ? ResourceOwnerType.ORG : ResourceOwnerType.INSTANCE);

  return {
    async getGeneralSettings(_req, ctx) {
      requireManager(requirePrincipal(ctx));
      const instance = await findInstance(gh.db, gh.instanceId);
      return { defaultOrgId: instance?.default_org_id ?? '', defaultLanguage: 'en', supportedLanguages: [...LOCALES] };
    },

    async getLoginSettings(req, ctx) {
      const { orgId, settings: { login } } = await settings(req.ctx, ctx);
      return {
        details: details(login.source === 'org' && orgId !== undefined ? orgId : gh.instanceId, login.createdAt, login.changedAt),
        settings: {
          allowUsernamePassword: login.allowUsernamePassword,
          allowRegister: login.allowRegister,
          allowExternalIdp: login.allowExternalIdp,
          forceMfa: login.forceMfa,
          forceMfaLocalOnly: login.forceMfaLocalOnly,
          passkeysType: login.passwordlessAllowed ? PasskeysType.ALLOWED : PasskeysType.NOT_ALLOWED,
          hidePasswordReset: login.hidePasswordReset,
          ignoreUnknownUsernames: login.ignoreUnknownUsernames,
          defaultRedirectUri: login.defaultRedirectUri,
          ...durations(login),
          secondFactors: login.secondFactors.map((f) => V2_SECOND[f]),
          multiFactors: login.multiFactors.map((f) => V2_MULTI[f]),
          allowDomainDiscovery: login.allowDomainDiscovery,
          disableLoginWithEmail: login.disableLoginWithEmail,
          disableLoginWithPhone: login.disableLoginWithPhone,
          resourceOwnerType: ownerType(login.source),
        },
      };
    },

    async getBrandingSettings(req, ctx) {
      const { settings: { branding } } = await settings(req.ctx, ctx);
      const urls = imageUrls(gh.config.externalUrl, branding);
      return {
        details: details(branding.ownerId, branding.createdAt, branding.changedAt),
        settings: {
          lightTheme: {
            primaryColor: branding.primaryColor, backgroundColor: branding.backgroundColor, warnColor: branding.warnColor, fontColor: branding.fontColor,
            logoUrl: urls.logo, iconUrl: urls.icon,
          },
          darkTheme: {
            primaryColor: branding.primaryColorDark, backgroundColor: branding.backgroundColorDark, warnColor: branding.warnColorDark, fontColor: branding.fontColorDark,
            logoUrl: urls.logoDark, iconUrl: urls.iconDark,
          },
          hideLoginNameSuffix: branding.hideLoginNameSuffix,
          disableWatermark: branding.disableWatermark,
          resourceOwnerType: ownerType(branding.source),
          themeMode: V2_THEME[branding.themeMode],
        },
      };
    },

    // The providers offered at sign-in (docs/federation.md): those the effective login policy lists,
    // when it allows external sign-in; each filter given keeps the providers whose option matches.
    async getActiveIdentityProviders(req, ctx) {
      const orgId = await ownerOf(req.ctx, ctx);
      const providers = (await activeProviders(gh.db, gh.instanceId, orgId)).filter(
        (p) =>
          (req.creationAllowed === undefined || p.options.isCreationAllowed === req.creationAllowed) &&
          (req.linkingAllowed === undefined || p.options.isLinkingAllowed === req.linkingAllowed) &&
          (req.autoCreation === undefined || p.options.isAutoCreation === req.autoCreation) &&
          (req.autoLinking === undefined || (p.options.autoLinking !== 'none') === req.autoLinking),
      );
      return {
        details: { totalResult: BigInt(providers.length), timestamp: timestampFromDate(new Date()) },
        identityProviders: providers.map(toActiveProvider),
      };
    },

    async getPasswordComplexitySettings(req, ctx) {
      await ownerOf(req.ctx, ctx);
      return {
        details: details(gh.instanceId, undefined, undefined),
        settings: {
          minLength: BigInt(PASSWORD_MIN_LENGTH),
          requiresUppercase: true,
          requiresLowercase: true,
          requiresNumber: true,
          requiresSymbol: true,
          resourceOwnerType: ResourceOwnerType.INSTANCE,
        },
      };
    },

    async getLockoutSettings(req, ctx) {
      await ownerOf(req.ctx, ctx);
      // One run of failures counts passwords and one-time codes together (domain/sign-in/lockout.ts).
      return {
        details: details(gh.instanceId, undefined, undefined),
        settings: { maxPasswordAttempts: BigInt(LOCKOUT_THRESHOLD), maxOtpAttempts: BigInt(LOCKOUT_THRESHOLD), resourceOwnerType: ResourceOwnerType.INSTANCE },
      };
    },
  };
}
