import { createHmac } from 'node:crypto';
import { MasterKey } from '../kernel/crypto.ts';
import { keyCheckOf } from './master-key-check.ts';

const base64 = (fill: number) => Buffer.alloc(32, fill).toString('base64');

describe('the master key check', () => {
  it('is the same for the same key, and differs between keys', () => {
    expect(keyCheckOf(new MasterKey(base64(7)))).toBe(keyCheckOf(new MasterKey(base64(7))));
    expect(keyCheckOf(new MasterKey(base64(7)))).not.toBe(keyCheckOf(new MasterKey(base64(8))));
    expect(keyCheckOf(new MasterKey(base64(7)))).toMatch(/^v1\.[A-Za-z0-9_-]{43}$/);
  });

  it('is a MAC under a derived key, not one under the master key itself', () => {
    const raw = Buffer.alloc(32, 7);
    const check = keyCheckOf(new MasterKey(raw.toString('base64')));
    expect(check).not.toContain(raw.toString('base64url'));
    expect(check).not.toBe(`v1.${createHmac('sha256', raw).update('gatehouse master key check').digest('base64url')}`);
  });
});
