/**
 * A software WebAuthn authenticator for the passkey suites, with node:crypto: ES256 key pairs,
 * attestation "none", authenticator data with the flags UP and UV (and AT when it creates a
 * credential), COSE public keys in CBOR written by hand (the few major types they need). It answers
 * the options Gatehouse hands out as a browser would (`toJSON()` of a PublicKeyCredential), and can
 * be told to misbehave: another origin or relying party id, no user verification, a chosen counter,
 * a tampered signature.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

// --- CBOR (RFC 8949): just what attestation objects and COSE keys use ---

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// --- the authenticator ---

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest();

export interface StoredCredential {
  id: Buffer;
  privateKey: KeyObject;
  /** The COSE public key, as it is registered. */
  cose: Buffer;
  rpId: string;
  userHandle: string;
  signCount: number;
}

export interface Tweaks {
  /** Origin in clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** The relying party id whose hash goes into authenticator data (default: the options' one). */
  rpId?: string;
  /** User verification performed (default true). */
  userVerified?: boolean;
  /** Counter to report (default: one more than last time). */
  counter?: number;
  /** Flip a bit of the signature. */
  tamper?: boolean;
  /** Answer with this credential (default: the first that fits the options). */
  credentialId?: string;
  /** The user handle to report (default: the credential's). */
  userHandle?: string | null;
  /** Challenge to sign instead of the options' one. */
  challenge?: string;
  /** create(): attest this credential again instead of making a new one. */
  existing?: StoredCredential;
}

/** The subset of WebAuthn option JSON the authenticator reads. */
interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: Array<{ alg: number }>;
  excludeCredentials?: Array<{ id: string }>;
  authenticatorSelection?: { userVerification?: string; residentKey?: string };
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
  userVerification?: string;
}

export class SoftAuthenticator {
  readonly credentials: StoredCredential[] = [];

  readonly origin: string;

  /** `origin`: the page the browser runs the ceremony on. */
  constructor(origin: string) {
    this.origin = origin;
  }

  /** navigator.credentials.create(): a new ES256 credential for the options' relying party and user. */
  create(options: CreationOptions, tweaks: Tweaks = {}): Record<string, unknown> {
    if (!options.pubKeyCredParams.some((p) => p.alg === -7)) throw new Error('ES256 not offered');
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => excluded.has(b64url(c.id)))) throw new Error('InvalidStateError: credential excluded');
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const credential = tweaks.existing ?? this.newCredential(rpId, options.user.id);
    const counter = tweaks.counter ?? 0;
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([credential.id.length >> 8, credential.id.length & 0xff]), credential.id, credential.cose]);
    const authData = this.authData(tweaks.rpId ?? rpId, FLAG_UP | (tweaks.userVerified === false ? 0 : FLAG_UV) | FLAG_AT, counter, attested);
    const clientData = this.clientData('webauthn.create', tweaks.challenge ?? options.challenge, tweaks.origin);
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    credential.signCount = counter;
    if (!this.credentials.includes(credential)) this.credentials.push(credential);
    const id = b64url(credential.id);
    return {
      id,
      rawId: id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: { credProps: { rk: true } },
      response: { clientDataJSON: b64url(clientData), attestationObject: b64url(attestationObject), transports: ['internal', 'hybrid'] },
    };
  }

  /** navigator.credentials.get(): an assertion with a credential the options allow (any, when none are listed). */
  get(options: RequestOptions, tweaks: Tweaks = {}): Record<string, unknown> {
    const allowed = new Set((options.allowCredentials ?? []).map((c) => c.id));
    const credential =
      tweaks.credentialId !== undefined
        ? this.credentials.find((c) => b64url(c.id) === tweaks.credentialId)
        : this.credentials.find((c) => c.rpId === (options.rpId ?? c.rpId) && (allowed.size === 0 || allowed.has(b64url(c.id))));
    if (credential === undefined) throw new Error('NotAllowedError: no credential');
    const counter = tweaks.counter ?? credential.signCount + 1;
    credential.signCount = counter;
    const authData = this.authData(tweaks.rpId ?? credential.rpId, FLAG_UP | (tweaks.userVerified === false ? 0 : FLAG_UV), counter);
    const clientData = this.clientData('webauthn.get', tweaks.challenge ?? options.challenge, tweaks.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.privateKey);
    if (tweaks.tamper) signature.writeUInt8(signature.readUInt8(signature.length - 1) ^ 0x01, signature.length - 1);
    const id = b64url(credential.id);
    const userHandle = tweaks.userHandle === undefined ? credential.userHandle : tweaks.userHandle;
    return {
      id,
      rawId: id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(userHandle === null ? {} : { userHandle }),
      },
    };
  }

  private newCredential(rpId: string, userHandle: string): StoredCredential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    return { id: randomBytes(32), privateKey, cose, rpId, userHandle, signCount: 0 };
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }
}
