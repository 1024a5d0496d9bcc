/**
 * zitadel.user.v2 AddPersonalAccessToken, RemovePersonalAccessToken and ListPersonalAccessTokens
 * (docs/management-api.md#personal-access-tokens): a machine user's long-lived bearer tokens, managed
 * by its administrators as its keys are (credentials-machine.ts), with ZITADEL's rules:
 *
 * - the expiry is required and must lie in the future (ZITADEL's v2 validation);
 * - a human user is FailedPrecondition;
 * - the token is returned once; only its SHA-256 is kept;
 * - a removed token stops authenticating at once, in every process (its id is revoked and announced);
 * - ListPersonalAccessTokens lists what the caller manages, with the filters of ListKeys.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { PersonalAccessTokenFieldName, type PersonalAccessTokensSearchFilter } from '../../../gen/zitadel/user/v2/pat_pb.js';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import { apiAudienceScope } from '../../config/index.ts';
import type { Gatehouse } from '../../context.ts';
import {
  addPersonalAccessToken,
  newPersonalAccessToken,
  personalAccessTokenScopes,
  removePersonalAccessToken,
} from '../../domain/tokens/personal-access-tokens.ts';
import type { KeyFilter, KeySortColumn } from '../../store/credentials.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { fieldError } from './credentials-common.ts';
import { dateOf, keyFilter, machineCredentialsPage, machineTargetOf } from './credentials-machine.ts';

type PatMethods = Pick<ServiceImpl<typeof UserService>, 'addPersonalAccessToken' | 'removePersonalAccessToken' | 'listPersonalAccessTokens'>;

const MAX_FILTERS = 100;

const SORT_COLUMNS: Partial<Record<PersonalAccessTokenFieldName, KeySortColumn>> = {
  [PersonalAccessTokenFieldName.UNSPECIFIED]: 'createdAt',
  [PersonalAccessTokenFieldName.CREATED_DATE]: 'createdAt',
  [PersonalAccessTokenFieldName.ID]: 'id',
  [PersonalAccessTokenFieldName.USER_ID]: 'userId',
  [PersonalAccessTokenFieldName.ORGANIZATION_ID]: 'orgId',
  [PersonalAccessTokenFieldName.EXPIRATION_DATE]: 'expiresAt',
};

/** A filter of ListPersonalAccessTokens: ListKeys' filters, the key id filter named for tokens. */
function tokenFilter(filter: PersonalAccessTokensSearchFilter, at: string): KeyFilter {
  const oneof = filter.filter;
  return keyFilter(oneof.case === 'tokenIdFilter' ? { case: 'keyIdFilter', value: oneof.value } : oneof, at, 'tokenIdFilter');
}

export function personalAccessTokenMethods(gh: Gatehouse): PatMethods {
  return {
    async addPersonalAccessToken(req, ctx) {
      const principal = requirePrincipal(ctx);
      if (req.expirationDate === undefined) throw fieldError('expirationDate', 'is required: a personal access token always expires');
      const expiresAt = dateOf(req.expirationDate, 'expirationDate');
      if (expiresAt.getTime() <= Date.now()) throw fieldError('expirationDate', 'must lie in the future');
      const token = newPersonalAccessToken();
      const details = await gh.db.transaction().execute(async (trx) => {
        const owner = await machineTargetOf(gh, trx, principal, req.userId);
        const scopes = personalAccessTokenScopes(apiAudienceScope(gh.config.serviceName));
        return addPersonalAccessToken(trx, owner, { id: token.id, hash: token.hash, expiresAt, scopes });
      });
      return { creationDate: timestampFromDate(details.changeDate), tokenId: token.id, token: token.token };
    },

    async removePersonalAccessToken(req, ctx) {
      const principal = requirePrincipal(ctx);
      if (req.tokenId === '') throw fieldError('tokenId', 'is required');
      const removed = await gh.db.transaction().execute(async (trx) => {
        const owner = await machineTargetOf(gh, trx, principal, req.userId);
        const result = await removePersonalAccessToken(trx, owner, req.tokenId);
        if (result === undefined) throw apiError(Code.NotFound, 'USER-PatNotFound', 'personal access token not found');
        return result;
      });
      gh.tokens.forgetPersonalAccessToken(removed.revoked);
      return { deletionDate: timestampFromDate(removed.details.changeDate) };
    },

    async listPersonalAccessTokens(req, ctx) {
      if (req.filters.length > MAX_FILTERS) throw fieldError('filters', `must be at most ${MAX_FILTERS}`);
      const filters = req.filters.map((filter, i) => tokenFilter(filter, `filters[${i}]`));
      const sortBy = SORT_COLUMNS[req.sortingColumn ?? PersonalAccessTokenFieldName.UNSPECIFIED];
      if (sortBy === undefined) throw fieldError('sortingColumn', 'unknown personal access token field');
      return machineCredentialsPage(gh, requirePrincipal(ctx), 'personal_access_tokens', { filters, sortBy, pagination: req.pagination });
    },
  };
}
