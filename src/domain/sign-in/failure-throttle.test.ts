import { FailureThrottle } from './failure-throttle.ts';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0); // the start of a one-minute window

describe('FailureThrottle', () => {
  it('refuses the address once its failures reach the limit, until the next window', () => {
    const throttle = new FailureThrottle(3);
    for (let i = 0; i < 3; i++) {
      expect(throttle.retryAfter('a', T0 + i)).toBe(0);
      throttle.recordFailure('a', T0 + i);
    }
    expect(throttle.retryAfter('a', T0 + 10)).toBe(60);
    expect(throttle.retryAfter('b', T0 + 10)).toBe(0);
    expect(throttle.retryAfter('a', T0 + 59_500)).toBe(1);
    expect(throttle.retryAfter('a', T0 + 60_000)).toBe(0);
  });

  it('counts taken attempts before their outcome, so parallel guesses cannot all pass', () => {
    const throttle = new FailureThrottle(3);
    const taken = [0, 1, 2, 3, 4].map((i) => throttle.take('a', T0 + i));
    expect(taken).toEqual([0, 0, 0, 60, 60]);
  });

  it('gives a successful attempt back: only failures stay counted', () => {
    const throttle = new FailureThrottle(2);
    for (let i = 0; i < 10; i++) {
      expect(throttle.take('a', T0 + i)).toBe(0);
      throttle.succeeded('a', T0 + i);
    }
    expect(throttle.take('a', T0 + 20)).toBe(0);
    expect(throttle.take('a', T0 + 21)).toBe(0);
    expect(throttle.take('a', T0 + 22)).toBe(60);
  });

  it('starts its windows phaseMs after the minute when asked', () => {
    const throttle = new FailureThrottle(1, { phaseMs: 45_000 });
    expect(throttle.take('a', T0 + 50_000)).toBe(0);
    expect(throttle.take('a', T0 + 59_000)).toBe(46); // the window runs on past the minute, to T0 + 105 s
    expect(throttle.retryAfter('a', T0 + 104_500)).toBe(1);
    expect(throttle.take('a', T0 + 105_000)).toBe(0);
  });

  it('is off with a limit of 0', () => {
    const throttle = new FailureThrottle(0);
    for (let i = 0; i < 100; i++) throttle.recordFailure('a', T0);
    expect(throttle.take('a', T0)).toBe(0);
    expect(throttle.retryAfter('a', T0)).toBe(0);
  });
});
