/**
 * Browser sign-in: authorization requests, browser user sessions and authorization codes.
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A user signed in in one browser. A browser (its cookie, stored as SHA-256) can hold several.
  await db.schema
    .createTable('user_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('auth_time', 'timestamptz', (c) => c.notNull())
    .addColumn('amr', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('user_sessions_browser_idx').on('user_sessions').column('browser_hash').execute();
  await sql`create unique index user_sessions_browser_user_uq on user_sessions (browser_hash, user_id) where ended_at is null`.execute(db);

  // An authorization request between /authorize and the response to the client; afterwards it
  // carries the code (as SHA-256) until the code is exchanged once.
  await db.schema
    .createTable('auth_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('response_type', 'text', (c) => c.notNull())
    .addColumn('response_mode', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('nonce', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('prompt', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('max_age', 'integer')
    .addColumn('login_hint', 'text')
    .addColumn('hint_user_id', 'text')
    .addColumn('ui_locales', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('user_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('password_checked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.unique())
    .addColumn('code_expires_at', 'timestamptz')
    .addColumn('code_used_at', 'timestamptz')
    .addColumn('grant_id', 'text')
    .execute();
  await db.schema.createIndex('auth_requests_expiry_idx').on('auth_requests').column('expires_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('auth_requests').ifExists().execute();
  await db.schema.dropTable('user_sessions').ifExists().execute();
}
