/**
 * Passkeys (docs/passkeys.md): WebAuthn credentials of human users, the challenges of passkey
 * sign-ins, and the one-time codes that let someone register a passkey for a user without signing in.
 *
 * - `passkeys`: one row per credential. A registration starts `pending` with its challenge and an
 *   expiry (5 minutes); verified, it becomes `ready` with the credential id, its COSE public key
 *   (base64url), the sign counter and transports. `possibly_cloned` marks a credential whose counter
 *   went backwards.
 * - `passkey_challenges`: sign-in challenges, used once, short-lived; `user_id` when the sign-in is
 *   for a known user (no foreign key: a challenge of a user deleted meanwhile simply finds no user).
 * - `passkey_codes`: one pending registration code per user, stored as sha256(salt + code).
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'ready')`))
    .addColumn('rp_id', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.unique())
    .addColumn('public_key', 'text')
    .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('possibly_cloned', 'boolean', (c) => c.notNull().defaultTo(false))
    // Pending registrations only: the challenge, when it lapses, and who started it with a code.
    .addColumn('challenge', 'text')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('code_holder', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addCheckConstraint('passkeys_ready_complete', sql`state <> 'ready' or (credential_id is not null and public_key is not null)`)
    .execute();
  await db.schema.createIndex('passkeys_user_idx').on('passkeys').columns(['user_id', 'state']).execute();

  await db.schema
    .createTable('passkey_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('passkey_challenges_expiry_idx').on('passkey_challenges').column('expires_at').execute();

  await db.schema
    .createTable('passkey_codes')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('salt', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkey_codes').ifExists().execute();
  await db.schema.dropTable('passkey_challenges').ifExists().execute();
  await db.schema.dropTable('passkeys').ifExists().execute();
}
