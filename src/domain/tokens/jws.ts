/**
 * JWS signature algorithms (RFC 7518 §3) on node:crypto: what each one needs (the digest, ECDSA's
 * R‖S encoding and curve, RSA-PSS's padding) and which keys fit it. Our own JWTs (own-jwt.ts) and the
 * assertions clients sign (oauth/assertions.ts) are signed and verified through this one table.
 */
import { constants, sign, verify, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import { derToJose, joseToDer } from 'ecdsa-sig-formatter';

export interface JwsAlgorithm {
  hash: string | null;
  keyType: 'rsa' | 'ec' | 'ed25519';
  /** ECDSA's curve (OpenSSL's name); the signature is R‖S (RFC 7518 §3.4). */
  curve?: string;
  /** RSASSA-PSS with a salt as long as the digest (RFC 7518 §3.5). */
  pss?: boolean;
}

export const JWS_ALGORITHMS = {
  RS256: { hash: 'sha256', keyType: 'rsa' },
  RS384: { hash: 'sha384', keyType: 'rsa' },
  RS512: { hash: 'sha512', keyType: 'rsa' },
  PS256: { hash: 'sha256', keyType: 'rsa', pss: true },
  PS384: { hash: 'sha384', keyType: 'rsa', pss: true },
  PS512: { hash: 'sha512', keyType: 'rsa', pss: true },
  ES256: { hash: 'sha256', keyType: 'ec', curve: 'prime256v1' },
  ES384: { hash: 'sha384', keyType: 'ec', curve: 'secp384r1' },
  ES512: { hash: 'sha512', keyType: 'ec', curve: 'secp521r1' },
  EdDSA: { hash: null, keyType: 'ed25519' },
} as const satisfies Record<string, JwsAlgorithm>;

export type JwsAlgorithmName = keyof typeof JWS_ALGORITHMS;

/** The algorithm a JOSE header's `alg` names, when it is one of the table (never an inherited property). */
export function jwsAlgorithm(alg: unknown): JwsAlgorithm | undefined {
  return typeof alg === 'string' && Object.hasOwn(JWS_ALGORITHMS, alg) ? JWS_ALGORITHMS[alg as JwsAlgorithmName] : undefined;
}

/** RSA keys shorter than this do not fit any algorithm, as jose refuses them. */
const MIN_RSA_BITS = 2048;

interface KeyShape {
  type: string | undefined;
  bits: number;
  curve: string | undefined;
}

/** A KeyObject's type and details are read from OpenSSL on every access (3.5% of the JWT profile grant): once per key here. */
const shapes = new WeakMap<KeyObject, KeyShape>();

function shapeOf(key: KeyObject): KeyShape {
  let shape = shapes.get(key);
  if (!shape) {
    const details = key.asymmetricKeyDetails ?? {};
    shape = { type: key.asymmetricKeyType, bits: details.modulusLength ?? 0, curve: details.namedCurve };
    shapes.set(key, shape);
  }
  return shape;
}

/** Whether `key` may sign with `algorithm`: its type, its curve, its size. */
export function keyFits(key: KeyObject, algorithm: JwsAlgorithm): boolean {
  const shape = shapeOf(key);
  if (shape.type !== algorithm.keyType) return false;
  if (algorithm.keyType === 'rsa') return shape.bits >= MIN_RSA_BITS;
  return algorithm.curve === undefined || shape.curve === algorithm.curve;
}

/** Each algorithm's name, for ecdsa-sig-formatter (which sizes R and S by it). */
const NAMES = new Map<JwsAlgorithm, string>(Object.entries(JWS_ALGORITHMS).map(([name, algorithm]) => [algorithm, name]));

/**
 * The key as node:crypto takes it. ECDSA keys go in bare and their signatures are converted between
 * DER and JOSE's R‖S with ecdsa-sig-formatter, instead of asking node:crypto for R‖S with
 * `{ key, dsaEncoding: 'ieee-p1363' }`: node:crypto tells a KeyObject from such an options object by
 * trying to read two private fields of it, and each failed try throws and catches an error with its
 * stack trace, 23 µs per ES256 verification (4% of a JWT profile grant, where a client's ES256
 * assertion is checked). RSA-PSS still needs its options object: nothing else carries the padding.
 */
function keyInput(algorithm: JwsAlgorithm, key: KeyObject): KeyObject | SignKeyObjectInput {
  if (algorithm.pss) return { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
  return key;
}

export function signJws(algorithm: JwsAlgorithm, key: KeyObject, data: Buffer): Buffer {
  const signature = sign(algorithm.hash, data, keyInput(algorithm, key));
  return algorithm.curve ? Buffer.from(derToJose(signature, NAMES.get(algorithm)!), 'base64url') : signature;
}

export function verifyJws(algorithm: JwsAlgorithm, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  if (!algorithm.curve) return verify(algorithm.hash, data, keyInput(algorithm, key), signature);
  let der: Buffer;
  try {
    der = joseToDer(signature, NAMES.get(algorithm)!);
  } catch {
    return false; // not R‖S of this curve's size
  }
  return verify(algorithm.hash, data, key, der);
}
