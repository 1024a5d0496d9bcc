/**
 * Branding (the label policy) and the login policy, per organization with an instance default
 * (docs/branding-and-login-policy.md): the one writer of `label_policies`, `login_policies` and
 * `assets`, for the management and admin APIs, the asset uploads and the bootstrap file alike.
 *
 * - Branding changes (colours, images) go to the owner's preview; only activation copies the preview
 *   to the active row the login pages and GetBrandingSettings read (ZITADEL's model,
 *   internal/command/org_policy_label.go).
 * - An organization has branding or a login policy of its own only after an Add; Update, Activate
 *   and image changes on an organization without one are NotFound, as in ZITADEL. The instance has
 *   ZITADEL's defaults until it is first changed (no Add at the instance level).
 * - An empty colour and a duration left out keep what the policy has (for an Add: the instance's):
 *   REST callers may send only what they change.
 * - Every change appends one event; the directory's caches follow it (directory.ts).
 * - Self-registration (docs/security.md 10.12): an organization's own login policy decides it, and
 *   its writes keep `orgs.allow_register` (what the bootstrap file's `allowRegister` sets) in step.
 *   An organization without its own policy allows it as that column says, and when unset only if
 *   it is the instance's default organization and the instance's policy allows it.
 */
import { createHash } from 'node:crypto';
import type { DB } from '../../store/database.ts';
import { deleteAssetsExcept, findAssetHash, insertAsset } from '../../store/assets.ts';
import {
  deleteLabelPolicies, deleteLoginPolicy, findActiveLabelPolicies, findLabelPolicies, findLoginPolicies, findLoginPolicy, upsertLabelPolicy, upsertLoginPolicy,
  type LabelPolicyRow, type LoginPolicyRow,
} from '../../store/policies.ts';
import { updateOrg } from '../../store/orgs.ts';
import { findRegistrationOrg } from '../../store/registrations.ts';
import type { ThemeModeName } from '../../store/schema.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { colourProblem } from './colours.ts';

/** Whose policy: the instance's (no `orgId`) or an organization's. */
export interface PolicyOwner {
  instanceId: string;
  orgId?: string | undefined;
}

/** Who writes: the events' creator (principal.ts `creatorOf`, or 'bootstrap'). */
export interface PolicyWriter {
  instanceId: string;
  creator: string;
}

export const COLOUR_FIELDS = [
  'primaryColor', 'backgroundColor', 'warnColor', 'fontColor', 'primaryColorDark', 'backgroundColorDark', 'warnColorDark', 'fontColorDark',
] as const;
export type ColourField = (typeof COLOUR_FIELDS)[number];

/** What a label policy request sets (zitadel.management.v1.UpdateCustomLabelPolicyRequest). */
export type LabelInput = Record<ColourField, string> & {
  hideLoginNameSuffix: boolean;
  disableWatermark: boolean;
  themeMode: ThemeModeName;
};

export const IMAGE_KINDS = ['logo', 'logoDark', 'icon', 'iconDark'] as const;
/** The images of a label policy. */
export type ImageKind = (typeof IMAGE_KINDS)[number];

/** A label policy as the APIs and the login pages read it. */
export interface Branding extends LabelInput {
  /** Asset keys (`policy/label/logo-<id>`), null when no image. */
  images: Record<ImageKind, string | null>;
  /** The owner of the images: the first segment of their URLs. */
  ownerId: string;
  /** Whose policy this is; 'default' when the instance has never changed its branding. */
  source: 'org' | 'instance' | 'default';
  createdAt: Date | undefined;
  changedAt: Date | undefined;
}

export const DURATION_FIELDS = [
  'passwordCheckLifetime', 'externalLoginCheckLifetime', 'mfaInitSkipLifetime', 'secondFactorCheckLifetime', 'multiFactorCheckLifetime',
] as const;
export type DurationField = (typeof DURATION_FIELDS)[number];

export const SECOND_FACTORS = ['otp', 'u2f', 'otp_email', 'otp_sms'] as const;
export type SecondFactor = (typeof SECOND_FACTORS)[number];
export const MULTI_FACTORS = ['u2f_with_verification'] as const;
export type MultiFactor = (typeof MULTI_FACTORS)[number];

