import { createSecretKey } from 'node:crypto';
import { resetLinkId } from './password-reset.ts';

// The id a reset link carries (docs/login-ui.md#forgot-your-password): whoever holds no key cannot
// make one, and a newer code (another expiry) voids the older link. The tries it governs are tested
// against the real database in test/login/password-reset.test.ts.
const KEY = createSecretKey(Buffer.alloc(32, 1));
const OTHER_KEY = createSecretKey(Buffer.alloc(32, 2));
const EXPIRES = new Date(Date.UTC(2026, 10, 27, 13, 0, 0, 123));

test('is 22 URL-safe characters, the same for the same user, expiry and key', () => {
  expect(resetLinkId(KEY, 'u1', EXPIRES)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(resetLinkId(KEY, 'u1', new Date(EXPIRES.getTime()))).toBe(resetLinkId(KEY, 'u1', EXPIRES));
});

it.each([
  ['another user', () => resetLinkId(KEY, 'u2', EXPIRES)],
  ['another expiry, a millisecond later (a newer code)', () => resetLinkId(KEY, 'u1', new Date(EXPIRES.getTime() + 1))],
  ['another key', () => resetLinkId(OTHER_KEY, 'u1', EXPIRES)],
])('differs for %s', (_case, other) => {
  expect(other()).not.toBe(resetLinkId(KEY, 'u1', EXPIRES));
});
