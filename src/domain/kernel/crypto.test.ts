import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MasterKey, hashingLoad, hashSecret, safeEqual, verifySecret } from './crypto.ts';

it('hashes with argon2id and verifies, also under many concurrent calls', async () => {
  const hash = await hashSecret('s3cret');
  expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => verifySecret(hash, i % 2 === 0 ? 's3cret' : 'wrong')));
  expect(results).toEqual([true, false, true, false, true, false]);
  expect(await verifySecret('not-a-hash', 's3cret')).toBe(false);
}, 30000);

/** Run in a child process: starts three hashes at once and prints how many run and how many wait. */
const script = `
  const { hashingLoad, hashSecret } = await import(process.argv[1]);
  const runs = [hashSecret('a'), hashSecret('b'), hashSecret('c')];
  const load = hashingLoad();
  await Promise.all(runs);
  console.log(JSON.stringify(load));
`;

it('runs at most two argon2 hashes at a time, and one on a single core', async () => {
  const runs = [hashSecret('a'), hashSecret('b'), hashSecret('c')];
  const parallel = Math.min(2, availableParallelism());
  expect(hashingLoad()).toEqual({ running: parallel, waiting: 3 - parallel });
  await Promise.all(runs);
  expect(hashingLoad()).toEqual({ running: 0, waiting: 0 });
  // A process confined to one core (taskset) takes the hashes one by one.
  const module = fileURLToPath(new URL('./crypto.ts', import.meta.url));
  const pinned = execFileSync('taskset', ['-c', '0', process.execPath, '--input-type=module', '-e', script, module], { encoding: 'utf8' });
  expect(JSON.parse(pinned)).toEqual({ running: 1, waiting: 2 });
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
