/**
 * What list statements of the management API share: text matching as ZITADEL's text query methods
 * define it (equals, starts with, contains, ends with; each optionally ignoring case) and paging.
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';

export type TextMatch = 'equals' | 'startsWith' | 'contains' | 'endsWith';

export interface TextFilter {
  value: string;
  match: TextMatch;
  ignoreCase: boolean;
}

export interface Page {
  offset: number;
  limit: number;
  asc: boolean;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `column` (a qualified column name, or an expression) matched by `filter`. */
export function textCondition(column: string | RawBuilder<unknown>, filter: TextFilter): Expression<SqlBool> {
  const ref = typeof column === 'string' ? sql.ref(column) : column;
  if (filter.match === 'equals') {
    return filter.ignoreCase ? sql<SqlBool>`lower(${ref}) = lower(${filter.value})` : sql<SqlBool>`${ref} = ${filter.value}`;
  }
  const escaped = escapeLike(filter.value);
  const pattern = filter.match === 'startsWith' ? `${escaped}%` : filter.match === 'endsWith' ? `%${escaped}` : `%${escaped}%`;
  return filter.ignoreCase ? sql<SqlBool>`${ref} ilike ${pattern} escape '\\'` : sql<SqlBool>`${ref} like ${pattern} escape '\\'`;
}

/** The sequence of the newest event of an aggregate, as a column of a list statement. */
export function latestSequence(aggregateType: string, idColumn: string): RawBuilder<string | null> {
  return sql<string | null>`(select max(e.sequence)::text from events e where e.aggregate_type = ${aggregateType} and e.aggregate_id = ${sql.ref(idColumn)})`;
}
