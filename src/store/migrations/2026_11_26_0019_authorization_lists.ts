/**
 * Authorization lists that stay fast with a million authorizations
 * (docs/performance.md#a-million-users). Frozen in time: this file never imports application code.
 *
 * - authorizations_list_idx, authorizations_org_list_idx: a page in the default order (creation
 *   date) of the instance or of one organization is read from the index, whatever the size. A user's
 *   authorizations come from authorizations_user_project_uq, a project's from
 *   authorizations_project_idx.
 * - org_authorization_counts: how many authorizations each organization has, kept by statement
 *   triggers on authorizations, so that an unfiltered list's total needs no count over the table.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index authorizations_list_idx on authorizations (instance_id, created_at, id)`.execute(db);
  await sql`create index authorizations_org_list_idx on authorizations (org_id, created_at, id)`.execute(db);

  await db.schema
    .createTable('org_authorization_counts')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('authorizations', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index org_authorization_counts_instance_idx on org_authorization_counts (instance_id)`.execute(db);
  await sql`
    create function count_org_authorizations() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into org_authorization_counts (org_id, instance_id, authorizations)
          select org_id, min(instance_id), count(*) from added group by org_id
          on conflict (org_id) do update set authorizations = org_authorization_counts.authorizations + excluded.authorizations;
      else
        update org_authorization_counts c set authorizations = c.authorizations - gone.n
          from (select org_id, count(*) as n from removed group by org_id) gone
          where c.org_id = gone.org_id;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger authorizations_added_counted after insert on authorizations referencing new table as added for each statement execute function count_org_authorizations()`.execute(db);
  await sql`create trigger authorizations_removed_counted after delete on authorizations referencing old table as removed for each statement execute function count_org_authorizations()`.execute(db);
  await sql`insert into org_authorization_counts (org_id, instance_id, authorizations) select org_id, min(instance_id), count(*) from authorizations group by org_id`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists authorizations_removed_counted on authorizations`.execute(db);
  await sql`drop trigger if exists authorizations_added_counted on authorizations`.execute(db);
  await sql`drop function if exists count_org_authorizations()`.execute(db);
  await db.schema.dropTable('org_authorization_counts').ifExists().execute();
  await sql`drop index if exists authorizations_org_list_idx`.execute(db);
  await sql`drop index if exists authorizations_list_idx`.execute(db);
}
