/**
 * Signing keys (docs/decisions.md#signing-keys). A key is published in the key set from its
 * creation, signs from its `sign_from` time until a newer key's `sign_from` supersedes it, and
 * stays published until every token it signed has expired. Private keys are stored encrypted under
 * the master key.
 *
 *   created ──publish──► sign_from ──sign──► superseded ──published until tokens expire──► removed
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { SigningAlg } from '../../config/index.ts';
import type { DB } from '../../store/database.ts';
import type { SigningKeyRow } from '../../store/schema.ts';
import { deleteSigningKeys, insertSigningKey, listSigningKeys, lockKeyRotation } from '../../store/signing-keys.ts';
import type { MasterKey } from '../kernel/crypto.ts';
import { appendEvent } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';

export interface KeysConfig {
  signingAlg: SigningAlg;
  /** How long a key signs before an automatic rotation replaces it. */
  keyRotationSeconds: number;
  /** The longest lifetime of anything a key signs: it stays published this long after it stops signing. */
  maxTokenSeconds: number;
}

/** Lead time between publishing an automatically rotated key and signing with it: the key set's max-age plus slack. */
export const AUTO_ROTATION_LEAD_SECONDS = 360;
/** Lead time of an on-demand rotation: long enough for every node to poll the change (docs/decisions.md#signing-keys: 5 s). */
export const MANUAL_ROTATION_LEAD_SECONDS = 5;

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  publicJwk: JWK;
  signFrom: Date;
  /** The time a newer key took over, if any. */
  supersededAt: Date | undefined;
}

export interface ActiveSigner {
  kid: string;
  alg: SigningAlg;
  /** The private key, for node:crypto signing (domain/own-jwt.ts). */
  key: KeyObject;
}

function generate(alg: SigningAlg): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (alg) {
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'EdDSA':
      return generateKeyPairSync('ed25519');
  }
}

export function createSigningKey(db: DB, masterKey: MasterKey, alg: SigningAlg, signFrom: Date): Promise<string> {
  return storeSigningKey(db, masterKey, alg, generate(alg), signFrom);
}

/**
 * Stores a key pair made elsewhere as a signing key, by default one that signs from now
 * (createSigningKey makes a new pair). The test suites hand their servers pre-made RSA pairs: making
 * one costs 80–150 ms of CPU.
 */
export async function storeSigningKey(
  db: DB,
  masterKey: MasterKey,
  alg: SigningAlg,
  { privateKey, publicKey }: { privateKey: KeyObject; publicKey: KeyObject },
  signFrom = new Date(),
): Promise<string> {
  const kid = newId();
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' };
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  // Callers hold a transaction: the key and its event land together.
  await insertSigningKey(db, { id: kid, alg, public_jwk: JSON.stringify(jwk), private_key: masterKey.encrypt(pem), sign_from: signFrom });
  await appendEvent(db, {
    instanceId: 'system',
    aggregateId: kid,
    resourceOwner: 'system',
    type: 'signing_key.added',
    payload: { alg, signFrom: signFrom.toISOString() },
  });
  return kid;
}

/** Orders keys by sign_from and fills in when each was superseded. */
function timeline(rows: SigningKeyRow[]): Array<SigningKey & { row: SigningKeyRow }> {
  const sorted = [...rows].sort((a, b) => a.sign_from.getTime() - b.sign_from.getTime());
  return sorted.map((row, i) => ({
    kid: row.id,
    alg: row.alg as SigningAlg,
    publicJwk: row.public_jwk as JWK,
    signFrom: row.sign_from,
    supersededAt: sorted[i + 1]?.sign_from,
    row,
  }));
}

export class KeyStore {
  readonly #db: DB;
  readonly #masterKey: MasterKey;
  readonly #config: KeysConfig;
  #keys: Array<SigningKey & { row: SigningKeyRow }> = [];
  #signers = new Map<string, KeyObject>();
  #verifiers = new Map<string, KeyObject>();
  #jwksBody = '{"keys":[]}';

