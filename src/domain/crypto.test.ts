import { MasterKey, hashSecret, safeEqual, verifySecret } from './crypto.ts';

it('hashes with argon2id and verifies, also under many concurrent calls', async () => {
  const hash = await hashSecret('s3cret');
  expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => verifySecret(hash, i % 2 === 0 ? 's3cret' : 'wrong')));
  expect(results).toEqual([true, false, true, false, true, false]);
  expect(await verifySecret('not-a-hash', 's3cret')).toBe(false);
}, 30000);

it.each([
  ['equal', 'abc', 'abc', true],
  ['different', 'abc', 'abd', false],
  ['a prefix', 'abc', 'abcd', false],
  ['empty', '', '', true],
])('safeEqual: %s', (_name, a, b, expected) => {
  expect(safeEqual(a, b)).toBe(expected);
});

it('seals with AES-256-GCM under the master key and refuses tampering', () => {
  const key = new MasterKey(Buffer.alloc(32, 1).toString('base64'));
  const sealed = key.encrypt('private');
  expect(sealed).toMatch(/^v1\./);
  expect(key.decrypt(sealed)).toBe('private');
  const parts = sealed.split('.');
  parts[3] = Buffer.from('tampered').toString('base64url');
  expect(() => key.decrypt(parts.join('.'))).toThrow();
  expect(() => new MasterKey(Buffer.alloc(16).toString('base64'))).toThrow('32 bytes');
});
