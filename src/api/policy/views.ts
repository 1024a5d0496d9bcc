/**
 * The label and login policies on the wire (docs/branding-and-login-policy.md): requests of the v1
 * management and admin calls read into the domain's input, policies written out as
 * zitadel.policy.v1 messages, and whose policy a call acts on.
 *
 * ThemeMode keeps ZITADEL's two numberings: v1 (zitadel.policy.v1) DARK = 2, LIGHT = 3; settings v2
 * LIGHT = 2, DARK = 3 (settings/v2/branding_settings.proto); the domain names them.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate, type Duration } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import type { IDPLoginPolicyLinkSchema } from '../../../gen/zitadel/idp_pb.js';
import type { ObjectDetailsSchema } from '../../../gen/zitadel/object_pb.js';
import { MultiFactorType, PasswordlessType, SecondFactorType, ThemeMode, type LabelPolicySchema, type LoginPolicySchema } from '../../../gen/zitadel/policy_pb.js';
import type { Gatehouse } from '../../context.ts';
import type { ChangeDetails } from '../../domain/kernel/events.ts';
import { hasRole, type Principal } from '../../domain/kernel/principal.ts';
import { Refusal } from '../../domain/kernel/refusals.ts';
import {
  COLOUR_FIELDS, DURATION_FIELDS, type Branding, type ColourField, type DurationField, type EffectiveLoginPolicy, type ImageKind,
  type LabelInput, type LoginInput, type LoginPolicy, type MultiFactor, type PolicyOwner, type SecondFactor,
} from '../../domain/instance/policies.ts';
import type { ThemeModeName } from '../../store/schema.ts';
import { findOrg } from '../../store/orgs.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { permissionDenied, requireManager, requireOrg } from '../management/access.ts';
import { invalidArgument } from '../management/lists.ts';
import { Code } from '@connectrpc/connect';

/** ZITADEL's header naming the organization a v1 management call acts on. */
export const ORG_HEADER = 'x-zitadel-orgid';

/**
 * The organization a management call acts on: `x-zitadel-orgid`, else the caller's own. The caller
 * must manage it (ORG_OWNER of it, or IAM_OWNER): another organization's id is PermissionDenied,
 * and only an IAM_OWNER learns that an id names no organization (NotFound).
 */
export async function managedOrg(gh: Pick<Gatehouse, 'db' | 'instanceId'>, principal: Principal, requested: string | null | undefined): Promise<string> {
  const managed = requireManager(principal);
  const orgId = requested === null || requested === undefined || requested === '' ? principal.orgId : requested;
  requireOrg(managed, orgId);
  const org = await findOrg(gh.db, orgId);
  if (org === undefined || org.instance_id !== gh.instanceId) {
    if (managed.all) throw apiError(Code.NotFound, 'ORG-NotFound', 'organization not found');
    throw permissionDenied();
  }
  return orgId;
}

/** The organization of a management call from its context (header, else the caller's). */
export function orgOfCall(gh: Pick<Gatehouse, 'db' | 'instanceId'>, ctx: HandlerContext): Promise<string> {
  return managedOrg(gh, requirePrincipal(ctx), ctx.requestHeader.get(ORG_HEADER));
}

/** The caller of an admin call: IAM_OWNER only. */
export function requireIamOwner(ctx: HandlerContext): Principal {
  const principal = requirePrincipal(ctx);
  if (!hasRole(principal, 'IAM_OWNER')) throw permissionDenied();
  return principal;
}

// ---- enums ----

const V1_THEME: Record<ThemeModeName, ThemeMode> = { unspecified: ThemeMode.UNSPECIFIED, auto: ThemeMode.AUTO, dark: ThemeMode.DARK, light: ThemeMode.LIGHT };
const V1_SECOND: Record<SecondFactor, SecondFactorType> = { otp: SecondFactorType.OTP, u2f: SecondFactorType.U2F, otp_email: SecondFactorType.OTP_EMAIL, otp_sms: SecondFactorType.OTP_SMS };
const V1_MULTI: Record<MultiFactor, MultiFactorType> = { u2f_with_verification: MultiFactorType.U2F_WITH_VERIFICATION };

/** The accepted names of an enum, for an error that lists them. */
function enumNames(prefix: string, names: readonly string[]): string {
  return names.map((name) => `${prefix}${name.toUpperCase()}`).join(', ');
}

