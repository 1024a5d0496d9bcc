/**
 * zitadel.admin.v1.AdminService: the instance's branding (label policy) and login policy, the
 * defaults of every organization without its own (docs/branding-and-login-policy.md). Every call
 * needs IAM_OWNER. Branding changes go to the preview; ActivateLabelPolicy makes them visible.
 * Also the instance's identity providers and the providers its login policy offers
 * (docs/federation.md, idp/calls.ts).
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AdminService } from '../../gen/zitadel/admin_pb.js';
import type { Gatehouse } from '../context.ts';
import {
  activateBranding, changeBranding, changeLoginPolicy, effectiveBranding, effectiveLoginPolicy, previewBranding, setBrandingImage, type ImageKind, type PolicyWriter,
} from '../domain/instance/policies.ts';
import type { ChangeDetails } from '../domain/kernel/events.ts';
import { creatorOf } from '../domain/kernel/principal.ts';
import type { DB } from '../store/database.ts';
import { loginPolicyProviders } from '../domain/federation/providers.ts';
import { providerCalls } from './idp/calls.ts';
import { toPolicyLink } from './idp/views.ts';
import { labelInput, loginInput, notChanged, objectDetails, requireIamOwner, toLabelPolicy, toLoginPolicy } from './policy/views.ts';

export function createAdminService(gh: Gatehouse): Partial<ServiceImpl<typeof AdminService>> {
  const instance = () => ({ instanceId: gh.instanceId });

  async function write(ctx: HandlerContext, change: (trx: DB, writer: PolicyWriter) => Promise<ChangeDetails | undefined>) {
    const principal = requireIamOwner(ctx);
    const writer = { instanceId: gh.instanceId, creator: creatorOf(principal) };
    const details = await gh.db.transaction().execute((trx) => change(trx, writer));
    if (details === undefined) throw notChanged();
    gh.directory.clear();
    return { details: objectDetails(details) };
  }
  const removeImage = (kind: ImageKind) => (_req: unknown, ctx: HandlerContext) => write(ctx, (trx, writer) => setBrandingImage(trx, writer, instance(), kind, undefined));

  // The instance's identity providers (docs/federation.md).
  const providers = providerCalls(gh, async (ctx) => ({ owner: instance(), principal: requireIamOwner(ctx) }), false);

  return {
    ...providers,
    async getLabelPolicy(_req, ctx) {
      requireIamOwner(ctx);
      return { policy: toLabelPolicy(gh.config.externalUrl, await effectiveBranding(gh.db, instance()), true) };
    },
    async getPreviewLabelPolicy(_req, ctx) {
      requireIamOwner(ctx);
      return { policy: toLabelPolicy(gh.config.externalUrl, await previewBranding(gh.db, instance()), true) };
    },
    updateLabelPolicy: (req, ctx) => write(ctx, (trx, writer) => changeBranding(trx, writer, instance(), labelInput(req))),
    activateLabelPolicy: (_req, ctx) => write(ctx, (trx, writer) => activateBranding(trx, writer, instance())),
    removeLabelPolicyLogo: removeImage('logo'),
    removeLabelPolicyLogoDark: removeImage('logoDark'),
    removeLabelPolicyIcon: removeImage('icon'),
    removeLabelPolicyIconDark: removeImage('iconDark'),
    async getLoginPolicy(_req, ctx) {
      requireIamOwner(ctx);
      const [policy, idps] = await Promise.all([effectiveLoginPolicy(gh.db, instance()), loginPolicyProviders(gh.db, instance())]);
      return { policy: toLoginPolicy(policy, gh.instanceId, true, idps.map(toPolicyLink)) };
    },
    updateLoginPolicy: (req, ctx) => write(ctx, (trx, writer) => changeLoginPolicy(trx, writer, instance(), loginInput(req))),
  };
}
