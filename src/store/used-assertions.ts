/**
 * The `used_assertions` table: the JWT assertions already accepted (RFC 7523 §3 item 7,
 * docs/security.md 10.9), one row per signer and assertion id, kept until the assertion can no
 * longer be accepted.
 */
import { CompiledQuery } from 'kysely';
import { preparedText, type DB } from './database.ts';
import { InsertBatcher } from './insert-batcher.ts';
import { deleteSomeExpired } from './tokens.ts';

export interface AssertionMark {
  id: string;
  expiresAt: Date;
}

/** Compiled once: the statement's text never changes, so kysely has nothing to build per batch. */
const MARK_STATEMENT = preparedText(
  'mark_assertions_used',
  `insert into used_assertions (id, expires_at)
  select id, expires_at from unnest($1::text[], $2::timestamptz[]) as t(id, expires_at)
  on conflict (id) do nothing
  returning id`,
);

/**
 * Records assertions as used, in one statement; one answer per mark, false when it already was
 * (the row exists, or an earlier mark of the same batch has the same id). Each column travels as
 * one array, so the text is the same for every batch size and runs prepared, as the token insert
 * does (store/tokens.ts insertAccessTokens).
 */
export async function markAssertionsUsed(db: DB, marks: readonly AssertionMark[]): Promise<boolean[]> {
  if (marks.length === 0) return [];
  const { rows: inserted } = await db.executeQuery<{ id: string }>(
    CompiledQuery.raw(MARK_STATEMENT, [marks.map((mark) => mark.id), marks.map((mark) => mark.expiresAt)]),
  );
  const fresh = new Set(inserted.map((row) => row.id));
  return marks.map((mark) => fresh.delete(mark.id));
}

const batchers = new WeakMap<DB, InsertBatcher<AssertionMark, boolean>>();

/**
 * Records an assertion as used; resolves to false when it already was. Marks of concurrent requests
 * share one INSERT (store/insert-batcher.ts); each resolves after that statement has committed.
 */
export function markAssertionUsed(db: DB, id: string, expiresAt: Date): Promise<boolean> {
  if (db.isTransaction) return markAssertionsUsed(db, [{ id, expiresAt }]).then(([first]) => first!);
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new InsertBatcher((marks) => markAssertionsUsed(db, marks), { concurrency: 2, maxRows: 500 });
    batchers.set(db, batcher);
  }
  return batcher.add({ id, expiresAt });
}

/** Deletes at most `limit` marks of assertions that expired before `now`; returns how many. */
export async function deleteExpiredAssertions(db: DB, now: Date, limit: number): Promise<number> {
  return deleteSomeExpired(db, 'used_assertions', now, limit);
}