/** The login policy (zitadel.policy.v1.LoginPolicy); durations in seconds. */
export interface LoginPolicy extends Record<DurationField, number> {
  allowUsernamePassword: boolean;
  allowRegister: boolean;
  allowExternalIdp: boolean;
  forceMfa: boolean;
  forceMfaLocalOnly: boolean;
  passwordlessAllowed: boolean;
  hidePasswordReset: boolean;
  ignoreUnknownUsernames: boolean;
  allowDomainDiscovery: boolean;
  disableLoginWithEmail: boolean;
  disableLoginWithPhone: boolean;
  /** Where the login UI sends a user who finishes a flow no application started; '' for none. */
  defaultRedirectUri: string;
  secondFactors: SecondFactor[];
  multiFactors: MultiFactor[];
}

/** What a login policy request sets: durations left out keep the base's; factors only on Add. */
export type LoginInput = Omit<LoginPolicy, DurationField | 'secondFactors' | 'multiFactors'> &
  Partial<Record<DurationField, number>> & { secondFactors?: SecondFactor[]; multiFactors?: MultiFactor[] };

export interface EffectiveLoginPolicy extends LoginPolicy {
  source: 'org' | 'instance' | 'default';
  createdAt: Date | undefined;
  changedAt: Date | undefined;
}

const HOUR = 3600;

/** ZITADEL's instance defaults (cmd/defaults.yaml DefaultInstance.LabelPolicy). */
export const DEFAULT_LABEL: LabelInput = {
  primaryColor: '#5469d4',
  backgroundColor: '#fafafa',
  warnColor: '#cd3d56',
  fontColor: '#000000',
  primaryColorDark: '#2073c4',
  backgroundColorDark: '#111827',
  warnColorDark: '#ff3b5b',
  fontColorDark: '#ffffff',
  hideLoginNameSuffix: false,
  disableWatermark: false,
  themeMode: 'unspecified',
};

/** ZITADEL's instance defaults (cmd/defaults.yaml DefaultInstance.LoginPolicy). */
export const DEFAULT_LOGIN: LoginPolicy = {
  allowUsernamePassword: true,
  allowRegister: true,
  allowExternalIdp: true,
  forceMfa: false,
  forceMfaLocalOnly: false,
  passwordlessAllowed: true,
  hidePasswordReset: false,
  ignoreUnknownUsernames: false,
  allowDomainDiscovery: true,
  disableLoginWithEmail: false,
  disableLoginWithPhone: false,
  defaultRedirectUri: '',
  passwordCheckLifetime: 240 * HOUR,
  externalLoginCheckLifetime: 240 * HOUR,
  mfaInitSkipLifetime: 720 * HOUR,
  secondFactorCheckLifetime: 18 * HOUR,
  multiFactorCheckLifetime: 12 * HOUR,
  secondFactors: [],
  multiFactors: [],
};

/** The longest lifetime a login policy accepts: ten years, in seconds. */
export const MAX_LIFETIME_SECONDS = 3650 * 24 * HOUR;
const MAX_URI_LENGTH = 2048;

const INVALID = 'POLICY-Invalid';

// ---- checks ----

/** Refuses a colour that is not one (colours.ts), naming the field. Empty: keep the base's. */
function checkColours(input: Record<ColourField, string>, fieldPrefix: string): void {
  for (const field of COLOUR_FIELDS) {
    if (input[field] === '') continue;
    const problem = colourProblem(input[field]);
    if (problem !== undefined) throw new Refusal('invalid', INVALID, problem, { field: `${fieldPrefix}${field}` });
  }
}

/** Why `uri` cannot be the default redirect URI, or undefined. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri === '') return undefined;
  if (uri.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an absolute http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  return undefined;
}

/** Why a lifetime in seconds is not acceptable, or undefined. */
export function lifetimeProblem(seconds: number): string | undefined {
  if (!Number.isInteger(seconds)) return 'must be whole seconds';
  if (seconds < 0) return 'must not be negative';
  if (seconds > MAX_LIFETIME_SECONDS) return 'must be at most 3650 days';
  return undefined;
}

