/**
 * RFC 7523 assertions checked without a server: which algorithms, keys and headers verify, and the
 * claims rules (RFC 7519 §7.2) with their clock tolerance. Signed here with node:crypto and jose, so
 * that both a JOSE library's output and hand-built edge cases are covered.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject, type KeyPairKeyObjectResult } from 'node:crypto';
import { SignJWT } from 'jose';
import type { PublicKeyEntry } from '../../src/domain/instance/directory.ts';
import { InvalidGrant, OAuthError } from '../../src/oauth/errors.ts';
import { verifyAssertion, type AssertionRules } from '../../src/oauth/assertions.ts';
import { rsaKeyPair } from '../support/key-pool.ts';

const NOW = new Date('2026-11-24T12:00:00Z');
const SECONDS = Math.floor(NOW.getTime() / 1000);
const PARTY = '300000000000000001';
const AUDIENCE = 'https://id.example.test';

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Pair {
  privateKey: KeyObject;
  pem: string;
}

function pair({ privateKey, publicKey }: KeyPairKeyObjectResult): Pair {
  return { privateKey, pem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

const KEYS = {
  rsa: pair(rsaKeyPair()),
  rsaOther: pair(rsaKeyPair()),
  rsaShort: pair(generateKeyPairSync('rsa', { modulusLength: 1024 })),
  p256: pair(generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  p384: pair(generateKeyPairSync('ec', { namedCurve: 'P-384' })),
  p521: pair(generateKeyPairSync('ec', { namedCurve: 'P-521' })),
  ed25519: pair(generateKeyPairSync('ed25519')),
};

const entry = (key: Pair, id = 'k1', expiresAt: Date | null = null): PublicKeyEntry => ({ id, pem: key.pem, expiresAt });

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { iss: PARTY, sub: PARTY, aud: AUDIENCE, iat: SECONDS - 10, exp: SECONDS + 300, jti: 'j1', ...overrides };
}

/** A compact JWS signed with node:crypto: any header, any payload. */
function handSigned(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject, hash: string | null, p1363 = false): string {
  const input = `${b64json(header)}.${b64json(payload)}`;
  const signature = sign(hash, Buffer.from(input), p1363 ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
}

function rules(keys: PublicKeyEntry[], overrides: Partial<AssertionRules> = {}): AssertionRules {
  return {
    name: 'assertion',
    keys,
    party: PARTY,
    audiences: [AUDIENCE],
    requiredClaims: [],
    now: NOW,
    reject: (detail) => new InvalidGrant(detail),
    ...overrides,
  };
}

async function refusal(assertion: string, assertionRules: AssertionRules): Promise<string> {
  try {
    await verifyAssertion(assertion, assertionRules);
  } catch (error) {
    if (error instanceof OAuthError) return `${error.error}: ${error.detail ?? error.description}`;
    throw error;
  }
  throw new Error('the assertion was accepted');
}

describe('assertion signatures', () => {
  it.each([
    ['RS256', KEYS.rsa, 'sha256', false],
    ['RS384', KEYS.rsa, 'sha384', false],
    ['RS512', KEYS.rsa, 'sha512', false],
    ['ES256', KEYS.p256, 'sha256', true],
    ['ES384', KEYS.p384, 'sha384', true],
    ['ES512', KEYS.p521, 'sha512', true],
    ['EdDSA', KEYS.ed25519, null, false],
  ] as const)('accepts %s with its key type', async (alg, key, hash, p1363) => {
    const assertion = handSigned({ alg, kid: 'k1' }, claims(), key.privateKey, hash, p1363);
    await expect(verifyAssertion(assertion, rules([entry(key)]))).resolves.toMatchObject({ iss: PARTY, jti: 'j1' });
  });

  it.each(['PS256', 'PS384', 'PS512'] as const)('accepts %s (RSA-PSS) from jose', async (alg) => {
    const assertion = await new SignJWT(claims()).setProtectedHeader({ alg, kid: 'k1' }).sign(KEYS.rsa.privateKey);
    await expect(verifyAssertion(assertion, rules([entry(KEYS.rsa)]))).resolves.toMatchObject({ sub: PARTY });
  });

  it('accepts a jose-signed ES256 assertion without a kid, trying every valid key', async () => {
    const assertion = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(KEYS.p256.privateKey);
    const keys = [entry(KEYS.rsaOther, 'a'), entry(KEYS.p384, 'b'), entry(KEYS.p256, 'c')];
    await expect(verifyAssertion(assertion, rules(keys))).resolves.toMatchObject({ iss: PARTY });
  });

  const rsa = (header: Record<string, unknown>, payload = claims(), key = KEYS.rsa.privateKey) => handSigned(header, payload, key, 'sha256');
  it.each<[string, () => string, Pair]>([
    ['alg none', () => `${b64json({ alg: 'none', kid: 'k1' })}.${b64json(claims())}.`, KEYS.rsa],
    ['HS256 keyed with the registered public key (algorithm confusion)', () => {
      const input = `${b64json({ alg: 'HS256', kid: 'k1' })}.${b64json(claims())}`;
      return `${input}.${createHmac('sha256', KEYS.rsa.pem).update(input).digest('base64url')}`;
    }, KEYS.rsa],
    ['ES256 against a registered RSA key', () => handSigned({ alg: 'ES256', kid: 'k1' }, claims(), KEYS.p256.privateKey, 'sha256', true), KEYS.rsa],
    ['RS256 against a registered EC key', () => rsa({ alg: 'RS256', kid: 'k1' }), KEYS.p256],
    ['an unknown algorithm', () => handSigned({ alg: 'RS1', kid: 'k1' }, claims(), KEYS.rsa.privateKey, 'sha1'), KEYS.rsa],
    ['an algorithm that is not a string', () => rsa({ alg: ['RS256'], kid: 'k1' }), KEYS.rsa],
    ['a critical header extension', () => rsa({ alg: 'RS256', kid: 'k1', crit: ['urn:example:x'], 'urn:example:x': 1 }), KEYS.rsa],
    ['an unencoded payload (b64 false)', () => rsa({ alg: 'RS256', kid: 'k1', crit: ['b64'], b64: false }), KEYS.rsa],
    ['a changed payload', () => {
      const [header, , signature] = rsa({ alg: 'RS256', kid: 'k1' }).split('.');
      return `${header}.${b64json(claims({ jti: 'j2' }))}.${signature}`;
    }, KEYS.rsa],
    ['a signature of another key', () => rsa({ alg: 'RS256', kid: 'k1' }, claims(), KEYS.rsaOther.privateKey), KEYS.rsa],
    ['an empty signature', () => `${b64json({ alg: 'RS256', kid: 'k1' })}.${b64json(claims())}.`, KEYS.rsa],
    ['a DER-encoded ECDSA signature', () => handSigned({ alg: 'ES256', kid: 'k1' }, claims(), KEYS.p256.privateKey, 'sha256', false), KEYS.p256],
  ])('refuses %s', async (_name, build, key) => {
    expect(await refusal(build(), rules([entry(key)]))).toMatch(/^invalid_grant: /);
  });

  it('refuses an ES256 signature made with a P-384 key registered as the signer', async () => {
    const assertion = handSigned({ alg: 'ES384', kid: 'k1' }, claims(), KEYS.p384.privateKey, 'sha384', true);
    const relabelled = `${b64json({ alg: 'ES256', kid: 'k1' })}.${assertion.split('.')[1]}.${assertion.split('.')[2]}`;
    expect(await refusal(relabelled, rules([entry(KEYS.p384)]))).toMatch(/^invalid_grant: /);
  });

  it('refuses an RSA key shorter than 2048 bits', async () => {
    const assertion = handSigned({ alg: 'RS256', kid: 'k1' }, claims(), KEYS.rsaShort.privateKey, 'sha256');
    expect(await refusal(assertion, rules([entry(KEYS.rsaShort)]))).toMatch(/^invalid_grant: /);
  });

  it('refuses a kid that names no registered key, and an expired key', async () => {
    const assertion = handSigned({ alg: 'RS256', kid: 'other' }, claims(), KEYS.rsa.privateKey, 'sha256');
    expect(await refusal(assertion, rules([entry(KEYS.rsa)]))).toBe('invalid_grant: no registered key matches the assertion');
    const expired = handSigned({ alg: 'RS256', kid: 'k1' }, claims(), KEYS.rsa.privateKey, 'sha256');
    expect(await refusal(expired, rules([entry(KEYS.rsa, 'k1', new Date(NOW.getTime() - 1000))]))).toBe('invalid_grant: no registered key matches the assertion');
  });

  it('refuses a malformed assertion as invalid_request', async () => {
    for (const assertion of ['abc', 'a.b', '!!!.e30.', `${b64json([1])}.${b64json(claims())}.x`]) {
      await expect(verifyAssertion(assertion, rules([entry(KEYS.rsa)]))).rejects.toMatchObject({ error: 'invalid_request' });
    }
  });

  it('refuses a payload that is not a JSON object', async () => {
    const input = `${b64json({ alg: 'RS256', kid: 'k1' })}.${Buffer.from('[1,2]').toString('base64url')}`;
    const assertion = `${input}.${sign('sha256', Buffer.from(input), KEYS.rsa.privateKey).toString('base64url')}`;
    expect(await refusal(assertion, rules([entry(KEYS.rsa)]))).toMatch(/^invalid_grant: /);
  });
});

describe('assertion claims', () => {
  const signed = (overrides: Record<string, unknown>) => handSigned({ alg: 'ES256', kid: 'k1' }, claims(overrides), KEYS.p256.privateKey, 'sha256', true);
  const keys = [entry(KEYS.p256)];

  it.each([
    ['another issuer', { iss: 'someone' }],
    ['another subject', { sub: 'someone' }],
    ['another audience', { aud: 'https://elsewhere.test' }],
    ['an expired assertion beyond the 5 s tolerance', { exp: SECONDS - 6 }],
    ['a not-before beyond the 5 s tolerance', { nbf: SECONDS + 6 }],
    ['an exp that is not a number', { exp: String(SECONDS + 300) }],
    ['an iat that is not a number', { iat: 'yesterday' }],
  ])('refuses %s', async (_name, overrides) => {
    expect(await refusal(signed(overrides), rules(keys))).toMatch(/^invalid_grant: assertion rejected: /);
  });

  it('accepts an audience list holding ours, an exp and nbf within the tolerance', async () => {
    await expect(verifyAssertion(signed({ aud: ['x', AUDIENCE], exp: SECONDS - 4, nbf: SECONDS + 4 }), rules(keys))).resolves.toMatchObject({ jti: 'j1' });
  });

  it('any subject when the caller checks it, required claims, and the maximum age', async () => {
    await expect(verifyAssertion(signed({ sub: 'a-user' }), rules(keys, { anySubject: true }))).resolves.toMatchObject({ sub: 'a-user' });
    expect(await refusal(signed({ jti: undefined }), rules(keys, { requiredClaims: ['jti'] }))).toMatch(/jti/);
    expect(await refusal(signed({ iat: SECONDS - 100 }), rules(keys, { maxAgeSeconds: 60 }))).toMatch(/^invalid_grant: assertion rejected: /);
    await expect(verifyAssertion(signed({ iat: SECONDS - 30 }), rules(keys, { maxAgeSeconds: 60 }))).resolves.toMatchObject({ iat: SECONDS - 30 });
  });
});
