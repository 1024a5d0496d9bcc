/**
 * The identity model (docs/management-api.md#the-identity-model), signing keys, tokens and revocations,
 * features and the event log.
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// Migrations run against whatever schema exists at their moment in time, so they use Kysely<any>.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('default_org_id', 'text')
    .addColumn('enable_impersonation', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('instance_features')
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('instance_features_pk', ['instance_id', 'name'])
    .execute();

  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('primary_domain', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index orgs_name_uq on orgs (instance_id, lower(name))`.execute(db);
  await sql`create unique index orgs_domain_uq on orgs (instance_id, lower(primary_domain))`.execute(db);

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('human', 'machine')`))
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active').check(sql`state in ('active', 'locked', 'inactive')`))
    .addColumn('password_hash', 'text')
    .addColumn('email', 'text')
    .addColumn('email_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('phone', 'text')
    .addColumn('phone_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('given_name', 'text')
    .addColumn('family_name', 'text')
    .addColumn('nickname', 'text')
    .addColumn('display_name', 'text')
    .addColumn('preferred_language', 'text')
    .addColumn('gender', 'text')
    .addColumn('address', 'jsonb')
    .addColumn('secret_hash', 'text')
    .addColumn('access_token_type', 'text', (c) => c.notNull().defaultTo('opaque').check(sql`access_token_type in ('jwt', 'opaque')`))
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index users_name_uq on users (org_id, lower(user_name))`.execute(db);
  // client_credentials names a machine user by its user name alone, so machine names are unique per instance.
  await sql`create unique index users_machine_name_uq on users (instance_id, lower(user_name)) where kind = 'machine'`.execute(db);

  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    // The organization the role applies to; empty for instance-wide roles (IAM_*).
    .addColumn('scope_org_id', 'text', (c) => c.notNull().defaultTo(''))
    .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role', 'scope_org_id'])
    .execute();

  await db.schema
    .createTable('machine_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index projects_name_uq on projects (org_id, lower(name))`.execute(db);

  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('oidc').check(sql`kind in ('oidc', 'api')`))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('auth_method', 'text', (c) =>
      c.notNull().check(sql`auth_method in ('client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt')`),
    )
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('post_logout_redirect_uris', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('response_types', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('grant_types', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('access_token_type', 'text', (c) => c.notNull().defaultTo('opaque').check(sql`access_token_type in ('jwt', 'opaque')`))
    .addColumn('id_token_userinfo_assertion', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('dev_mode', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index apps_client_id_uq on apps (instance_id, client_id)`.execute(db);
  await sql`create unique index apps_name_uq on apps (project_id, lower(name))`.execute(db);

  await db.schema
    .createTable('app_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // The event log: every change, with the global sequence that API `details.sequence` reports.
  await db.schema
    .createTable('events')
    .addColumn('sequence', 'bigserial', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('aggregate_type', 'text', (c) => c.notNull())
    .addColumn('aggregate_id', 'text', (c) => c.notNull())
    .addColumn('resource_owner', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('creator', 'text')
    .addColumn('payload', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('events_aggregate_idx').on('events').columns(['aggregate_type', 'aggregate_id', 'sequence']).execute();

  // Signing keys: published from created_at, sign from sign_from, unpublished after unpublish_at.
  await db.schema
    .createTable('signing_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull()) // AES-256-GCM under the master key
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sign_from', 'timestamptz', (c) => c.notNull())
    .addColumn('retired_at', 'timestamptz')
    .addColumn('unpublish_at', 'timestamptz')
    .execute();

  // Stored tokens: opaque access tokens and refresh tokens (looked up by the SHA-256 of the token).
  // JWT access tokens are not stored; their revocation is a row in `revocations`.
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('access', 'refresh')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('audience', sql`text[]`, (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('actor', 'jsonb')
    .addColumn('auth_time', 'timestamptz')
    .addColumn('amr', sql`text[]`)
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('absolute_expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('tokens_grant_idx').on('tokens').column('grant_id').execute();
  await db.schema.createIndex('tokens_session_idx').on('tokens').column('session_id').execute();
  await db.schema.createIndex('tokens_expiry_idx').on('tokens').column('expires_at').execute();

  // Revoked identifiers: a JWT access token's jti, or a grant / session id that revokes all its tokens.
  await db.schema
    .createTable('revocations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Client-assertion jtis seen (RFC 7523 §3 item 7): a second use of one is a replay.
  await db.schema
    .createTable('used_assertions')
    .addColumn('id', 'text', (c) => c.primaryKey()) // issuer + "\n" + jti
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'used_assertions', 'revocations', 'tokens', 'signing_keys', 'events', 'app_keys', 'apps', 'projects',
    'machine_keys', 'user_roles', 'users', 'orgs', 'instance_features', 'instances',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
