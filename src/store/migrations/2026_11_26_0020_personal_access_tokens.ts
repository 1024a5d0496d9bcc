/**
 * Personal access tokens of machine users (docs/management-api.md#personal-access-tokens): found
 * by the SHA-256 of the token, as stored access tokens are; listed by user. A removed token leaves
 * a revocation behind (table `revocations`) so that every process drops it from its caches.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('personal_access_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create unique index personal_access_tokens_hash_uq on personal_access_tokens (token_hash)`.execute(db);
  await sql`create index personal_access_tokens_user_idx on personal_access_tokens (user_id, created_at)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('personal_access_tokens').ifExists().execute();
}
