/**
 * ListUsers' request as a filter tree and a page (docs/decisions.md#lists): every query of the
 * request must match (and), `orQuery`/`andQuery`/`notQuery` nest. Text queries compare literally (no
 * wildcards) by the request's TextQueryMethod. A state query matches the state the API reports (a
 * brute-force lockout in force counts as locked); DELETED and INITIAL match nobody, as Gatehouse
 * removes deleted users and has no initial state. Limits keep one request's work bounded; going over
 * one, or an unknown enum value, is InvalidArgument naming the field.
 */
import { Code } from '@connectrpc/connect';
import { TextQueryMethod } from '../../../gen/zitadel/object/v2/object_pb.js';
import { Type, UserFieldName, type SearchQuery } from '../../../gen/zitadel/user/v2/query_pb.js';
import { UserState } from '../../../gen/zitadel/user/v2/user_pb.js';
import type { ListUsersRequest } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import { effectiveStateFilter } from '../../domain/users/user-states.ts';
import type { TextMatch, UserFilter, UserSortColumn, UserTextField } from '../../store/users.ts';
import { apiError } from '../errors.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const MAX_DEPTH = 8;
const MAX_QUERIES = 100;
const MAX_LIST = 1000;
const MAX_TEXT = 1000;

const METHODS: Record<TextQueryMethod, TextMatch['how']> = {
  [TextQueryMethod.EQUALS]: 'equals',
  [TextQueryMethod.EQUALS_IGNORE_CASE]: 'equals',
  [TextQueryMethod.STARTS_WITH]: 'startsWith',
  [TextQueryMethod.STARTS_WITH_IGNORE_CASE]: 'startsWith',
  [TextQueryMethod.CONTAINS]: 'contains',
  [TextQueryMethod.CONTAINS_IGNORE_CASE]: 'contains',
  [TextQueryMethod.ENDS_WITH]: 'endsWith',
  [TextQueryMethod.ENDS_WITH_IGNORE_CASE]: 'endsWith',
};

const IGNORE_CASE = new Set([
  TextQueryMethod.EQUALS_IGNORE_CASE,
  TextQueryMethod.STARTS_WITH_IGNORE_CASE,
  TextQueryMethod.CONTAINS_IGNORE_CASE,
  TextQueryMethod.ENDS_WITH_IGNORE_CASE,
]);

const SORT_COLUMNS: Record<UserFieldName, UserSortColumn> = {
  [UserFieldName.UNSPECIFIED]: 'created_at',
  [UserFieldName.USER_NAME]: 'user_name',
  [UserFieldName.FIRST_NAME]: 'given_name',
  [UserFieldName.LAST_NAME]: 'family_name',
  [UserFieldName.NICK_NAME]: 'nickname',
  [UserFieldName.DISPLAY_NAME]: 'display_name',
  [UserFieldName.EMAIL]: 'email',
  [UserFieldName.STATE]: 'state',
  [UserFieldName.TYPE]: 'kind',
  [UserFieldName.CREATION_DATE]: 'created_at',
};

function invalid(field: string, problem: string) {
  return apiError(Code.InvalidArgument, 'USER-InvalidQuery', `${field} ${problem}`);
}

function known<E extends number>(table: Record<E, unknown>, value: E, field: string): void {
  if (!Object.hasOwn(table, value)) throw invalid(field, `has an unknown value (${value})`);
}

function text(field: UserTextField, value: string, method: TextQueryMethod, path: string): UserFilter {
  known(METHODS, method, `${path}.method`);
  if (value.length > MAX_TEXT) throw invalid(path, `must be at most ${MAX_TEXT} characters`);
  return { kind: 'text', field, match: { how: METHODS[method], ignoreCase: IGNORE_CASE.has(method), value } };
}

function list(values: readonly string[], path: string): readonly string[] {
  if (values.length > MAX_LIST) throw invalid(path, `may hold at most ${MAX_LIST} values`);
  return values;
}

class QueryReader {
  #count = 0;
  readonly now: Date;
  constructor(now: Date) {
    this.now = now;
  }

