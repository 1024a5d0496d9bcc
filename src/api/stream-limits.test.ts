import { createStreamGate, STREAM_LIMITS } from './stream-limits.ts';

describe('createStreamGate', () => {
  it('lets an address hold perAddress streams, then names the full cap', () => {
    const gate = createStreamGate({ perAddress: 2, total: 10 });
    expect(typeof gate.enter('a')).toBe('function');
    expect(typeof gate.enter('a')).toBe('function');
    expect(gate.enter('a')).toBe('address');
    expect(typeof gate.enter('b')).toBe('function');
    expect(gate.open).toBe(3);
  });

  it('refuses every address once the total is reached', () => {
    const gate = createStreamGate({ perAddress: 2, total: 3 });
    for (const key of ['a', 'b', 'c']) expect(typeof gate.enter(key)).toBe('function');
    expect(gate.enter('d')).toBe('total');
    // an address at its own cap hears of its own cap first
    const both = createStreamGate({ perAddress: 1, total: 1 });
    both.enter('a');
    expect(both.enter('a')).toBe('address');
  });

  it('gives the place back once per stream, however often release is called', () => {
    const gate = createStreamGate({ perAddress: 1, total: 2 });
    const release = gate.enter('a');
    if (typeof release !== 'function') throw new Error('refused');
    release();
    release();
    expect(gate.open).toBe(0);
    const again = gate.enter('a');
    expect(typeof again).toBe('function');
    expect(typeof gate.enter('b')).toBe('function');
    expect(gate.enter('c')).toBe('total');
  });

  it.each([
    ['perAddress', 16],
    ['total', 1024],
    ['watchMaxAgeMs', 30 * 60_000],
  ] as const)('the server allows %s = %d', (name, value) => {
    expect(STREAM_LIMITS[name]).toBe(value);
  });
});
