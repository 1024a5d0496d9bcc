/**
 * The management API's model (docs/management-api.md).
 *
 * - `project_roles`: the roles a project defines (key, display name, group).
 * - `authorizations`: some roles of a project given to a user; one row per user and project, in the
 *   project's organization. Removing a role from a project removes it from every authorization.
 * - Projects: role assertion, authorization required, project access required, private labeling.
 * - Applications: role assertions in ID tokens and JWT access tokens, and the OIDC application type
 *   (web, user agent, native) the management API reports.
 * - Machine users: a description.
 * - Users: `tokens_valid_after`, set when a user is deactivated, locked or deleted: access tokens
 *   issued before it stay dead after a reactivation or unlock (JWTs are not stored, so their issue
 *   time is what can be compared); an index of tokens by subject, to revoke a user's stored tokens.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('role_assertion', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.alterTable('projects').addColumn('authorization_required', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('projects').addColumn('project_access_required', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('projects').addColumn('private_labeling', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  await db.schema
    .createTable('project_roles')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('role_key', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('role_group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('project_roles_pk', ['project_id', 'role_key'])
    .execute();

  await db.schema
    .createTable('authorizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('roles', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('authorizations_user_project_uq').unique().on('authorizations').columns(['user_id', 'project_id']).execute();
  await db.schema.createIndex('authorizations_project_idx').on('authorizations').column('project_id').execute();

  await db.schema.alterTable('apps').addColumn('id_token_role_assertion', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('apps').addColumn('access_token_role_assertion', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema
    .alterTable('apps')
    .addColumn('oidc_app_type', 'text', (c) => c.notNull().defaultTo('web').check(sql`oidc_app_type in ('web', 'user_agent', 'native')`))
    .execute();

  await db.schema.alterTable('users').addColumn('description', 'text').execute();
  await db.schema.alterTable('users').addColumn('tokens_valid_after', 'timestamptz').execute();
  // Deactivating a user revokes its stored tokens by subject.
  await db.schema.createIndex('tokens_subject_idx').on('tokens').column('subject').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tokens_subject_idx').ifExists().execute();
  await db.schema.alterTable('users').dropColumn('tokens_valid_after').execute();
  await db.schema.alterTable('users').dropColumn('description').execute();
  for (const column of ['oidc_app_type', 'access_token_role_assertion', 'id_token_role_assertion']) {
    await db.schema.alterTable('apps').dropColumn(column).execute();
  }
  await db.schema.dropTable('authorizations').ifExists().execute();
  await db.schema.dropTable('project_roles').ifExists().execute();
  for (const column of ['private_labeling', 'project_access_required', 'authorization_required', 'role_assertion']) {
    await db.schema.alterTable('projects').dropColumn(column).execute();
  }
}
