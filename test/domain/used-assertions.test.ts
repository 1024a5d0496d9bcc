/** Used assertions (docs/security.md 10.9): marks of concurrent requests share one statement, and one use wins. */
import { markAssertionUsed, markAssertionsUsed } from '../../src/store/used-assertions.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

describe('used assertions', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.close());

  const later = new Date(Date.now() + 60_000);

  it('answers each mark of one statement: new, already used, or repeated within the statement', async () => {
    expect(await markAssertionsUsed(database.db, [{ id: 'a', expiresAt: later }])).toEqual([true]);
    const answers = await markAssertionsUsed(database.db, [
      { id: 'a', expiresAt: later },
      { id: 'b', expiresAt: later },
      { id: 'b', expiresAt: later },
      { id: 'c', expiresAt: later },
    ]);
    expect(answers).toEqual([false, true, false, true]);
  });

  it('lets exactly one of many parallel uses of the same assertion through', async () => {
    const uses = await Promise.all(Array.from({ length: 25 }, () => markAssertionUsed(database.db, 'replayed', later)));
    expect(uses.filter(Boolean)).toHaveLength(1);
    const distinct = await Promise.all(Array.from({ length: 25 }, (_, i) => markAssertionUsed(database.db, `jti-${i}`, later)));
    expect(distinct.every(Boolean)).toBe(true);
  });
});
