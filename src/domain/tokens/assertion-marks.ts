/**
 * Client assertions and JWT-profile assertions are accepted once within their lifetime: the first
 * use marks them spent (by signer and `jti`, else by the hash of the signing input), and every later
 * one finds the mark. The marks of concurrent requests share one INSERT (store/used-assertions.ts);
 * each request learns its answer when that statement has committed.
 */
import type { DB } from '../../store/database.ts';
import { markAssertionUsed } from '../../store/used-assertions.ts';

/** Marks the assertion `key` spent until `until`; false when it was spent before. */
export function spendAssertion(db: DB, key: string, until: Date): Promise<boolean> {
  return markAssertionUsed(db, key, until);
}
