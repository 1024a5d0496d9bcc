/**
 * Hot reads compiled once (store/database.ts preparedSelect): every call runs the one text with its
 * own values, the query's own constants stay as they were, a value used twice is bound twice, and a
 * statement whose text does not hold one of its parameters is refused before it runs.
 */
import { sql } from 'kysely';
import { preparedSelect, type DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

interface Probe {
  id: string;
  kind: string;
  label: string;
}

const probes = (db: DB) => db.withTables<{ prepared_probe: Probe }>();

describe('a prepared read compiled once', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
    await sql`create table prepared_probe (id text primary key, kind text not null, label text not null)`.execute(database.db);
    await probes(database.db)
      .insertInto('prepared_probe')
      .values([
        { id: 'a', kind: 'human', label: 'first' },
        { id: 'b', kind: 'human', label: 'second' },
        { id: 'c', kind: 'machine', label: 'c' },
      ])
      .execute();
  });
  afterAll(() => database.close());

  const byIdAndLabel = preparedSelect('probe_by_id', (db: DB, id: string, label: string) =>
    probes(db)
      .selectFrom('prepared_probe')
      .select(['id', 'label'])
      .where('kind', '=', 'human') // a constant of the query, not a parameter
      .where((eb) => eb.or([eb('id', '=', id), eb('label', '=', id)]))
      .where('label', '<>', label),
  );

  it('runs the same text with each call’s values, the constants and repeated values bound as compiled', async () => {
    expect(await byIdAndLabel(database.db, 'a', 'x')).toEqual([{ id: 'a', label: 'first' }]);
    expect(await byIdAndLabel(database.db, 'b', 'x')).toEqual([{ id: 'b', label: 'second' }]);
    expect(await byIdAndLabel(database.db, 'b', 'second')).toEqual([]);
    // 'c' is a machine: the compiled constant still holds on a later call
    expect(await byIdAndLabel(database.db, 'c', 'x')).toEqual([]);
    expect(await byIdAndLabel(database.db, 'first', 'x')).toEqual([{ id: 'a', label: 'first' }]);
  });

  it('runs inside a transaction as well', async () => {
    const rows = await database.db.transaction().execute((trx) => byIdAndLabel(trx, 'a', 'x'));
    expect(rows).toEqual([{ id: 'a', label: 'first' }]);
  });

  it('refuses a statement whose text lacks one of its parameters', async () => {
    const careless = preparedSelect('probe_careless', (db: DB, id: string, _unused: string) => probes(db).selectFrom('prepared_probe').select('id').where('id', '=', id));
    await expect(careless(database.db, 'a', 'b')).rejects.toThrow('statement probe_careless: parameter 1 is not a single value of its text');
  });
});
