/**
 * Branding and the login policy, per organization with an instance default
 * (docs/branding-and-login-policy.md), and the uploaded images.
 *
 * - `label_policies`: branding. An owner (the instance, or an organization) has up to two rows: the
 *   `preview` every change goes to, and the `active` one the login pages show (ZITADEL's
 *   preview/activate model). An instance without rows has ZITADEL's defaults; an organization
 *   without rows has the instance's.
 * - `login_policies`: one row per owner; an instance without one has ZITADEL's defaults. Durations
 *   in seconds. `orgs.allow_register` stays the registration switch of organizations without a
 *   policy of their own.
 * - `assets`: uploaded logos and icons, by owner and key (`policy/label/logo-<id>`), served publicly
 *   at /assets/v1/{owner}/{key} with their hash as the ETag.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('label_policies')
    // The instance's id for the instance's branding, else the organization's id.
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('preview', 'active')`))
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('primary_color', 'text', (c) => c.notNull())
    .addColumn('background_color', 'text', (c) => c.notNull())
    .addColumn('warn_color', 'text', (c) => c.notNull())
    .addColumn('font_color', 'text', (c) => c.notNull())
    .addColumn('primary_color_dark', 'text', (c) => c.notNull())
    .addColumn('background_color_dark', 'text', (c) => c.notNull())
    .addColumn('warn_color_dark', 'text', (c) => c.notNull())
    .addColumn('font_color_dark', 'text', (c) => c.notNull())
    .addColumn('hide_login_name_suffix', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('disable_watermark', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('theme_mode', 'text', (c) => c.notNull().defaultTo('unspecified').check(sql`theme_mode in ('unspecified', 'auto', 'light', 'dark')`))
    .addColumn('logo_key', 'text')
    .addColumn('logo_dark_key', 'text')
    .addColumn('icon_key', 'text')
    .addColumn('icon_dark_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('label_policies_pk', ['owner_id', 'state'])
    .execute();

  await db.schema
    .createTable('login_policies')
    .addColumn('owner_id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('allow_username_password', 'boolean', (c) => c.notNull())
    .addColumn('allow_register', 'boolean', (c) => c.notNull())
    .addColumn('allow_external_idp', 'boolean', (c) => c.notNull())
    .addColumn('force_mfa', 'boolean', (c) => c.notNull())
    .addColumn('force_mfa_local_only', 'boolean', (c) => c.notNull())
    .addColumn('passwordless_allowed', 'boolean', (c) => c.notNull())
    .addColumn('hide_password_reset', 'boolean', (c) => c.notNull())
    .addColumn('ignore_unknown_usernames', 'boolean', (c) => c.notNull())
    .addColumn('allow_domain_discovery', 'boolean', (c) => c.notNull())
    .addColumn('disable_login_with_email', 'boolean', (c) => c.notNull())
    .addColumn('disable_login_with_phone', 'boolean', (c) => c.notNull())
    .addColumn('default_redirect_uri', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('password_check_lifetime_s', 'integer', (c) => c.notNull())
    .addColumn('external_login_check_lifetime_s', 'integer', (c) => c.notNull())
    .addColumn('mfa_init_skip_lifetime_s', 'integer', (c) => c.notNull())
    .addColumn('second_factor_check_lifetime_s', 'integer', (c) => c.notNull())
    .addColumn('multi_factor_check_lifetime_s', 'integer', (c) => c.notNull())
    .addColumn('second_factors', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('multi_factors', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('assets')
    // The instance's or the organization's id: the first segment of the public URL.
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    // The ETag: a hash of the bytes.
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('assets_pk', ['owner_id', 'key'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('assets').execute();
  await db.schema.dropTable('login_policies').execute();
  await db.schema.dropTable('label_policies').execute();
}
