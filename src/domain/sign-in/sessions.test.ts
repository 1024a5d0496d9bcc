import { MasterKey } from '../kernel/crypto.ts';
import { isIssuedBrowserId, newBrowserId } from './sessions.ts';

const key = new MasterKey(Buffer.alloc(32, 7).toString('base64'));
const otherKey = new MasterKey(Buffer.alloc(32, 8).toString('base64'));
const issued = newBrowserId(key);
const [random, mac] = issued.split('.') as [string, string];
const flip = (s: string) => `${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`;

// docs/security.md 10.7: only values this server issued are browser ids
it.each([
  ['a value it issued', issued, true],
  ['the same value under another master key', newBrowserId(otherKey), false],
  ['a changed random part', `${flip(random)}.${mac}`, false],
  ['a changed MAC', `${random}.${flip(mac)}`, false],
  ['the random part alone (the old cookie format)', random, false],
  ['a truncated MAC', `${random}.${mac.slice(0, 22)}`, false],
  ['extra characters', `${issued}A`, false],
  ['empty', '', false],
])('isIssuedBrowserId: %s', (_name, value, expected) => {
  expect(isIssuedBrowserId(key, value)).toBe(expected);
});

it('issues a different value every time', () => {
  expect(newBrowserId(key)).not.toBe(newBrowserId(key));
  expect(issued).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
});
