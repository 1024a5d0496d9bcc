import { InsertBatcher } from './insert-batcher.ts';

/** A writer whose statements the test completes by hand, recording what each statement held. */
function manualWriter() {
  const statements: { rows: number[]; done: (error?: Error) => void }[] = [];
  // each row's result is ten times the row, so a caller can see it got its own
  const write = (rows: number[]) =>
    new Promise<number[]>((resolve, reject) => statements.push({ rows, done: (error) => (error ? reject(error) : resolve(rows.map((n) => n * 10))) }));
  return { statements, write };
}

/** Past the check phase in which the batcher sends, even when the statement was scheduled during this one. */
const tick = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('InsertBatcher', () => {
  it('writes a lone row in the turn it arrives, and rows that arrive meanwhile together in the next statement', async () => {
    const { statements, write } = manualWriter();
    const batcher = new InsertBatcher(write, { concurrency: 1, maxRows: 100 });
    const settled: number[] = [];
    const first = batcher.add(1).then((result) => settled.push(result));
    await tick();
    expect(statements.map((s) => s.rows)).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => batcher.add(n).then((result) => settled.push(result)));
    await tick();
    expect(statements).toHaveLength(1); // one statement in flight at a time
    statements[0]!.done();
    await first;
    await tick();
    expect(statements.map((s) => s.rows)).toEqual([[1], [2, 3, 4]]);
    expect(settled).toEqual([10]); // nobody is answered before the statement holding the row commits
    statements[1]!.done();
    await Promise.all(rest);
    expect(settled).toEqual([10, 20, 30, 40]);
  });

  it('does not send a row before the turn in which it arrived is over', async () => {
    const { statements, write } = manualWriter();
    const batcher = new InsertBatcher(write, { concurrency: 2, maxRows: 100 });
    const all = [batcher.add(1)];
    await Promise.resolve(); // later in the same turn: other requests reach their insert
    all.push(batcher.add(2), batcher.add(3));
    expect(statements).toHaveLength(0);
    await tick();
    expect(statements.map((s) => s.rows)).toEqual([[1, 2, 3]]);
    statements[0]!.done();
    await expect(Promise.all(all)).resolves.toEqual([10, 20, 30]);
  });

  it.each([
    [2, 5, [[1, 2, 3, 4, 5], [6, 7]]],
    [1, 2, [[1, 2], [3, 4], [5, 6], [7]]],
  ])('writes the rows of one turn together, at most %i statements in flight of at most %i rows', async (concurrency, maxRows, expected) => {
    const { statements, write } = manualWriter();
    const batcher = new InsertBatcher(write, { concurrency, maxRows });
    const all = [1, 2, 3, 4, 5, 6, 7].map((n) => batcher.add(n));
    for (let finished = 0; finished < expected.length; finished++) {
      await tick();
      expect(statements.length - finished).toBeLessThanOrEqual(concurrency);
      statements[finished]!.done();
    }
    await Promise.all(all);
    expect(statements.map((s) => s.rows).sort((x, y) => x[0]! - y[0]!)).toEqual(expected);
  });

  it('retries a failed batch row by row, so one bad row fails only its own request', async () => {
    const writes: number[][] = [];
    const batcher = new InsertBatcher(
      async (rows: number[]) => {
        writes.push(rows);
        await tick();
        if (rows.includes(13)) throw new Error('duplicate key');
        return rows.map(() => undefined);
      },
      { concurrency: 1, maxRows: 100 },
    );
    const first = batcher.add(1);
    await tick();
    const results = await Promise.allSettled([first, batcher.add(12), batcher.add(13), batcher.add(14)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(writes).toEqual([[1], [12, 13, 14], [12], [13], [14]]);
  });
});
