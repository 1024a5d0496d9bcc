/**
 * External identity providers (docs/federation.md).
 *
 * - `identity_providers`: generic OpenID Connect ('oidc') and OAuth 2.0 ('oauth') providers of the
 *   instance (`org_id` null) or of one organization. The client secret is sealed with the master
 *   key (never stored or returned in plain text). OpenID providers have an issuer; OAuth providers
 *   their three endpoints and the `id_attribute` of the user endpoint's answer.
 * - `login_policy_idps`: the providers a login policy offers at sign-in, by the policy's owner (the
 *   instance's id, or an organization's id); removed with the provider.
 * - `idp_links`: a user's accounts at providers, the upstream subject unique per provider; removed
 *   with the user or the provider.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('identity_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('oidc', 'oauth')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active').check(sql`state in ('active', 'inactive')`))
    .addColumn('client_id', 'text', (c) => c.notNull())
    // Sealed with the master key (kernel/crypto.ts MasterKey.encrypt).
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text')
    .addColumn('authorization_endpoint', 'text')
    .addColumn('token_endpoint', 'text')
    .addColumn('user_endpoint', 'text')
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('id_attribute', 'text')
    .addColumn('id_token_mapping', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('use_pkce', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_linking_allowed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_creation_allowed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_auto_creation', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_auto_update', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('auto_linking', 'text', (c) => c.notNull().defaultTo('none').check(sql`auto_linking in ('none', 'username', 'email')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('identity_providers_owner_idx').on('identity_providers').columns(['instance_id', 'org_id']).execute();

  await db.schema
    .createTable('login_policy_idps')
    // The instance's id for the instance's policy, else the organization's id.
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('idp_id', 'text', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('login_policy_idps_pk', ['owner_id', 'idp_id'])
    .execute();
  await db.schema.createIndex('login_policy_idps_idp_idx').on('login_policy_idps').column('idp_id').execute();

  await db.schema
    .createTable('idp_links')
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('idp_id', 'text', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The upstream subject (`sub`, or the OAuth provider's id attribute).
    .addColumn('external_user_id', 'text', (c) => c.notNull())
    .addColumn('external_user_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idp_links_pk', ['idp_id', 'external_user_id'])
    .execute();
  await db.schema.createIndex('idp_links_user_idx').on('idp_links').column('user_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idp_links').execute();
  await db.schema.dropTable('login_policy_idps').execute();
  await db.schema.dropTable('identity_providers').execute();
}
