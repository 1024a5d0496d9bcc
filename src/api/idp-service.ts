/**
 * zitadel.idp.v2.IdentityProviderService (docs/federation.md): GetIDPByID, the one v2 read of a
 * provider, which ZITADEL's login reads a provider's options with after a sign-in.
 *
 * The caller must be IAM_OWNER (every provider of the instance) or ORG_OWNER (the instance's
 * providers and those of the organizations it owns; another organization's provider is NotFound,
 * as if it did not exist). Anyone else is PermissionDenied. The client secret is never returned.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { IdentityProviderService } from '../../gen/zitadel/idp/v2/idp_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { anyProvider } from '../domain/federation/providers.ts';
import { Refusal } from '../domain/kernel/refusals.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { toIdpV2 } from './idp/views.ts';
import { managesOrg, requireManager } from './management/access.ts';

export function createIdentityProviderService(gh: Gatehouse): Partial<ServiceImpl<typeof IdentityProviderService>> {
  return {
    async getIDPByID(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const provider = await anyProvider(gh.db, gh.instanceId, req.id);
      if (provider.orgId !== null && !managesOrg(managed, provider.orgId)) throw new Refusal('not_found', 'IDP-NotFound', 'identity provider not found');
      return { idp: toIdpV2(provider) };
    },
  };
}
