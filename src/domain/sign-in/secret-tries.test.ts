import { FailureThrottle, Throttled } from './failure-throttle.ts';
import { secretTry, withFailureBudget } from './secret-tries.ts';

const wrong = (result: string) => result !== 'right';

describe('secretTry', () => {
  it('counts failures against the address of the request, and gives right secrets back', async () => {
    const throttle = new FailureThrottle(2);
    const budget = { throttle, address: '198.51.100.1' };
    await withFailureBudget(budget, async () => {
      for (let i = 0; i < 5; i++) expect(await secretTry(async () => 'right', wrong)).toBe('right');
      expect(await secretTry(async () => 'wrong', wrong)).toBe('wrong');
      expect(await secretTry(async () => 'wrong', wrong)).toBe('wrong');
    });
    expect(throttle.retryAfter('198.51.100.1')).toBeGreaterThan(0);
    expect(throttle.retryAfter('198.51.100.2')).toBe(0);
  });

  it('refuses past the limit without running the check', async () => {
    const throttle = new FailureThrottle(1);
    let ran = 0;
    const check = async () => {
      ran++;
      return 'wrong';
    };
    await withFailureBudget({ throttle, address: 'a' }, async () => {
      await secretTry(check, wrong);
      await expect(secretTry(check, wrong)).rejects.toBeInstanceOf(Throttled);
    });
    expect(ran).toBe(1);
  });

  it('gives the try back when the check throws (nothing was decided)', async () => {
    const throttle = new FailureThrottle(1);
    await withFailureBudget({ throttle, address: 'a' }, async () => {
      await expect(secretTry(() => Promise.reject(new Error('busy')), wrong)).rejects.toThrow('busy');
      expect(await secretTry(async () => 'wrong', wrong)).toBe('wrong');
    });
  });

  it('counts nothing outside a request with an address', async () => {
    expect(await secretTry(async () => 'wrong', wrong)).toBe('wrong');
  });
});
