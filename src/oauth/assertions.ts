/**
 * JWT assertions signed with a registered key (RFC 7523 §3), as both client authentication
 * (private_key_jwt) and the JWT profile grant use them: who claims to have signed, which registered
 * keys may have, the signature, and the claims; for those two, also the lifetime and single-use rules
 * of docs/security.md 10.9.
 *
 * The signature is checked with node:crypto, as our own JWTs are (domain/jws.ts): jose verifies
 * through WebCrypto, whose job cost more than the ES256 check itself (profile of the JWT profile
 * grant under load: 16% of the server's core in WebCrypto's verify path; node:crypto's one-shot
 * verify takes 76 µs where jose's took 127 µs). The claims are still jose's own checks (see
 * `checkedClaims`). What this file decides itself is small and strict: the algorithm must be one of
 * ASSERTION_ALGORITHMS and fit the key's type (and curve, and RSA size of at least 2048 bits, as jose
 * requires), and a protected header with `crit` is refused, since we implement no extension
 * (RFC 7515 §4.1.11; jose would accept only `b64`, which a JWT may not use anyway).
 */
import { decodeProtectedHeader, UnsecuredJWT, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { sha256 } from '../domain/kernel/crypto.ts';
import type { PublicKeyEntry } from '../domain/instance/directory.ts';
import { jwsAlgorithm, JWS_ALGORITHMS, keyFits, verifyJws } from '../domain/tokens/jws.ts';
import { publicKeyOf } from '../domain/credentials/public-keys.ts';
import { TurnBatch } from '../domain/kernel/turn-batch.ts';
import type { DB } from '../store/database.ts';
import { spendAssertion } from '../domain/tokens/assertion-marks.ts';
import { InvalidRequest, type OAuthError } from './errors.ts';

/** Signature algorithms accepted on assertions (also published in discovery): every one of the table. */
export const ASSERTION_ALGORITHMS: string[] = Object.keys(JWS_ALGORITHMS);

/** An unsecured JWT header: the payload of a verified assertion goes through jose's claims checks under it. */
const CLAIMS_ONLY_HEADER = Buffer.from('{"alg":"none"}').toString('base64url');
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The unverified iss of an assertion (the parameter `name`): who claims to be calling. */
export function unverifiedIssuer(assertion: string, name: string): string {
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidRequest(`${name} is not a JWT`);
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { iss?: unknown };
    if (typeof payload.iss !== 'string' || payload.iss === '') throw new Error('no iss');
    return payload.iss;
  } catch {
    throw new InvalidRequest(`${name} is not a JWT`);
  }
}

/** Keys that may have signed: the one named by kid, or every valid one without a kid. */
export function candidateKeys(keys: readonly PublicKeyEntry[], kid: string | undefined, now: Date): PublicKeyEntry[] {
  const valid = keys.filter((k) => !k.expiresAt || k.expiresAt > now);
  return kid === undefined ? valid : valid.filter((k) => k.id === kid);
}

/** Clock skew allowed on exp and nbf. */
const CLOCK_TOLERANCE_SECONDS = 5;

export interface AssertionRules {
  /** The request parameter, for messages ("client_assertion", "assertion"). */
  name: string;
  keys: readonly PublicKeyEntry[];
  /** iss must name this party, and so must sub unless `anySubject` (the caller checks sub itself). */
  party: string;
  anySubject?: boolean;
  audiences: string[];
  requiredClaims: string[];
  /** The assertion must have been issued (iat) at most this long ago. */
  maxAgeSeconds?: number;
  now: Date;
  /** The error for an assertion that does not verify (invalid_client or invalid_grant). */
  reject: (detail: string) => OAuthError;
}

/** The signature checks asked for in one turn of the event loop, made in a row (domain/turn-batch.ts). */
const verifications = new TurnBatch();

