/**
 * The indexes of `tokens` by grant and by session cover only the rows that have one. Machine
 * tokens (client_credentials, the JWT profile grant) have neither, and they are most of the inserts:
 * each cost two index entries of NULL that no query reads, since every statement that looks tokens up
 * by grant or session asks for given ids (`grant_id = …`, `session_id in (…)`), which PostgreSQL
 * answers from the partial indexes.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tokens_grant_idx').execute();
  await db.schema.dropIndex('tokens_session_idx').execute();
  await db.schema.createIndex('tokens_grant_idx').on('tokens').column('grant_id').where(sql.ref('grant_id'), 'is not', null).execute();
  await db.schema.createIndex('tokens_session_idx').on('tokens').column('session_id').where(sql.ref('session_id'), 'is not', null).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tokens_grant_idx').execute();
  await db.schema.dropIndex('tokens_session_idx').execute();
  await db.schema.createIndex('tokens_grant_idx').on('tokens').column('grant_id').execute();
  await db.schema.createIndex('tokens_session_idx').on('tokens').column('session_id').execute();
}