function themeModeName(value: ThemeMode, field: string): ThemeModeName {
  const name = (Object.keys(V1_THEME) as ThemeModeName[]).find((key) => V1_THEME[key] === value);
  if (name === undefined) throw invalidArgument(field, `must be one of ${enumNames('THEME_MODE_', Object.keys(V1_THEME))}`);
  return name;
}

// ---- requests ----

type LabelRequest = Record<ColourField, string> & { hideLoginNameSuffix: boolean; disableWatermark: boolean; themeMode: ThemeMode };

export function labelInput(req: LabelRequest): LabelInput {
  const colours = Object.fromEntries(COLOUR_FIELDS.map((field) => [field, req[field]])) as Record<ColourField, string>;
  return { ...colours, hideLoginNameSuffix: req.hideLoginNameSuffix, disableWatermark: req.disableWatermark, themeMode: themeModeName(req.themeMode, 'themeMode') };
}

function seconds(duration: Duration | undefined, field: string): number | undefined {
  if (duration === undefined) return undefined;
  if (duration.nanos !== 0) throw invalidArgument(field, 'must be whole seconds');
  if (duration.seconds < 0n) throw invalidArgument(field, 'must not be negative');
  if (duration.seconds > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidArgument(field, 'is too long');
  return Number(duration.seconds);
}

type LoginRequest = {
  allowUsernamePassword: boolean; allowRegister: boolean; allowExternalIdp: boolean; forceMfa: boolean; passwordlessType: PasswordlessType;
  hidePasswordReset: boolean; ignoreUnknownUsernames: boolean; defaultRedirectUri: string; allowDomainDiscovery: boolean;
  disableLoginWithEmail: boolean; disableLoginWithPhone: boolean; forceMfaLocalOnly: boolean;
} & Partial<Record<DurationField, Duration>> & { secondFactors?: SecondFactorType[]; multiFactors?: MultiFactorType[] };

function factors<N extends string>(values: readonly number[], table: Record<N, number>, field: string, prefix: string): N[] {
  const names = Object.keys(table) as N[];
  return values.map((value, index) => {
    const name = names.find((key) => table[key] === value);
    if (name === undefined) throw invalidArgument(`${field}[${index}]`, `must be one of ${enumNames(prefix, names)}`);
    return name;
  });
}

export function loginInput(req: LoginRequest): LoginInput {
  if (req.passwordlessType !== PasswordlessType.ALLOWED && req.passwordlessType !== PasswordlessType.NOT_ALLOWED) {
    throw invalidArgument('passwordlessType', 'must be one of PASSWORDLESS_TYPE_NOT_ALLOWED, PASSWORDLESS_TYPE_ALLOWED');
  }
  const input: LoginInput = {
    allowUsernamePassword: req.allowUsernamePassword,
    allowRegister: req.allowRegister,
    allowExternalIdp: req.allowExternalIdp,
    forceMfa: req.forceMfa,
    forceMfaLocalOnly: req.forceMfaLocalOnly,
    passwordlessAllowed: req.passwordlessType === PasswordlessType.ALLOWED,
    hidePasswordReset: req.hidePasswordReset,
    ignoreUnknownUsernames: req.ignoreUnknownUsernames,
    allowDomainDiscovery: req.allowDomainDiscovery,
    disableLoginWithEmail: req.disableLoginWithEmail,
    disableLoginWithPhone: req.disableLoginWithPhone,
    defaultRedirectUri: req.defaultRedirectUri,
  };
  for (const field of DURATION_FIELDS) {
    const value = seconds(req[field], field);
    if (value !== undefined) input[field] = value;
  }
  if (req.secondFactors !== undefined) input.secondFactors = factors(req.secondFactors, V1_SECOND, 'secondFactors', 'SECOND_FACTOR_TYPE_');
  if (req.multiFactors !== undefined) input.multiFactors = factors(req.multiFactors, V1_MULTI, 'multiFactors', 'MULTI_FACTOR_TYPE_');
  return input;
}

// ---- responses ----

/** The public URL of an asset (ZITADEL internal/domain/asset.go AssetURL); '' for none. */
export function assetUrl(externalUrl: string, ownerId: string, key: string | null): string {
  return key === null ? '' : `${externalUrl}/assets/v1/${ownerId}/${key}`;
}

export function imageUrls(externalUrl: string, branding: Branding): Record<ImageKind, string> {
  return {
    logo: assetUrl(externalUrl, branding.ownerId, branding.images.logo),
    logoDark: assetUrl(externalUrl, branding.ownerId, branding.images.logoDark),
    icon: assetUrl(externalUrl, branding.ownerId, branding.images.icon),
    iconDark: assetUrl(externalUrl, branding.ownerId, branding.images.iconDark),
  };
}

/** v1 details of a read: the row's times (the sequence is not kept per row: 0). */
function readDetails(owner: string, created: Date | undefined, changed: Date | undefined): MessageInitShape<typeof ObjectDetailsSchema> {
  return {
    resourceOwner: owner,
    ...(created === undefined ? {} : { creationDate: timestampFromDate(created) }),
    ...(changed === undefined ? {} : { changeDate: timestampFromDate(changed) }),
  };
}

/** v1 details of a change, from the event it appended. */
export function objectDetails(change: ChangeDetails): MessageInitShape<typeof ObjectDetailsSchema> {
  return { sequence: BigInt(change.sequence), changeDate: timestampFromDate(change.changeDate), resourceOwner: change.resourceOwner };
}

export function toLabelPolicy(externalUrl: string, branding: Branding, isDefault: boolean): MessageInitShape<typeof LabelPolicySchema> {
  const urls = imageUrls(externalUrl, branding);
  return {
    details: readDetails(branding.ownerId, branding.createdAt, branding.changedAt),
    primaryColor: branding.primaryColor,
    backgroundColor: branding.backgroundColor,
    warnColor: branding.warnColor,
    fontColor: branding.fontColor,
    primaryColorDark: branding.primaryColorDark,
    backgroundColorDark: branding.backgroundColorDark,
    warnColorDark: branding.warnColorDark,
    fontColorDark: branding.fontColorDark,
    hideLoginNameSuffix: branding.hideLoginNameSuffix,
    disableWatermark: branding.disableWatermark,
    themeMode: V1_THEME[branding.themeMode],
    isDefault,
    logoUrl: urls.logo,
    logoUrlDark: urls.logoDark,
    iconUrl: urls.icon,
    iconUrlDark: urls.iconDark,
  };
}

function duration(secondsValue: number): { seconds: bigint; nanos: number } {
  return { seconds: BigInt(secondsValue), nanos: 0 };
}

export function durations(policy: LoginPolicy): Record<DurationField, { seconds: bigint; nanos: number }> {
  return Object.fromEntries(DURATION_FIELDS.map((field) => [field, duration(policy[field])])) as Record<DurationField, { seconds: bigint; nanos: number }>;
}

export function toLoginPolicy(
  policy: EffectiveLoginPolicy,
  ownerId: string,
  isDefault: boolean,
  idps: MessageInitShape<typeof IDPLoginPolicyLinkSchema>[] = [],
): MessageInitShape<typeof LoginPolicySchema> {
  return {
    details: readDetails(ownerId, policy.createdAt, policy.changedAt),
    allowUsernamePassword: policy.allowUsernamePassword,
    allowRegister: policy.allowRegister,
    allowExternalIdp: policy.allowExternalIdp,
    forceMfa: policy.forceMfa,
    forceMfaLocalOnly: policy.forceMfaLocalOnly,
    passwordlessType: policy.passwordlessAllowed ? PasswordlessType.ALLOWED : PasswordlessType.NOT_ALLOWED,
    isDefault,
    hidePasswordReset: policy.hidePasswordReset,
    ignoreUnknownUsernames: policy.ignoreUnknownUsernames,
    defaultRedirectUri: policy.defaultRedirectUri,
    ...durations(policy),
    secondFactors: policy.secondFactors.map((f) => V1_SECOND[f]),
    multiFactors: policy.multiFactors.map((f) => V1_MULTI[f]),
    idps,
    allowDomainDiscovery: policy.allowDomainDiscovery,
    disableLoginWithEmail: policy.disableLoginWithEmail,
    disableLoginWithPhone: policy.disableLoginWithPhone,
  };
}

/** The owner a policy read belongs to: the organization when it has its own, else the instance. */
export function ownerOf(owner: PolicyOwner, source: 'org' | 'instance' | 'default'): string {
  return source === 'org' && owner.orgId !== undefined ? owner.orgId : owner.instanceId;
}

/** ZITADEL answers an update that changes nothing with FailedPrecondition (Errors.Org.LabelPolicy.NotChanged). */
export function notChanged(): Refusal {
  return new Refusal('conflict', 'POLICY-NotChanged', 'the policy already has these values');
}