/** The verified payload; throws `rules.reject(...)` when no candidate key verifies it. */
export async function verifyAssertion(assertion: string, rules: AssertionRules): Promise<JWTPayload> {
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw new InvalidRequest(`${rules.name} is not a JWT`);
  }
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidRequest(`${rules.name} is not a JWT`);
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const keys = candidateKeys(rules.keys, header.kid, rules.now);
  if (keys.length === 0) throw rules.reject('no registered key matches the assertion');
  const algorithm = jwsAlgorithm(header.alg);
  if (!algorithm) throw rules.reject(`${rules.name} rejected: alg ${JSON.stringify(header.alg)} is not accepted`);
  if (header.crit !== undefined) throw rules.reject(`${rules.name} rejected: no crit header extension is supported`);
  if (!BASE64URL.test(encodedSignature)) throw rules.reject(`${rules.name} rejected: the signature is not base64url`);
  const data = Buffer.from(`${encodedHeader}.${encodedPayload}`, 'ascii');
  const signature = Buffer.from(encodedSignature, 'base64url');
  const signer = await verifications.run(() =>
    keys.map((entry) => publicKeyOf(entry.pem)).find((key) => keyFits(key, algorithm) && verifyJws(algorithm, key, data, signature)),
  );
  if (!signer) throw rules.reject(`${rules.name} signature does not verify`);
  return checkedClaims(encodedPayload, rules);
}

/** The claims of a verified assertion, checked by jose (RFC 7519 §7.2: iss, sub, aud, exp, nbf, iat, required claims). */
function checkedClaims(encodedPayload: string, rules: AssertionRules): JWTPayload {
  try {
    return UnsecuredJWT.decode(`${CLAIMS_ONLY_HEADER}.${encodedPayload}.`, {
      issuer: rules.party,
      ...(rules.anySubject ? {} : { subject: rules.party }),
      ...(rules.maxAgeSeconds !== undefined ? { maxTokenAge: rules.maxAgeSeconds } : {}),
      audience: rules.audiences,
      currentDate: rules.now,
      requiredClaims: rules.requiredClaims,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }).payload;
  } catch (error) {
    throw rules.reject(`${rules.name} rejected: ${error instanceof Error ? error.message : 'invalid'}`);
  }
}

/** docs/security.md 10.9: exp at most an hour ahead; iat at most an hour old and at most a minute ahead. */
const MAX_LIFETIME_SECONDS = 3600;
const MAX_AGE_SECONDS = 3600;
const MAX_IAT_AHEAD_SECONDS = 60;

/**
 * An assertion that authenticates its signer (client assertions, the JWT profile grant), under
 * docs/security.md 10.9: signature and claims as `verifyAssertion`, exp and iat required and near,
 * and the assertion accepted once within its lifetime, so a captured one cannot be replayed.
 */
export async function verifyOneTimeAssertion(db: DB, assertion: string, rules: AssertionRules): Promise<JWTPayload> {
  const requiredClaims = [...new Set([...rules.requiredClaims, 'exp', 'iat'])];
  const payload = await verifyAssertion(assertion, { ...rules, requiredClaims });
  // jose has checked that exp and iat are present and numeric, and that exp has not passed
  const exp = payload.exp!;
  const iat = payload.iat!;
  const now = rules.now.getTime() / 1000;
  if (exp - now > MAX_LIFETIME_SECONDS) throw rules.reject(`${rules.name} expires more than an hour ahead`);
  if (now - iat > MAX_AGE_SECONDS) throw rules.reject(`${rules.name} was issued more than an hour ago`);
  if (iat - now > MAX_IAT_AHEAD_SECONDS) throw rules.reject(`${rules.name} is issued in the future`);
  await acceptOnce(db, assertion, payload, rules);
  return payload;
}

/**
 * RFC 7523 §3 item 7, docs/security.md 10.9: one use per assertion while it is valid, known by its signer and
 * jti, or by the SHA-256 of its signing input (header.payload) when it has no jti: the signature part
 * can be written several ways that all verify (base64url's unused trailing bits; ECDSA's (r, n−s)),
 * but the signing input cannot change without breaking the signature. The id is hashed so that any jti fits the index; the
 * row outlives the assertion's last accepted second (exp plus the clock tolerance).
 */
async function acceptOnce(db: DB, assertion: string, payload: JWTPayload, rules: AssertionRules): Promise<void> {
  const mark = typeof payload.jti === 'string' && payload.jti !== '' ? `jti ${sha256(payload.jti)}` : `jwt ${sha256(assertion.slice(0, assertion.lastIndexOf('.')))}`;
  const first = await spendAssertion(db, `${rules.party}\n${mark}`, new Date((payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000));
  if (!first) throw rules.reject(`${rules.name} was already used`);
}
