import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { JWS_ALGORITHMS, signJws, verifyJws } from './jws.ts';

const data = Buffer.from('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0');

// ECDSA signatures travel as R‖S (RFC 7518 §3.4); node:crypto's own `ieee-p1363` encoding is the reference.
it.each([
  ['ES256', 'P-256', 64],
  ['ES384', 'P-384', 96],
  ['ES512', 'P-521', 132],
] as const)('%s signs and verifies R‖S exactly as node:crypto does', (name, namedCurve, size) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
  const algorithm = JWS_ALGORITHMS[name];
  const ours = signJws(algorithm, privateKey, data);
  expect(ours).toHaveLength(size);
  expect(verify(algorithm.hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, ours)).toBe(true);
  const theirs = sign(algorithm.hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  expect(verifyJws(algorithm, publicKey, data, theirs)).toBe(true);
  // a wrong message, a wrong key, and signatures of the wrong size or encoding are refused, never thrown
  expect(verifyJws(algorithm, publicKey, Buffer.from('other'), ours)).toBe(false);
  expect(verifyJws(algorithm, generateKeyPairSync('ec', { namedCurve }).publicKey, data, ours)).toBe(false);
  expect(verifyJws(algorithm, publicKey, data, ours.subarray(1))).toBe(false);
  expect(verifyJws(algorithm, publicKey, data, Buffer.concat([ours, Buffer.alloc(1)]))).toBe(false);
  expect(verifyJws(algorithm, publicKey, data, Buffer.alloc(0))).toBe(false);
  expect(verifyJws(algorithm, publicKey, data, sign(algorithm.hash, data, privateKey))).toBe(false); // DER is not R‖S
  expect(verifyJws(algorithm, publicKey, data, Buffer.alloc(size))).toBe(false);
});

it('RS256, PS256 and EdDSA keep node:crypto’s own encodings', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  for (const name of ['RS256', 'PS256'] as const) {
    const signature = signJws(JWS_ALGORITHMS[name], rsa.privateKey, data);
    expect(signature).toHaveLength(256);
    expect(verifyJws(JWS_ALGORITHMS[name], rsa.publicKey, data, signature)).toBe(true);
    expect(verifyJws(JWS_ALGORITHMS[name], rsa.publicKey, Buffer.from('other'), signature)).toBe(false);
  }
  const ed = generateKeyPairSync('ed25519');
  const signature = signJws(JWS_ALGORITHMS.EdDSA, ed.privateKey, data);
  expect(verify(null, data, ed.publicKey, signature)).toBe(true);
  expect(verifyJws(JWS_ALGORITHMS.EdDSA, ed.publicKey, data, signature)).toBe(true);
});