function checkLogin(input: LoginInput, fieldPrefix: string): void {
  const problem = redirectUriProblem(input.defaultRedirectUri);
  if (problem !== undefined) throw new Refusal('invalid', INVALID, problem, { field: `${fieldPrefix}defaultRedirectUri` });
  for (const field of DURATION_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    const issue = lifetimeProblem(value);
    if (issue !== undefined) throw new Refusal('invalid', INVALID, issue, { field: `${fieldPrefix}${field}` });
  }
}

// ---- rows ----

function ownerIdOf(owner: PolicyOwner): string {
  return owner.orgId ?? owner.instanceId;
}

function labelOf(row: LabelPolicyRow): LabelInput {
  return {
    primaryColor: row.primary_color,
    backgroundColor: row.background_color,
    warnColor: row.warn_color,
    fontColor: row.font_color,
    primaryColorDark: row.primary_color_dark,
    backgroundColorDark: row.background_color_dark,
    warnColorDark: row.warn_color_dark,
    fontColorDark: row.font_color_dark,
    hideLoginNameSuffix: row.hide_login_name_suffix,
    disableWatermark: row.disable_watermark,
    themeMode: row.theme_mode,
  };
}

function brandingOf(row: LabelPolicyRow | undefined, source: Branding['source'], ownerId: string): Branding {
  if (row === undefined) {
    return { ...DEFAULT_LABEL, images: { logo: null, logoDark: null, icon: null, iconDark: null }, ownerId, source, createdAt: undefined, changedAt: undefined };
  }
  return {
    ...labelOf(row),
    images: { logo: row.logo_key, logoDark: row.logo_dark_key, icon: row.icon_key, iconDark: row.icon_dark_key },
    ownerId: row.owner_id,
    source,
    createdAt: row.created_at,
    changedAt: row.changed_at,
  };
}

function loginOf(row: LoginPolicyRow): LoginPolicy {
  return {
    allowUsernamePassword: row.allow_username_password,
    allowRegister: row.allow_register,
    allowExternalIdp: row.allow_external_idp,
    forceMfa: row.force_mfa,
    forceMfaLocalOnly: row.force_mfa_local_only,
    passwordlessAllowed: row.passwordless_allowed,
    hidePasswordReset: row.hide_password_reset,
    ignoreUnknownUsernames: row.ignore_unknown_usernames,
    allowDomainDiscovery: row.allow_domain_discovery,
    disableLoginWithEmail: row.disable_login_with_email,
    disableLoginWithPhone: row.disable_login_with_phone,
    defaultRedirectUri: row.default_redirect_uri,
    passwordCheckLifetime: row.password_check_lifetime_s,
    externalLoginCheckLifetime: row.external_login_check_lifetime_s,
    mfaInitSkipLifetime: row.mfa_init_skip_lifetime_s,
    secondFactorCheckLifetime: row.second_factor_check_lifetime_s,
    multiFactorCheckLifetime: row.multi_factor_check_lifetime_s,
    secondFactors: row.second_factors.filter((f): f is SecondFactor => (SECOND_FACTORS as readonly string[]).includes(f)),
    multiFactors: row.multi_factors.filter((f): f is MultiFactor => (MULTI_FACTORS as readonly string[]).includes(f)),
  };
}

function loginColumns(policy: LoginPolicy) {
  return {
    allow_username_password: policy.allowUsernamePassword,
    allow_register: policy.allowRegister,
    allow_external_idp: policy.allowExternalIdp,
    force_mfa: policy.forceMfa,
    force_mfa_local_only: policy.forceMfaLocalOnly,
    passwordless_allowed: policy.passwordlessAllowed,
    hide_password_reset: policy.hidePasswordReset,
    ignore_unknown_usernames: policy.ignoreUnknownUsernames,
    allow_domain_discovery: policy.allowDomainDiscovery,
    disable_login_with_email: policy.disableLoginWithEmail,
    disable_login_with_phone: policy.disableLoginWithPhone,
    default_redirect_uri: policy.defaultRedirectUri,
    password_check_lifetime_s: policy.passwordCheckLifetime,
    external_login_check_lifetime_s: policy.externalLoginCheckLifetime,
    mfa_init_skip_lifetime_s: policy.mfaInitSkipLifetime,
    second_factor_check_lifetime_s: policy.secondFactorCheckLifetime,
    multi_factor_check_lifetime_s: policy.multiFactorCheckLifetime,
    second_factors: [...new Set(policy.secondFactors)],
    multi_factors: [...new Set(policy.multiFactors)],
  };
}

