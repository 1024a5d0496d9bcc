/**
 * Applies `branding` and `loginPolicy` (docs/bootstrap.md#branding-and-login-policy) through the
 * instance wing's declare functions: the file states the active branding and the login policy of
 * the instance and of each organization that names them; what it leaves out takes the default (for
 * an organization, the instance's as the file makes it), and an image left out is removed.
 */
import {
  COLOUR_FIELDS, DEFAULT_LABEL, DEFAULT_LOGIN, declareBranding, declareLoginPolicy, effectiveBranding, effectiveLoginPolicy, type LabelInput, type LoginPolicy,
} from '../domain/instance/policies.ts';
import { refusedAt, writer, type ApplyContext } from './apply-support.ts';
import type { BrandingSpec, BootstrapDocument, LoginPolicySpec } from './document.ts';

function labelFrom(base: LabelInput, spec: BrandingSpec): LabelInput {
  const desired: LabelInput = {
    ...base,
    hideLoginNameSuffix: spec.hideLoginNameSuffix ?? DEFAULT_LABEL.hideLoginNameSuffix,
    disableWatermark: spec.disableWatermark ?? DEFAULT_LABEL.disableWatermark,
    themeMode: spec.themeMode ?? DEFAULT_LABEL.themeMode,
  };
  for (const field of COLOUR_FIELDS) desired[field] = spec.colours[field] ?? base[field];
  return desired;
}

function policyFrom(base: LoginPolicy, spec: LoginPolicySpec): LoginPolicy {
  return { ...base, ...spec.values };
}

/** The instance's branding and login policy, when the file names them; true when anything changed. */
export async function applyInstancePolicies(ctx: ApplyContext, document: BootstrapDocument): Promise<boolean> {
  const owner = { instanceId: ctx.instanceId };
  let changed = false;
  const { branding, loginPolicy } = document;
  if (branding !== undefined) {
    changed = (await refusedAt(ctx, branding.path, () => declareBranding(ctx.trx, writer(ctx), owner, labelFrom(DEFAULT_LABEL, branding), branding.images))) || changed;
  }
  if (loginPolicy !== undefined) {
    changed = (await refusedAt(ctx, loginPolicy.path, () => declareLoginPolicy(ctx.trx, writer(ctx), owner, policyFrom(DEFAULT_LOGIN, loginPolicy)))) || changed;
  }
  return changed;
}

/**
 * An organization's registration switch when the file gives it a login policy without one: the
 * default rule (docs/security.md 10.12): the instance's for its default organization, else closed.
 */
export async function defaultRegistration(ctx: ApplyContext, isDefaultOrg: boolean): Promise<boolean> {
  return isDefaultOrg && (await effectiveLoginPolicy(ctx.trx, { instanceId: ctx.instanceId })).allowRegister;
}

/**
 * An organization's branding and login policy, when the file names them; `allowRegister` is the
 * organization's registration switch as applied to it. True when anything changed.
 */
export async function applyOrgPolicies(
  ctx: ApplyContext,
  orgId: string,
  spec: { branding: BrandingSpec | undefined; loginPolicy: LoginPolicySpec | undefined },
  allowRegister: boolean,
): Promise<boolean> {
  const owner = { instanceId: ctx.instanceId, orgId };
  let changed = false;
  const { branding, loginPolicy } = spec;
  if (branding !== undefined) {
    const base = await effectiveBranding(ctx.trx, { instanceId: ctx.instanceId });
    changed = (await refusedAt(ctx, branding.path, () => declareBranding(ctx.trx, writer(ctx), owner, labelFrom(base, branding), branding.images))) || changed;
  }
  if (loginPolicy !== undefined) {
    const base = await effectiveLoginPolicy(ctx.trx, { instanceId: ctx.instanceId });
    const desired = { ...policyFrom(base, loginPolicy), allowRegister };
    changed = (await refusedAt(ctx, loginPolicy.path, () => declareLoginPolicy(ctx.trx, writer(ctx), owner, desired))) || changed;
  }
  return changed;
}
