/**
 * The identity provider calls of the v1 AdminService and ManagementService (docs/federation.md),
 * one implementation for both: the admin calls act on the instance, the management calls on the
 * organization of the call (policy/views.ts `orgOfCall`). Which one is `ownerOf`'s business.
 *
 * - Management ListProviders lists the organization's own providers and the instance's; Get,
 *   Update and Delete find only the organization's own (an instance provider or another
 *   organization's is NotFound), as ZITADEL's internal/api/grpc/management/idp.go.
 * - An Update of the other kind's id is NotFound. An Update that changes nothing answers the
 *   current details (ZITADEL's commands do the same for providers).
 * - The client secret is in no answer.
 */
import type { HandlerContext } from '@connectrpc/connect';
import type { ListQuery } from '../../../gen/zitadel/object_pb.js';
import type { Gatehouse } from '../../context.ts';
import {
  addProvider, addProviderToLoginPolicy, changeProvider, listProviders, loginPolicyProviders, ownProvider, removeProvider, removeProviderFromLoginPolicy,
  type IdpContext, type IdpOwner, type IdpWriter,
} from '../../domain/federation/providers.ts';
import type { ChangeDetails } from '../../domain/kernel/events.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import type { DB } from '../../store/database.ts';
import { pageOf } from '../management/lists.ts';
import { objectDetails } from '../policy/views.ts';
import { filterProviders, listDetails, oauthInput, oidcInput, toPolicyLink, toProvider, type ProviderQueryCase } from './views.ts';

/** Whose providers a call acts on, and who calls (checked: IAM_OWNER, or ORG_OWNER of the organization). */
export type OwnerOfCall = (ctx: HandlerContext) => Promise<{ owner: IdpOwner; principal: Principal }>;

type OidcRequest = Parameters<typeof oidcInput>[0];
type OAuthRequest = Parameters<typeof oauthInput>[0];

/** The context the domain checks and seals a provider with. */
export function idpContext(gh: Pick<Gatehouse, 'config' | 'masterKey'>): IdpContext {
  return { allowPrivateNetworks: gh.config.idpAllowPrivateNetworks, masterKey: gh.masterKey };
}

export function providerCalls(gh: Gatehouse, ownerOf: OwnerOfCall, withInstance: boolean) {
  async function write<T>(ctx: HandlerContext, change: (trx: DB, writer: IdpWriter, owner: IdpOwner) => Promise<T>): Promise<T> {
    const { owner, principal } = await ownerOf(ctx);
    const writer = { instanceId: gh.instanceId, creator: creatorOf(principal) };
    const result = await gh.db.transaction().execute((trx) => change(trx, writer, owner));
    gh.directory.clear();
    return result;
  }
  const details = (change: ChangeDetails) => ({ details: objectDetails(change) });

  return {
    async listProviders(req: { query?: ListQuery | undefined; queries: { query: ProviderQueryCase }[] }, ctx: HandlerContext) {
      const { owner } = await ownerOf(ctx);
      const { total, page } = filterProviders(await listProviders(gh.db, owner, withInstance), req.queries, req.query);
      return { details: listDetails(total), result: page.map(toProvider) };
    },
    async getProviderByID(req: { id: string }, ctx: HandlerContext) {
      const { owner } = await ownerOf(ctx);
      return { idp: toProvider(await ownProvider(gh.db, owner, req.id)) };
    },
    deleteProvider: (req: { id: string }, ctx: HandlerContext) => write(ctx, async (trx, writer, owner) => details(await removeProvider(trx, writer, owner, req.id))),
    addGenericOIDCProvider: (req: OidcRequest, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => {
        const added = await addProvider(trx, writer, owner, oidcInput(req), idpContext(gh));
        return { details: objectDetails(added.details), id: added.id };
      }),
    updateGenericOIDCProvider: (req: OidcRequest & { id: string }, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => details(await changeProvider(trx, writer, owner, req.id, oidcInput(req), idpContext(gh)))),
    addGenericOAuthProvider: (req: OAuthRequest, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => {
        const added = await addProvider(trx, writer, owner, oauthInput(req), idpContext(gh));
        return { details: objectDetails(added.details), id: added.id };
      }),
    updateGenericOAuthProvider: (req: OAuthRequest & { id: string }, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => details(await changeProvider(trx, writer, owner, req.id, oauthInput(req), idpContext(gh)))),

    addIDPToLoginPolicy: (req: { idpId: string }, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => details(await addProviderToLoginPolicy(trx, writer, owner, req.idpId))),
    removeIDPFromLoginPolicy: (req: { idpId: string }, ctx: HandlerContext) =>
      write(ctx, async (trx, writer, owner) => details(await removeProviderFromLoginPolicy(trx, writer, owner, req.idpId))),
    async listLoginPolicyIDPs(req: { query?: ListQuery | undefined }, ctx: HandlerContext) {
      const { owner } = await ownerOf(ctx);
      const links = await loginPolicyProviders(gh.db, owner);
      const page = pageOf(req.query, 'query');
      return { details: listDetails(links.length), result: links.slice(page.offset, page.offset + page.limit).map(toPolicyLink) };
    },
  };
}