// ---- reads ----

/**
 * The branding the login pages show for an organization (its active policy, else the instance's
 * active one, else ZITADEL's defaults); for the instance when `orgId` is absent. One statement.
 */
export async function effectiveBranding(db: DB, owner: PolicyOwner): Promise<Branding> {
  const rows = await findActiveLabelPolicies(db, owner.instanceId, owner.orgId);
  const own = owner.orgId === undefined ? undefined : rows.find((row) => row.owner_id === owner.orgId);
  if (own !== undefined) return brandingOf(own, 'org', own.owner_id);
  const instance = rows.find((row) => row.owner_id === owner.instanceId);
  return brandingOf(instance, instance === undefined ? 'default' : 'instance', owner.instanceId);
}

/**
 * The owner's branding preview; for the instance without one, its active branding (or the defaults);
 * for an organization without branding of its own, the instance's preview, as ZITADEL's
 * GetPreviewLabelPolicy falls back.
 */
export async function previewBranding(db: DB, owner: PolicyOwner): Promise<Branding> {
  if (owner.orgId !== undefined) {
    const rows = await findLabelPolicies(db, owner.orgId);
    if (rows.preview !== undefined) return brandingOf(rows.preview, 'org', owner.orgId);
    return previewBranding(db, { instanceId: owner.instanceId });
  }
  const preview = await currentPreview(db, owner);
  return preview ?? effectiveBranding(db, owner);
}

/**
 * The login policy in force for an organization (its own, else the instance's, else the defaults);
 * for the instance when `orgId` is absent. `allowRegister` of an organization without its own policy
 * follows the registration rule above, not the instance's value alone.
 */
export async function effectiveLoginPolicy(db: DB, owner: PolicyOwner): Promise<EffectiveLoginPolicy> {
  const [rows, org] = await Promise.all([
    findLoginPolicies(db, owner.instanceId, owner.orgId),
    owner.orgId === undefined ? undefined : findRegistrationOrg(db, owner.instanceId, owner.orgId),
  ]);
  const own = owner.orgId === undefined ? undefined : rows.find((row) => row.owner_id === owner.orgId);
  if (own !== undefined) return { ...loginOf(own), source: 'org', createdAt: own.created_at, changedAt: own.changed_at };
  const row = rows.find((r) => r.owner_id === owner.instanceId);
  const policy: EffectiveLoginPolicy = row === undefined
    ? { ...DEFAULT_LOGIN, source: 'default', createdAt: undefined, changedAt: undefined }
    : { ...loginOf(row), source: 'instance', createdAt: row.created_at, changedAt: row.changed_at };
  if (org !== undefined) policy.allowRegister = org.allow_register ?? (org.is_default && policy.allowRegister);
  return policy;
}

// ---- events ----

type PolicyEvent =
  | 'policy.label.added' | 'policy.label.changed' | 'policy.label.activated' | 'policy.label.removed'
  | 'policy.login.added' | 'policy.login.changed' | 'policy.login.removed';

