/**
 * zitadel.user.v2 AddIDPLink, ListIDPLinks and RemoveIDPLink (docs/federation.md#links): a user's
 * accounts at external identity providers, through the links of the federation wing
 * (domain/federation/links.ts).
 *
 * - The user itself or its administrators (target.ts): IAM_OWNER; ORG_OWNER of the user's
 *   organization. Anyone else is PermissionDenied, as for every user call.
 * - The provider must be one the user's organization may use (its own or the instance's): another
 *   organization's provider is NotFound.
 * - RemoveIDPLink refuses the user's last way to sign in (FailedPrecondition).
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { addLink, listLinks, removeLink, type LinkedUser } from '../../domain/federation/links.ts';
import { latestSequence } from '../../domain/kernel/events.ts';
import { creatorOf } from '../../domain/kernel/principal.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { changeDetails, listDetails } from '../management/details.ts';
import { pageOf } from '../management/lists.ts';
import { targetUser, type TargetUser } from './target.ts';

type LinkMethods = Pick<ServiceImpl<typeof UserService>, 'addIDPLink' | 'listIDPLinks' | 'removeIDPLink'>;

function linkedUserOf(target: TargetUser): LinkedUser {
  const { row } = target;
  return { id: row.id, instanceId: row.instance_id, orgId: row.org_id, kind: row.kind, hasPassword: row.password_hash !== null };
}

export function linkMethods(gh: Gatehouse): LinkMethods {
  return {
    async addIDPLink(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      const link = req.idpLink;
      const details = await gh.db.transaction().execute((trx) =>
        addLink(trx, creatorOf(principal), linkedUserOf(target), { idpId: link?.idpId ?? '', externalUserId: link?.userId ?? '', externalUserName: link?.userName ?? '' }, 'idpLink.'),
      );
      return { details: changeDetails(details) };
    },

    async listIDPLinks(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      const page = pageOf(req.query, 'query');
      const { links, total } = await listLinks(gh.db, target.row.id, page);
      return {
        details: listDetails(total, await latestSequence(gh.db)),
        result: links.map((link) => ({ idpId: link.idpId, userId: link.externalUserId, userName: link.externalUserName })),
      };
    },

    async removeIDPLink(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      const details = await gh.db.transaction().execute((trx) => removeLink(trx, creatorOf(principal), linkedUserOf(target), req.idpId, req.linkedUserId));
      return { details: changeDetails(details) };
    },
  };
}
