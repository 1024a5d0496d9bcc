/**
 * Sign-ins at external identity providers in progress (docs/federation.md#the-intent-calls).
 *
 * - `idp_intents`: one row per sign-in at a provider (ZITADEL's "IdP intent"), from the start until
 *   it is used or an hour has passed. Looked up on the provider's callback by the hash of the random
 *   `state` sent to the provider, and by id with the hash of the intent token afterwards. The nonce
 *   and PKCE verifier (`sealed_request`) and the provider's answer with its tokens (`sealed_result`)
 *   are sealed with the master key; the answer is cleared when the intent is used, and the row is
 *   pruned after `expires_at`.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idp_intents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('idp_id', 'text', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    // SHA-256 (hex) of the `state` sent to the provider, and of the intent token.
    .addColumn('state_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('started').check(sql`status in ('started', 'exchanging', 'succeeded', 'failed', 'consumed')`))
    .addColumn('success_url', 'text', (c) => c.notNull())
    .addColumn('failure_url', 'text', (c) => c.notNull())
    .addColumn('auth_request_id', 'text')
    // Sealed with the master key: the nonce and PKCE verifier; the provider's answer and tokens.
    .addColumn('sealed_request', 'text', (c) => c.notNull())
    .addColumn('sealed_result', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idp_intents_expires_idx').on('idp_intents').column('expires_at').execute();
  await db.schema.createIndex('idp_intents_idp_idx').on('idp_intents').column('idp_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idp_intents').execute();
}