function append(trx: DB, writer: PolicyWriter, owner: PolicyOwner, event: PolicyEvent, changed?: string[]): Promise<ChangeDetails> {
  const ownerId = ownerIdOf(owner);
  const base = { instanceId: writer.instanceId, aggregateId: ownerId, resourceOwner: ownerId, creator: writer.creator };
  if (owner.orgId === undefined) {
    switch (event) {
      case 'policy.label.changed': return appendEvent(trx, { ...base, type: 'instance.policy.label.changed', payload: { changed: changed ?? [] } });
      case 'policy.label.activated': return appendEvent(trx, { ...base, type: 'instance.policy.label.activated' });
      case 'policy.login.changed': return appendEvent(trx, { ...base, type: 'instance.policy.login.changed', payload: { changed: changed ?? [] } });
      default: throw new Error(`no instance event ${event}`);
    }
  }
  switch (event) {
    case 'policy.label.added': return appendEvent(trx, { ...base, type: 'org.policy.label.added' });
    case 'policy.label.changed': return appendEvent(trx, { ...base, type: 'org.policy.label.changed', payload: { changed: changed ?? [] } });
    case 'policy.label.activated': return appendEvent(trx, { ...base, type: 'org.policy.label.activated' });
    case 'policy.label.removed': return appendEvent(trx, { ...base, type: 'org.policy.label.removed' });
    case 'policy.login.added': return appendEvent(trx, { ...base, type: 'org.policy.login.added' });
    case 'policy.login.changed': return appendEvent(trx, { ...base, type: 'org.policy.login.changed', payload: { changed: changed ?? [] } });
    case 'policy.login.removed': return appendEvent(trx, { ...base, type: 'org.policy.login.removed' });
  }
}

// ---- branding writes ----

function labelNotFound(): Refusal {
  return new Refusal('not_found', 'POLICY-LabelNotFound', 'the organization has no branding of its own (AddCustomLabelPolicy first)');
}

/** Colours left empty taken from `base`. */
function mergeLabel(base: LabelInput, input: LabelInput): LabelInput {
  const merged = { ...input };
  for (const field of COLOUR_FIELDS) if (merged[field] === '') merged[field] = base[field];
  return merged;
}

const LABEL_COLUMNS: Record<keyof LabelInput, string> = {
  primaryColor: 'primary_color', backgroundColor: 'background_color', warnColor: 'warn_color', fontColor: 'font_color',
  primaryColorDark: 'primary_color_dark', backgroundColorDark: 'background_color_dark', warnColorDark: 'warn_color_dark', fontColorDark: 'font_color_dark',
  hideLoginNameSuffix: 'hide_login_name_suffix', disableWatermark: 'disable_watermark', themeMode: 'theme_mode',
};
const IMAGE_COLUMNS = { logo: 'logo_key', logoDark: 'logo_dark_key', icon: 'icon_key', iconDark: 'icon_dark_key' } as const;

function labelRow(owner: PolicyOwner, state: 'preview' | 'active', values: LabelInput, images: Branding['images'], now: Date) {
  const row: Record<string, unknown> = {
    owner_id: ownerIdOf(owner), state, instance_id: owner.instanceId, org_id: owner.orgId ?? null, created_at: now, changed_at: now,
  };
  for (const [field, column] of Object.entries(LABEL_COLUMNS)) row[column] = values[field as keyof LabelInput];
  for (const [kind, column] of Object.entries(IMAGE_COLUMNS)) row[column] = images[kind as ImageKind];
  return row as unknown as LabelPolicyRow;
}

/** The preview an image or colour change starts from: the owner's preview; for the instance, its active branding or the defaults. */
async function currentPreview(trx: DB, owner: PolicyOwner): Promise<Branding | undefined> {
  const rows = await findLabelPolicies(trx, ownerIdOf(owner));
  const source = owner.orgId === undefined ? 'instance' : 'org';
  if (rows.preview !== undefined) return brandingOf(rows.preview, source, ownerIdOf(owner));
  if (owner.orgId !== undefined) return undefined;
  return brandingOf(rows.active, rows.active === undefined ? 'default' : 'instance', owner.instanceId);
}

/** Gives an organization branding of its own, in preview (colours left empty: the instance's). */
export async function addOrgBranding(trx: DB, writer: PolicyWriter, orgId: string, input: LabelInput, fieldPrefix = ''): Promise<ChangeDetails> {
  checkColours(input, fieldPrefix);
  const owner = { instanceId: writer.instanceId, orgId };
  const rows = await findLabelPolicies(trx, orgId);
  if (rows.preview !== undefined) throw new Refusal('exists', 'POLICY-LabelExists', 'the organization has branding of its own already (UpdateCustomLabelPolicy changes it)');
  const base = await effectiveBranding(trx, { instanceId: writer.instanceId });
  const now = new Date();
  await upsertLabelPolicy(trx, labelRow(owner, 'preview', mergeLabel(base, input), { logo: null, logoDark: null, icon: null, iconDark: null }, now));
  return append(trx, writer, owner, 'policy.label.added');
}

