import { TurnBatch } from './turn-batch.ts';

describe('TurnBatch', () => {
  it('makes the signatures asked for in one turn in a row, before any of their callers goes on', async () => {
    const batch = new TurnBatch();
    const events: string[] = [];
    const request = async (name: string): Promise<string> => {
      events.push(`${name} asks`);
      const signature = await batch.run(() => {
        events.push(`${name} signs`);
        return `${name}-signature`;
      });
      events.push(`${name} answers`);
      return signature;
    };
    const results = await Promise.all([request('a'), request('b'), request('c')]);
    expect(results).toEqual(['a-signature', 'b-signature', 'c-signature']);
    expect(events).toEqual(['a asks', 'b asks', 'c asks', 'a signs', 'b signs', 'c signs', 'a answers', 'b answers', 'c answers']);
  });

  it('takes in a signature asked for later in the same turn, before the check phase', async () => {
    const batch = new TurnBatch();
    const signed: string[] = [];
    const first = batch.run(() => signed.push('first'));
    // Like the next ready socket's request: later in the turn, but before the check phase.
    const second = new Promise<number>((resolve) => {
      process.nextTick(() => resolve(batch.run(() => signed.push('second'))));
    });
    expect(signed).toEqual([]);
    await Promise.all([first, second]);
    expect(signed).toEqual(['first', 'second']);
  });

  it('fails only the caller whose signature threw', async () => {
    const batch = new TurnBatch();
    const outcomes = await Promise.allSettled([
      batch.run(() => 'one'),
      batch.run(() => {
        throw new Error('no signing key is active');
      }),
      batch.run(() => 'three'),
    ]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'one' },
      { status: 'rejected', reason: new Error('no signing key is active') },
      { status: 'fulfilled', value: 'three' },
    ]);
  });

  it('starts a new group for a signature asked for after the last one was made', async () => {
    const batch = new TurnBatch();
    await expect(batch.run(() => 1)).resolves.toBe(1);
    await expect(batch.run(() => 2)).resolves.toBe(2);
    await expect(Promise.all([batch.run(() => 3), batch.run(() => 4)])).resolves.toEqual([3, 4]);
  });
});
