/**
 * User lists that stay fast with a million users (docs/performance.md#a-million-users). Frozen in
 * time: this file never imports application code.
 *
 * - users_list_idx, users_org_list_idx: a page in the default order (newest first) of the instance or
 *   of one organization is read from the index, whatever the size.
 * - users_name_pattern_idx, users_email_pattern_idx: user names and addresses in any letter case,
 *   for equality and for prefixes (text_pattern_ops, so that LIKE 'abc%' is a range whatever the
 *   collation); they replace users_instance_name_idx and users_email_lower_idx.
 * - Trigram indexes (pg_trgm, shipped with PostgreSQL and with the embedded database) answer
 *   `contains` and `ends with` of user names, addresses and names.
 * - org_user_counts: how many users each organization has, kept by statement triggers on users, so
 *   that an unfiltered list's total needs no count over the table.
 */
import { sql, type Kysely } from 'kysely';

const TRIGRAM_COLUMNS = ['user_name', 'email', 'given_name', 'family_name', 'display_name'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index users_list_idx on users (instance_id, created_at, id)`.execute(db);
  await sql`create index users_org_list_idx on users (org_id, created_at, id)`.execute(db);
  await sql`create index users_name_pattern_idx on users (instance_id, lower(user_name) text_pattern_ops)`.execute(db);
  await sql`create index users_email_pattern_idx on users (instance_id, lower(email) text_pattern_ops) where email is not null`.execute(db);
  await sql`drop index if exists users_instance_name_idx`.execute(db);
  await sql`drop index if exists users_email_lower_idx`.execute(db);
  for (const column of TRIGRAM_COLUMNS) {
    await sql`create index ${sql.id(`users_${column}_trgm_idx`)} on users using gin (lower(${sql.ref(column)}) gin_trgm_ops)`.execute(db);
  }

  await db.schema
    .createTable('org_user_counts')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('users', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index org_user_counts_instance_idx on org_user_counts (instance_id)`.execute(db);
  await sql`
    create function count_org_users() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into org_user_counts (org_id, instance_id, users)
          select org_id, min(instance_id), count(*) from added group by org_id
          on conflict (org_id) do update set users = org_user_counts.users + excluded.users;
      else
        update org_user_counts c set users = c.users - gone.n
          from (select org_id, count(*) as n from removed group by org_id) gone
          where c.org_id = gone.org_id;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger users_added_counted after insert on users referencing new table as added for each statement execute function count_org_users()`.execute(db);
  await sql`create trigger users_removed_counted after delete on users referencing old table as removed for each statement execute function count_org_users()`.execute(db);
  await sql`insert into org_user_counts (org_id, instance_id, users) select org_id, min(instance_id), count(*) from users group by org_id`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists users_removed_counted on users`.execute(db);
  await sql`drop trigger if exists users_added_counted on users`.execute(db);
  await sql`drop function if exists count_org_users()`.execute(db);
  await db.schema.dropTable('org_user_counts').ifExists().execute();
  for (const column of TRIGRAM_COLUMNS) await sql`drop index if exists ${sql.id(`users_${column}_trgm_idx`)}`.execute(db);
  await sql`create index if not exists users_email_lower_idx on users (instance_id, lower(email)) where email is not null`.execute(db);
  await sql`create index if not exists users_instance_name_idx on users (instance_id, lower(user_name))`.execute(db);
  await sql`drop index if exists users_email_pattern_idx`.execute(db);
  await sql`drop index if exists users_name_pattern_idx`.execute(db);
  await sql`drop index if exists users_org_list_idx`.execute(db);
  await sql`drop index if exists users_list_idx`.execute(db);
}
