/**
 * Identifiers and random tokens: shape, and no token handed out twice across the random pool's refills.
 *
 * @gatehouse-vm-modules the id tests set the clock with jest.spyOn(Date, 'now'), which only modules
 * loaded in this file's context see
 */
import { jest } from '@jest/globals';
import { newId, randomToken } from '../../src/domain/kernel/ids.ts';

describe('randomToken', () => {
  it('carries the asked number of bytes, URL-safe', () => {
    for (const bytes of [1, 16, 32, 33, 4096, 5000]) {
      const token = randomToken(bytes);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(bytes);
    }
  });

  it('never repeats across many refills of the pool, with sizes that do not divide it', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(randomToken(i % 3 === 0 ? 32 : 24));
    expect(seen.size).toBe(5000);
  });

  it('spreads its bytes: every byte value appears in 64 KiB of tokens', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 2048; i++) for (const byte of Buffer.from(randomToken(32), 'base64url')) counts[byte]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });
});

describe('newId', () => {
  it('is a decimal string that grows with time', () => {
    const first = newId();
    expect(first).toMatch(/^\d{17,19}$/);
    expect(BigInt(newId()) >> 22n).toBeGreaterThanOrEqual(BigInt(first) >> 22n);
  });

  it('never repeats within one millisecond, and keeps growing when the clock steps back', () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-11-24T08:00:00Z'));
    try {
      // 20,000 ids in one millisecond: with 22 random bits alone, some would repeat (birthday bound)
      const ids = Array.from({ length: 20_000 }, () => BigInt(newId()));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      now.mockReturnValue(Date.parse('2026-11-24T07:59:59Z'));
      expect(BigInt(newId())).toBeGreaterThan(ids.at(-1)!);
    } finally {
      now.mockRestore();
    }
  });
});
