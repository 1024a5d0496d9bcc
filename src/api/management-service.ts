/**
 * zitadel.management.v1.ManagementService: an organization's branding (label policy) and login
 * policy (docs/branding-and-login-policy.md).
 *
 * - Every call acts on the organization of `x-zitadel-orgid`, else the caller's own, and needs
 *   ORG_OWNER of it or IAM_OWNER (policy/views.ts `managedOrg`): an organization owner never reads
 *   or writes another organization's policies.
 * - Reads fall back to the instance's policy (`is_default`); writes need the organization's own
 *   (Add first), as in ZITADEL. Branding changes go to the preview; Activate makes them visible.
 * - An Update that changes nothing is FailedPrecondition, as ZITADEL answers it.
 * - Also the organization's identity providers and the providers its login policy offers
 *   (docs/federation.md, idp/calls.ts).
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { ManagementService } from '../../gen/zitadel/management_pb.js';
import type { Gatehouse } from '../context.ts';
import {
  activateBranding, addOrgBranding, addOrgLoginPolicy, changeBranding, changeLoginPolicy, effectiveBranding, effectiveLoginPolicy, previewBranding,
  resetOrgBranding, resetOrgLoginPolicy, setBrandingImage, type ImageKind, type PolicyWriter,
} from '../domain/instance/policies.ts';
import type { ChangeDetails } from '../domain/kernel/events.ts';
import { creatorOf } from '../domain/kernel/principal.ts';
import type { DB } from '../store/database.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { addProviderToLoginPolicy, clearLoginPolicyProviders, loginPolicyProviders } from '../domain/federation/providers.ts';
import { providerCalls } from './idp/calls.ts';
import { toPolicyLink } from './idp/views.ts';
import { labelInput, loginInput, notChanged, objectDetails, orgOfCall, ownerOf, toLabelPolicy, toLoginPolicy } from './policy/views.ts';

export function createManagementService(gh: Gatehouse): Partial<ServiceImpl<typeof ManagementService>> {
  /** Runs a write on the call's organization in one transaction; the caches follow at once. */
  async function write(ctx: Parameters<typeof orgOfCall>[1], change: (trx: DB, writer: PolicyWriter, orgId: string) => Promise<ChangeDetails | undefined>) {
    const principal = requirePrincipal(ctx);
    const orgId = await orgOfCall(gh, ctx);
    const writer = { instanceId: gh.instanceId, creator: creatorOf(principal) };
    const details = await gh.db.transaction().execute((trx) => change(trx, writer, orgId));
    if (details === undefined) throw notChanged();
    gh.directory.clear();
    return { details: objectDetails(details) };
  }
  const removeImage = (kind: ImageKind) => (_req: unknown, ctx: Parameters<typeof orgOfCall>[1]) =>
    write(ctx, (trx, writer, orgId) => setBrandingImage(trx, writer, { instanceId: gh.instanceId, orgId }, kind, undefined));

  // The organization's identity providers, and the instance's in its list (docs/federation.md).
  const providers = providerCalls(gh, async (ctx) => ({ owner: { instanceId: gh.instanceId, orgId: await orgOfCall(gh, ctx) }, principal: requirePrincipal(ctx) }), true);

  return {
    ...providers,
    async getLoginPolicy(_req, ctx) {
      const orgId = await orgOfCall(gh, ctx);
      const owner = { instanceId: gh.instanceId, orgId };
      const [policy, idps] = await Promise.all([effectiveLoginPolicy(gh.db, owner), loginPolicyProviders(gh.db, owner)]);
      return { policy: toLoginPolicy(policy, ownerOf(owner, policy.source), policy.source !== 'org', idps.map(toPolicyLink)), isDefault: policy.source !== 'org' };
    },
    async getDefaultLoginPolicy(_req, ctx) {
      await orgOfCall(gh, ctx);
      const instance = { instanceId: gh.instanceId };
      const [policy, idps] = await Promise.all([effectiveLoginPolicy(gh.db, instance), loginPolicyProviders(gh.db, instance)]);
      return { policy: toLoginPolicy(policy, gh.instanceId, true, idps.map(toPolicyLink)) };
    },
    // `idps`: the providers the new policy offers at once (the organization's own or the instance's).
    addCustomLoginPolicy: (req, ctx) =>
      write(ctx, async (trx, writer, orgId) => {
        let details = await addOrgLoginPolicy(trx, writer, orgId, loginInput(req));
        for (const [i, idp] of req.idps.entries()) {
          details = await addProviderToLoginPolicy(trx, writer, { instanceId: gh.instanceId, orgId }, idp.idpId, `idps[${i}].idpId`);
        }
        return details;
      }),
    updateCustomLoginPolicy: (req, ctx) => write(ctx, (trx, writer, orgId) => changeLoginPolicy(trx, writer, { instanceId: gh.instanceId, orgId }, loginInput(req))),
    // The policy's provider list goes with it: the instance's list applies again.
    resetLoginPolicyToDefault: (_req, ctx) =>
      write(ctx, async (trx, writer, orgId) => {
        await clearLoginPolicyProviders(trx, orgId);
        return resetOrgLoginPolicy(trx, writer, orgId);
      }),

    async getLabelPolicy(_req, ctx) {
      const orgId = await orgOfCall(gh, ctx);
      const branding = await effectiveBranding(gh.db, { instanceId: gh.instanceId, orgId });
      const isDefault = branding.source !== 'org';
      return { policy: toLabelPolicy(gh.config.externalUrl, branding, isDefault), isDefault };
    },
    async getPreviewLabelPolicy(_req, ctx) {
      const orgId = await orgOfCall(gh, ctx);
      const branding = await previewBranding(gh.db, { instanceId: gh.instanceId, orgId });
      const isDefault = branding.source !== 'org';
      return { policy: toLabelPolicy(gh.config.externalUrl, branding, isDefault), isDefault };
    },
    async getDefaultLabelPolicy(_req, ctx) {
      await orgOfCall(gh, ctx);
      const branding = await effectiveBranding(gh.db, { instanceId: gh.instanceId });
      return { policy: toLabelPolicy(gh.config.externalUrl, branding, true) };
    },
    addCustomLabelPolicy: (req, ctx) => write(ctx, (trx, writer, orgId) => addOrgBranding(trx, writer, orgId, labelInput(req))),
    updateCustomLabelPolicy: (req, ctx) => write(ctx, (trx, writer, orgId) => changeBranding(trx, writer, { instanceId: gh.instanceId, orgId }, labelInput(req))),
    activateCustomLabelPolicy: (_req, ctx) => write(ctx, (trx, writer, orgId) => activateBranding(trx, writer, { instanceId: gh.instanceId, orgId })),
    removeCustomLabelPolicyLogo: removeImage('logo'),
    removeCustomLabelPolicyLogoDark: removeImage('logoDark'),
    removeCustomLabelPolicyIcon: removeImage('icon'),
    removeCustomLabelPolicyIconDark: removeImage('iconDark'),
    resetLabelPolicyToDefault: (_req, ctx) => write(ctx, (trx, writer, orgId) => resetOrgBranding(trx, writer, orgId)),
  };
}
