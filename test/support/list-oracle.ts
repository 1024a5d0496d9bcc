/**
 * What the list tests share: the text methods read plainly (ZITADEL's equals, starts with, contains,
 * ends with, optionally ignoring case), PostgreSQL's byte order of the C collation, and the query
 * plans of the statements a list runs.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from '../../src/store/database.ts';
import type { Database } from '../../src/store/schema.ts';

export type TextMethod = 'equals' | 'startsWith' | 'contains' | 'endsWith';

export function matchesText(text: string, method: TextMethod, value: string, ignoreCase: boolean): boolean {
  const [subject, wanted] = ignoreCase ? [text.toLowerCase(), value.toLowerCase()] : [text, value];
  switch (method) {
    case 'equals':
      return subject === wanted;
    case 'startsWith':
      return subject.startsWith(wanted);
    case 'endsWith':
      return subject.endsWith(wanted);
    case 'contains':
      return subject.includes(wanted);
  }
}

export const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The plans of the statements `list` runs (a page and its count), through a pool that records them. */
export async function plansOf(databaseUrl: string, list: (db: DB) => Promise<unknown>): Promise<string> {
  const statements: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const recording = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') statements.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  try {
    await list(recording);
    const explained: string[] = [];
    for (const statement of statements) {
      const plan = await pool.query<{ 'QUERY PLAN': string }>(`explain ${statement.sql}`, [...statement.parameters]);
      explained.push(plan.rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
    return explained.join('\n---\n');
  } finally {
    await recording.destroy();
  }
}
