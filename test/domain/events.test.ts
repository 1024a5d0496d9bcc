/**
 * The change watcher's mark (docs/decisions.md#several-processes-on-one-database): it moves with
 * every change, also with one that commits after a later one, and not with audit records.
 */
import { sql } from 'kysely';
import { appendEvent, changeMark } from '../../src/domain/kernel/events.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import type { UserEvents } from '../../src/domain/kernel/event-types.ts';

let database: FreshDatabase;

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.close());

const change = (type: 'app.changed' | 'user.token.exchanged', audit = false) =>
  type === 'app.changed'
    ? appendEvent(database.db, { instanceId: 'i', aggregateId: 'a', resourceOwner: 'i', type, payload: { changed: [] }, ...(audit ? { audit } : {}) })
    : appendEvent(database.db, { instanceId: 'i', aggregateId: 'a', resourceOwner: 'i', type, payload: EXCHANGED, audit: true });

const EXCHANGED: UserEvents['user.token.exchanged'] = {
  clientId: 'c', shape: 'exchange', subject: 'a', subjectTokenType: 't', issuedTokenType: 't', scopes: [], audience: [], grantId: 'g',
};

it('moves with a change and stays with an audit record', async () => {
  const start = await changeMark(database.db);
  await change('app.changed');
  const changed = await changeMark(database.db);
  expect(changed).not.toBe(start);
  await change('user.token.exchanged', true);
  expect(await changeMark(database.db)).toBe(changed);
});

it('moves when a change becomes visible below the last sequence already seen (a late commit)', async () => {
  const early = await change('app.changed');
  await change('app.changed');
  // As if the early transaction had committed only now: its row appears under a sequence already passed.
  await database.db.deleteFrom('events').where('sequence', '=', early.sequence).execute();
  const seen = await changeMark(database.db);
  await sql`insert into events (sequence, instance_id, aggregate_type, aggregate_id, resource_owner, event_type) values (${early.sequence}, 'i', 'test', 'a', 'i', 'test.early')`.execute(database.db);
  expect(await changeMark(database.db)).not.toBe(seen);
});