  constructor(db: DB, masterKey: MasterKey, config: KeysConfig) {
    this.#db = db;
    this.#masterKey = masterKey;
    this.#config = config;
  }

  /** Loads the keys; creates the first one, or the next one when rotation is due. */
  async refresh(now = new Date()): Promise<void> {
    await this.#load();
    if (this.#rotationDue(now)) {
      await this.#db.transaction().execute(async (trx) => {
        await lockKeyRotation(trx);
        const rows = await listSigningKeys(trx);
        this.#keys = timeline(rows);
        if (!this.#rotationDue(now)) return;
        const first = this.#keys.length === 0;
        // The very first key signs at once: nobody can have cached a key set without it.
        const signFrom = first ? now : new Date(now.getTime() + AUTO_ROTATION_LEAD_SECONDS * 1000);
        await createSigningKey(trx, this.#masterKey, this.#config.signingAlg, signFrom);
      });
      await this.#load();
    }
  }

  async #load(): Promise<void> {
    const rows = await listSigningKeys(this.#db);
    this.#keys = timeline(rows);
    this.#jwksBody = JSON.stringify({ keys: this.published().map((k) => k.publicJwk) });
  }

  /** Rotation is due when no key of the configured algorithm will sign after the newest one's term. */
  #rotationDue(now: Date): boolean {
    const newest = this.#keys.at(-1);
    if (!newest) return true;
    if (newest.alg !== this.#config.signingAlg) return true;
    if (newest.signFrom > now) return false; // a successor is already published and waiting
    return now.getTime() - newest.signFrom.getTime() >= this.#config.keyRotationSeconds * 1000 - AUTO_ROTATION_LEAD_SECONDS * 1000;
  }

  /** Keys in the key set: not yet superseded, or superseded less than the longest token lifetime ago. */
  published(now = new Date()): SigningKey[] {
    const keep = this.#config.maxTokenSeconds * 1000;
    return this.#keys.filter((k) => !k.supersededAt || k.supersededAt.getTime() + keep > now.getTime());
  }

  /** The serialized key set, rebuilt on every load. */
  jwksJson(): string {
    return this.#jwksBody;
  }

  /** The key that signs now: the newest whose sign_from has passed. */
  async signer(now = new Date()): Promise<ActiveSigner> {
    let current: (SigningKey & { row: SigningKeyRow }) | undefined;
    for (const key of this.#keys) if (key.signFrom <= now) current = key;
    if (!current) throw new Error('no signing key is active');
    let key = this.#signers.get(current.kid);
    if (!key) {
      const pem = this.#masterKey.decrypt(current.row.private_key);
      key = createPrivateKey(pem);
      this.#signers.set(current.kid, key);
    }
    return { kid: current.kid, alg: current.alg, key };
  }

  /** A published public key by kid, for verifying our own tokens; undefined when unknown or withdrawn. */
  verificationKey(kid: string, now = new Date()): { alg: SigningAlg; key: KeyObject } | undefined {
    const found = this.published(now).find((k) => k.kid === kid);
    if (!found) return undefined;
    let key = this.#verifiers.get(kid);
    if (!key) {
      key = createPublicKey({ key: found.publicJwk as JsonWebKey, format: 'jwk' });
      this.#verifiers.set(kid, key);
    }
    return { alg: found.alg, key };
  }

  /** Deletes keys that are no longer published. */
  async prune(now = new Date()): Promise<void> {
    const published = new Set(this.published(now).map((k) => k.kid));
    const stale = this.#keys.filter((k) => !published.has(k.kid)).map((k) => k.kid);
    await deleteSigningKeys(this.#db, stale);
  }
}

/** On-demand rotation (`gatehouse keys rotate`): publish now, sign once every node has seen it. */
export async function rotateNow(db: DB, masterKey: MasterKey, alg: SigningAlg, now = new Date()): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await lockKeyRotation(trx);
    return createSigningKey(trx, masterKey, alg, new Date(now.getTime() + MANUAL_ROTATION_LEAD_SECONDS * 1000));
  });
}
