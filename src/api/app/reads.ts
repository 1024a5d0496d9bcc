/**
 * zitadel.app.v2beta.AppService: reading and listing applications
 * (docs/management-api.md#who-may-do-what). Lists are filtered to the organizations the caller
 * manages, and their total counts only those; a project id that names nothing the caller may see is a
 * filter that matches nothing.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import { AppSorting, AppState } from '../../../gen/zitadel/app/v2beta/app_pb.js';
import type { AppService, ListApplicationsRequest } from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { listApps, type AppListQuery, type AppSortColumn } from '../../store/apps.ts';
import type { TextFilter } from '../../store/list-query.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { listFilter, requireManager } from '../management/access.ts';
import { invalidArgument, pageOf, textFilter } from '../management/lists.ts';
import { optionalId, targetApp } from './target.ts';
import { applicationOf } from './views.ts';

const SORT_COLUMNS: ReadonlyMap<AppSorting, AppSortColumn> = new Map([
  [AppSorting.APP_SORT_BY_ID, 'id'],
  [AppSorting.APP_SORT_BY_NAME, 'name'],
  // Every application is active: by state is by id.
  [AppSorting.APP_SORT_BY_STATE, 'id'],
  [AppSorting.APP_SORT_BY_CREATION_DATE, 'created_at'],
  [AppSorting.APP_SORT_BY_CHANGE_DATE, 'changed_at'],
]);

type Conditions = Pick<AppListQuery, 'names' | 'kind' | 'matchNothing'>;

/** The request's filters, all of which must hold. */
function conditionsOf(filters: ListApplicationsRequest['filters']): Conditions {
  const names: TextFilter[] = [];
  const kinds = new Set<'oidc' | 'api' | 'saml'>();
  let matchNothing = false;
  for (const [index, { filter }] of filters.entries()) {
    const field = `filters[${index}]`;
    switch (filter.case) {
      case 'nameFilter':
        names.push(textFilter(filter.value.name, filter.value.method, `${field}.nameFilter`));
        break;
      case 'stateFilter':
        if (!(filter.value in AppState)) throw invalidArgument(`${field}.stateFilter`, `unknown value ${filter.value}`);
        // Applications are active or gone: no application is inactive or removed.
        if (filter.value === AppState.INACTIVE || filter.value === AppState.REMOVED) matchNothing = true;
        break;
      case 'apiAppOnly':
        if (filter.value) kinds.add('api');
        break;
      case 'oidcAppOnly':
        if (filter.value) kinds.add('oidc');
        break;
      case 'samlAppOnly':
        if (filter.value) kinds.add('saml');
        break;
      case undefined:
        break;
    }
  }
  // Gatehouse has no SAML applications, and no application is of two kinds.
  if (kinds.has('saml') || kinds.size > 1) matchNothing = true;
  const [kind] = [...kinds].filter((k) => k !== 'saml') as ('oidc' | 'api')[];
  return { names, kind, matchNothing };
}

export function readMethods(gh: Gatehouse): Partial<ServiceImpl<typeof AppService>> {
  return {
    async getApplication(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const row = await targetApp(gh.db, gh.instanceId, managed, { appId: req.id, field: 'id', projectId: '' });
      return { app: applicationOf(row) };
    },

    async listApplications(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const page = pageOf(req.pagination);
      const sort = SORT_COLUMNS.get(req.sortingColumn);
      if (sort === undefined) throw invalidArgument('sortingColumn', `unknown value ${req.sortingColumn}`);
      const { rows, total } = await listApps(gh.db, {
        instanceId: gh.instanceId,
        orgIds: listFilter(managed),
        projectId: optionalId(req.projectId, 'projectId'),
        ...conditionsOf(req.filters),
        sort,
        page,
      });
      return { applications: rows.map(applicationOf), pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) } };
    },
  };
}
