/**
 * One instance-wide namespace for the values that can name something in a token (`aud`,
 * `client_id`, `sub`): user ids, machine user names (a machine's client id), project ids,
 * application ids and client ids. A value names one thing, whatever its kind and organization,
 * compared case-insensitively (`key` is the value as PostgreSQL's lower() gives it), and it stays
 * taken after its owner is deleted: a row is never removed, so a deleted user's or application's
 * tokens can never come to speak for whoever would otherwise get the value next.
 *
 * The table is filled from what exists, then from the events of what was deleted before it existed
 * (the first holder of a value keeps it where earlier data already collides).
 *
 * Also drops the index of tokens by subject: ending a user's access no longer touches its token rows
 * (the user's `tokens_valid_after` ends them), and no other statement looks tokens up by subject.
 *
 * Frozen in time: this file never imports application code.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('identifiers')
    .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull().check(sql`owner_type in ('user', 'project', 'app')`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('identifiers_pk', ['instance_id', 'key'])
    .execute();

  const fill = (select: string) =>
    sql`insert into identifiers (instance_id, key, value, owner_type, owner_id) ${sql.raw(select)} on conflict do nothing`.execute(db);
  await fill(`select instance_id, lower(id), id, 'user', id from users`);
  await fill(`select instance_id, lower(user_name), user_name, 'user', id from users where kind = 'machine'`);
  await fill(`select instance_id, lower(id), id, 'project', id from projects`);
  await fill(`select instance_id, lower(id), id, 'app', id from apps`);
  await fill(`select instance_id, lower(client_id), client_id, 'app', id from apps`);
  await fill(`select instance_id, lower(aggregate_id), aggregate_id, 'user', aggregate_id from events where event_type = 'user.removed'`);
  await fill(
    `select instance_id, lower(payload->>'userName'), payload->>'userName', 'user', aggregate_id from events
     where event_type = 'user.removed' and payload->>'userName' is not null
       and exists (select 1 from events added where added.aggregate_id = events.aggregate_id and added.event_type = 'user.machine.added')`,
  );
  await fill(`select instance_id, lower(aggregate_id), aggregate_id, 'project', aggregate_id from events where event_type = 'project.removed'`);
  await fill(`select instance_id, lower(aggregate_id), aggregate_id, 'app', aggregate_id from events where event_type = 'app.removed'`);
  await fill(
    `select instance_id, lower(payload->>'clientId'), payload->>'clientId', 'app', aggregate_id from events
     where event_type = 'app.removed' and payload->>'clientId' is not null`,
  );

  await db.schema.dropIndex('tokens_subject_idx').ifExists().execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('tokens_subject_idx').on('tokens').column('subject').execute();
  await db.schema.dropTable('identifiers').ifExists().execute();
}
