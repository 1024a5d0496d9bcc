import { generateKeyPairSync, sign as rsaSign, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { verifyOwnJwt, type VerificationKey } from './own-jwt.ts';

const ISSUER = 'https://id.example';
const NOW = 1_800_000_000_000;
const pairs = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: generateKeyPairSync('ed25519'),
} as const;
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });

function keyFor(alg: keyof typeof pairs) {
  return (kid: string): VerificationKey | undefined => (kid === 'k1' ? { alg, key: pairs[alg].publicKey } : undefined);
}

async function sign(alg: string, key: KeyObject, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  const seconds = NOW / 1000;
  return new SignJWT({ iss: ISSUER, sub: 'u', iat: seconds, nbf: seconds, exp: seconds + 60, ...claims })
    .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt', ...header })
    .sign(key);
}

/** A JWS built by hand, for headers jose refuses to produce. */
function signRaw(header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${rsaSign('sha256', Buffer.from(input), pairs.RS256.privateKey).toString('base64url')}`;
}

const expected = { typ: 'at+jwt', issuer: ISSUER, now: NOW };

it.each(Object.keys(pairs) as Array<keyof typeof pairs>)('verifies an %s token it signed', async (alg) => {
  const token = await sign(alg, pairs[alg].privateKey);
  expect(verifyOwnJwt(token, expected, keyFor(alg))?.payload['sub']).toBe('u');
});

it.each([
  ['a foreign signature', () => sign('RS256', other.privateKey)],
  ['an unknown kid', () => sign('RS256', pairs.RS256.privateKey, {}, { kid: 'k2' })],
  ['another typ (an ID token)', () => sign('RS256', pairs.RS256.privateKey, {}, { typ: 'JWT' })],
  ['another issuer', () => sign('RS256', pairs.RS256.privateKey, { iss: 'https://evil.example' })],
  ['an expired token', () => sign('RS256', pairs.RS256.privateKey, { exp: NOW / 1000 })],
  ['a token not yet valid', () => sign('RS256', pairs.RS256.privateKey, { nbf: NOW / 1000 + 30 })],
  ['a critical header', async () => signRaw({ alg: 'RS256', kid: 'k1', typ: 'at+jwt', crit: ['x'], x: 1 }, { iss: ISSUER, exp: NOW / 1000 + 60 })],
  ['alg none', async () => `${Buffer.from('{"alg":"none","kid":"k1","typ":"at+jwt"}').toString('base64url')}.${Buffer.from(`{"iss":"${ISSUER}","exp":9999999999}`).toString('base64url')}.`],
  ['garbage', async () => 'a.b.c'],
  ['two parts', async () => 'a.b'],
])('refuses %s', async (_name, make) => {
  const token = await make();
  expect(verifyOwnJwt(token, expected, keyFor('RS256'))).toBeUndefined();
});

it('refuses a token whose header alg differs from the key (algorithm confusion)', async () => {
  const token = await sign('ES256', pairs.ES256.privateKey);
  expect(verifyOwnJwt(token, expected, keyFor('RS256'))).toBeUndefined();
});