/**
 * Changes the owner's branding preview (colours left empty: unchanged). Undefined when nothing
 * changed (nothing is written then); NotFound for an organization without branding of its own.
 */
export async function changeBranding(trx: DB, writer: PolicyWriter, owner: PolicyOwner, input: LabelInput, fieldPrefix = ''): Promise<ChangeDetails | undefined> {
  checkColours(input, fieldPrefix);
  const current = await currentPreview(trx, owner);
  if (current === undefined) throw labelNotFound();
  const values = mergeLabel(current, input);
  const changed = (Object.keys(LABEL_COLUMNS) as (keyof LabelInput)[]).filter((field) => values[field] !== current[field]);
  if (changed.length === 0 && current.source !== 'default') return undefined;
  await upsertLabelPolicy(trx, labelRow(owner, 'preview', values, current.images, new Date()));
  return append(trx, writer, owner, 'policy.label.changed', changed);
}

/** Makes the preview the active branding; NotFound for an organization without branding of its own. */
export async function activateBranding(trx: DB, writer: PolicyWriter, owner: PolicyOwner): Promise<ChangeDetails> {
  const current = await currentPreview(trx, owner);
  if (current === undefined) throw labelNotFound();
  const now = new Date();
  // Both rows agree after an activation: the preview is kept for the next change.
  await upsertLabelPolicy(trx, labelRow(owner, 'preview', current, current.images, now));
  await upsertLabelPolicy(trx, labelRow(owner, 'active', current, current.images, now));
  await deleteAssetsExcept(trx, ownerIdOf(owner), 'policy/label/', Object.values(current.images).filter((key) => key !== null));
  return append(trx, writer, owner, 'policy.label.activated');
}

/** The asset key of a new image: ZITADEL's shape, `policy/label/logo-dark-<id>`. */
function imageKey(kind: ImageKind): string {
  const name = { logo: 'logo', logoDark: 'logo-dark', icon: 'icon', iconDark: 'icon-dark' }[kind];
  return `policy/label/${name}-${newId()}`;
}

/** The ETag of an asset: a hash of its bytes, quoted (RFC 9110 §8.8.3). */
export function assetHash(data: Uint8Array): string {
  return `"${createHash('sha256').update(data).digest('base64url').slice(0, 27)}"`;
}

/**
 * Puts an uploaded image into the owner's branding preview (the caller sniffed its type), or takes
 * it out (`image` undefined). The replaced image stays while the active branding shows it.
 */
export async function setBrandingImage(
  trx: DB,
  writer: PolicyWriter,
  owner: PolicyOwner,
  kind: ImageKind,
  image: { contentType: string; data: Uint8Array } | undefined,
): Promise<ChangeDetails> {
  const current = await currentPreview(trx, owner);
  if (current === undefined) throw labelNotFound();
  const ownerId = ownerIdOf(owner);
  let key: string | null = null;
  if (image !== undefined) {
    key = imageKey(kind);
    await insertAsset(trx, { owner_id: ownerId, key, instance_id: owner.instanceId, content_type: image.contentType, data: image.data, hash: assetHash(image.data) });
  }
  const images = { ...current.images, [kind]: key };
  await upsertLabelPolicy(trx, labelRow(owner, 'preview', current, images, new Date()));
  const active = (await findLabelPolicies(trx, ownerId)).active;
  const inUse = [...Object.values(images), ...(active === undefined ? [] : [active.logo_key, active.logo_dark_key, active.icon_key, active.icon_dark_key])];
  await deleteAssetsExcept(trx, ownerId, 'policy/label/', inUse.filter((k) => k !== null));
  return append(trx, writer, owner, 'policy.label.changed', [kind]);
}

