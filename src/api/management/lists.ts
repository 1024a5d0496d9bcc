/**
 * Paging and text filters of the management API's list calls. ZITADEL's text query methods
 * (zitadel.object.v2.TextQueryMethod, zitadel.filter.v2beta/v2 TextFilterMethod) number their
 * values alike: equals, equals ignoring case, starts with, ..., ends with ignoring case.
 */
import { Code } from '@connectrpc/connect';
import type { Page, TextFilter, TextMatch } from '../../store/list-query.ts';
import { apiError } from '../errors.ts';

/** Results of a page when the request names no limit. */
export const DEFAULT_LIMIT = 100;
/** The largest page. */
export const MAX_LIMIT = 1000;

const MATCHES: readonly TextMatch[] = ['equals', 'startsWith', 'contains', 'endsWith'];

export function invalidArgument(field: string, problem: string) {
  return apiError(Code.InvalidArgument, 'API-InvalidArgument', `${field}: ${problem}`);
}

/** A text filter from its value and method; `field` names it in errors. */
export function textFilter(value: string, method: number, field: string): TextFilter {
  const match = MATCHES[Math.floor(method / 2)];
  if (match === undefined || method < 0 || !Number.isInteger(method)) throw invalidArgument(`${field}.method`, 'unknown text method');
  if (value.length > 1000) throw invalidArgument(field, 'must be at most 1000 characters');
  return { value, match, ignoreCase: method % 2 === 1 };
}

/** The page a request asks for (absent: the first page of the default size, ascending). */
export function pageOf(request: { offset: bigint; limit: number; asc: boolean } | undefined, field = 'pagination'): Page {
  if (request === undefined) return { offset: 0, limit: DEFAULT_LIMIT, asc: true };
  if (request.offset > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidArgument(`${field}.offset`, 'is too large');
  if (request.limit > MAX_LIMIT) throw invalidArgument(`${field}.limit`, `must be at most ${MAX_LIMIT}`);
  return { offset: Number(request.offset), limit: request.limit === 0 ? DEFAULT_LIMIT : request.limit, asc: request.asc };
}