  all(queries: readonly SearchQuery[], path: string, depth: number): UserFilter[] {
    return queries.map((query, i) => this.one(query, `${path}[${i}]`, depth));
  }

  nested(queries: readonly SearchQuery[], path: string, depth: number): UserFilter[] {
    if (queries.length === 0) throw invalid(path, 'must hold at least one query');
    return this.all(queries, path, depth + 1);
  }

  one(query: SearchQuery, path: string, depth: number): UserFilter {
    if (++this.#count > MAX_QUERIES) throw invalid('queries', `may hold at most ${MAX_QUERIES} queries in all`);
    if (depth > MAX_DEPTH) throw invalid(path, `nests more than ${MAX_DEPTH} levels`);
    const q = query.query;
    const at = `${path}.${q.case ?? ''}`;
    switch (q.case) {
      case 'userNameQuery':
        return text('user_name', q.value.userName, q.value.method, at);
      case 'firstNameQuery':
        return text('given_name', q.value.firstName, q.value.method, at);
      case 'lastNameQuery':
        return text('family_name', q.value.lastName, q.value.method, at);
      case 'nickNameQuery':
        return text('nickname', q.value.nickName, q.value.method, at);
      case 'displayNameQuery':
        return text('display_name', q.value.displayName, q.value.method, at);
      case 'emailQuery':
        return text('email', q.value.emailAddress, q.value.method, at);
      case 'phoneQuery':
        return text('phone', q.value.number, q.value.method, at);
      case 'loginNameQuery':
        return text('login_name', q.value.loginName, q.value.method, at);
      case 'stateQuery':
        return this.state(q.value.state, `${at}.state`);
      case 'typeQuery':
        if (q.value.type === Type.HUMAN) return { kind: 'type', type: 'human' };
        if (q.value.type === Type.MACHINE) return { kind: 'type', type: 'machine' };
        throw invalid(`${at}.type`, 'must be TYPE_HUMAN or TYPE_MACHINE');
      case 'inUserIdsQuery':
        return { kind: 'ids', ids: list(q.value.userIds, `${at}.userIds`) };
      case 'inUserEmailsQuery':
        return { kind: 'emails', emails: list(q.value.userEmails, `${at}.userEmails`) };
      case 'organizationIdQuery':
        return { kind: 'org', orgId: q.value.organizationId };
      case 'orQuery':
        return { kind: 'or', filters: this.nested(q.value.queries, `${at}.queries`, depth) };
      case 'andQuery':
        return { kind: 'and', filters: this.nested(q.value.queries, `${at}.queries`, depth) };
      case 'notQuery':
        if (q.value.query === undefined) throw invalid(`${at}.query`, 'is required');
        return { kind: 'not', filter: this.one(q.value.query, `${at}.query`, depth + 1) };
      case undefined:
        throw invalid(path, 'sets no query');
    }
  }

  state(state: UserState, path: string): UserFilter {
    switch (state) {
      case UserState.ACTIVE:
        return effectiveStateFilter('active', this.now);
      case UserState.INACTIVE:
        return effectiveStateFilter('inactive', this.now);
      case UserState.LOCKED:
        return effectiveStateFilter('locked', this.now);
      case UserState.DELETED:
      case UserState.INITIAL:
        return { kind: 'ids', ids: [] };
      default:
        throw invalid(path, 'must name a user state');
    }
  }
}

export interface UserListRequest {
  filter: UserFilter;
  sort: UserSortColumn;
  asc: boolean;
  offset: number;
  limit: number;
}

export function readListUsers(req: ListUsersRequest, now = new Date()): UserListRequest {
  known(SORT_COLUMNS, req.sortingColumn, 'sortingColumn');
  const offset = req.query?.offset ?? 0n;
  if (offset > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid('query.offset', 'is too large');
  const limit = req.query?.limit || DEFAULT_LIMIT;
  if (limit > MAX_LIMIT) throw invalid('query.limit', `must be at most ${MAX_LIMIT}`);
  const filters = new QueryReader(now).all(req.queries, 'queries', 1);
  return { filter: { kind: 'and', filters }, sort: SORT_COLUMNS[req.sortingColumn], asc: req.query?.asc ?? false, offset: Number(offset), limit };
}