/** Removes an organization's own branding (preview, active and images): the instance's applies again. */
export async function resetOrgBranding(trx: DB, writer: PolicyWriter, orgId: string): Promise<ChangeDetails> {
  if ((await deleteLabelPolicies(trx, orgId)) === 0) throw labelNotFound();
  await deleteAssetsExcept(trx, orgId, 'policy/label/', []);
  return append(trx, writer, { instanceId: writer.instanceId, orgId }, 'policy.label.removed');
}

// ---- login policy writes ----

function loginNotFound(): Refusal {
  return new Refusal('not_found', 'POLICY-LoginNotFound', 'the organization has no login policy of its own (AddCustomLoginPolicy first)');
}

/** `input` over `base`, with the fields of a login policy only (a read's `source` and times left behind). */
function mergeLogin(base: LoginPolicy, input: LoginInput): LoginPolicy {
  const merged = { ...DEFAULT_LOGIN } as Record<keyof LoginPolicy, unknown>;
  for (const field of Object.keys(DEFAULT_LOGIN) as (keyof LoginPolicy)[]) merged[field] = (input as Partial<LoginPolicy>)[field] ?? base[field];
  return merged as LoginPolicy;
}

/** Gives an organization a login policy of its own (durations and factors left out: the instance's). */
export async function addOrgLoginPolicy(trx: DB, writer: PolicyWriter, orgId: string, input: LoginInput, fieldPrefix = ''): Promise<ChangeDetails> {
  checkLogin(input, fieldPrefix);
  if ((await findLoginPolicy(trx, orgId)) !== undefined) {
    throw new Refusal('exists', 'POLICY-LoginExists', 'the organization has a login policy of its own already (UpdateCustomLoginPolicy changes it)');
  }
  const base = await effectiveLoginPolicy(trx, { instanceId: writer.instanceId });
  const now = new Date();
  const policy = mergeLogin(base, input);
  await upsertLoginPolicy(trx, { owner_id: orgId, instance_id: writer.instanceId, org_id: orgId, ...loginColumns(policy), created_at: now, changed_at: now });
  await updateOrg(trx, orgId, { allow_register: policy.allowRegister });
  return append(trx, writer, { instanceId: writer.instanceId, orgId }, 'policy.login.added');
}

/**
 * Replaces the owner's login policy (durations and factors left out: unchanged). Undefined when
 * nothing changed; NotFound for an organization without a policy of its own.
 */
export async function changeLoginPolicy(trx: DB, writer: PolicyWriter, owner: PolicyOwner, input: LoginInput, fieldPrefix = ''): Promise<ChangeDetails | undefined> {
  checkLogin(input, fieldPrefix);
  const ownerId = ownerIdOf(owner);
  const row = await findLoginPolicy(trx, ownerId);
  if (row === undefined && owner.orgId !== undefined) throw loginNotFound();
  const current = row === undefined ? DEFAULT_LOGIN : loginOf(row);
  const next = mergeLogin(current, input);
  const changed = (Object.keys(next) as (keyof LoginPolicy)[]).filter((field) => JSON.stringify(next[field]) !== JSON.stringify(current[field]));
  if (changed.length === 0 && row !== undefined) return undefined;
  const now = new Date();
  await upsertLoginPolicy(trx, { owner_id: ownerId, instance_id: owner.instanceId, org_id: owner.orgId ?? null, ...loginColumns(next), created_at: now, changed_at: now });
  if (owner.orgId !== undefined && changed.includes('allowRegister')) await updateOrg(trx, owner.orgId, { allow_register: next.allowRegister });
  return append(trx, writer, owner, 'policy.login.changed', changed);
}

/** Removes an organization's own login policy: the instance's applies again. */
export async function resetOrgLoginPolicy(trx: DB, writer: PolicyWriter, orgId: string): Promise<ChangeDetails> {
  if ((await deleteLoginPolicy(trx, orgId)) === 0) throw loginNotFound();
  // Registration returns to its default (docs/security.md 10.12).
  await updateOrg(trx, orgId, { allow_register: null });
  return append(trx, writer, { instanceId: writer.instanceId, orgId }, 'policy.login.removed');
}

/** Whether the organization has branding (a preview) and a login policy of its own. */
export async function ownPolicies(db: DB, orgId: string): Promise<{ branding: boolean; login: boolean }> {
  const [label, login] = await Promise.all([findLabelPolicies(db, orgId), findLoginPolicy(db, orgId)]);
  return { branding: label.preview !== undefined, login: login !== undefined };
}

// ---- declared state (the bootstrap file) ----

/** An image as the bootstrap file gives it: its type, told by its bytes (images.ts), and the bytes. */
export interface ImageFile {
  contentType: string;
  data: Uint8Array;
}

function sameLabelRows(a: LabelPolicyRow, b: LabelPolicyRow): boolean {
  const columns = [...Object.values(LABEL_COLUMNS), ...Object.values(IMAGE_COLUMNS)] as (keyof LabelPolicyRow)[];
  return columns.every((column) => a[column] === b[column]);
}

/**
 * Makes the owner's active branding `desired`, with exactly `images` (a kind left out: none). An
 * organization without branding of its own gets it. Writes the preview and activates it only where
 * something differs, so declaring the same state again writes nothing. True when anything changed.
 */
export async function declareBranding(
  trx: DB,
  writer: PolicyWriter,
  owner: PolicyOwner,
  desired: LabelInput,
  images: Partial<Record<ImageKind, ImageFile>>,
): Promise<boolean> {
  const ownerId = ownerIdOf(owner);
  let changed = false;
  if (owner.orgId !== undefined && (await findLabelPolicies(trx, ownerId)).preview === undefined) {
    await addOrgBranding(trx, writer, owner.orgId, desired);
    changed = true;
  } else if ((await changeBranding(trx, writer, owner, desired)) !== undefined) {
    changed = true;
  }
  const preview = await currentPreview(trx, owner);
  if (preview === undefined) throw labelNotFound();
  for (const kind of IMAGE_KINDS) {
    const wanted = images[kind];
    const key = preview.images[kind];
    const stored = key === null ? undefined : await findAssetHash(trx, ownerId, key);
    if (wanted === undefined ? key === null : stored === assetHash(wanted.data)) continue;
    await setBrandingImage(trx, writer, owner, kind, wanted);
    changed = true;
  }
  const rows = await findLabelPolicies(trx, ownerId);
  if (rows.preview === undefined || rows.active === undefined || !sameLabelRows(rows.preview, rows.active)) {
    await activateBranding(trx, writer, owner);
    changed = true;
  }
  return changed;
}

/**
 * Makes the owner's login policy `desired` (an organization without its own gets it), writing only
 * when something differs. True when anything changed.
 */
export async function declareLoginPolicy(trx: DB, writer: PolicyWriter, owner: PolicyOwner, desired: LoginPolicy): Promise<boolean> {
  if (owner.orgId !== undefined && (await findLoginPolicy(trx, owner.orgId)) === undefined) {
    await addOrgLoginPolicy(trx, writer, owner.orgId, desired);
    return true;
  }
  return (await changeLoginPolicy(trx, writer, owner, desired)) !== undefined;
}

/**
 * Whether the login policy asks this sign-in for a local second factor (docs/branding-and-login-policy.md#what-the-login-pages-honour):
 * every local sign-in under `forceMfa` or `forceMfaLocalOnly`; a sign-in through an external
 * identity provider only under `forceMfa` without `forceMfaLocalOnly`, which exempts those
 * (docs/federation.md#signing-in-with-a-provider).
 */
export function mfaRequired(login: Pick<LoginPolicy, 'forceMfa' | 'forceMfaLocalOnly'>, kind: 'local' | 'external' = 'local'): boolean {
  if (kind === 'external') return login.forceMfa && !login.forceMfaLocalOnly;
  return login.forceMfa || login.forceMfaLocalOnly;
}

/** Whether a session (its `amr`) lacks the second factor the login policy asks of it: a sign-in with a provider has `fed`. */
export function sessionLacksMfa(login: Pick<LoginPolicy, 'forceMfa' | 'forceMfaLocalOnly'>, amr: readonly string[]): boolean {
  return mfaRequired(login, amr.includes('fed') ? 'external' : 'local') && !amr.includes('mfa');
}
