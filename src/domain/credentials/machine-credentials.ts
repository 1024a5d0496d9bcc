/**
 * A machine user's credentials through the management API and the bootstrap file
 * (docs/decisions.md#machine-credentials): public keys for the JWT profile grant (supplied, or a
 * generated RSA pair whose private half leaves once in ZITADEL's key file) and one client secret
 * for client_credentials (client id: the user name), stored as an argon2id hash. Each change
 * appends its event; the caller commits, then clears the directory (it caches machine users with
 * their keys and secret hash), so the change holds at once.
 */
import { createPublicKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { clearMachineSecretHash, deleteMachineKey, setMachineSecretHash } from '../../store/credentials.ts';
import type { DB } from '../../store/database.ts';
import { findMachineKey, insertMachineKey, updateMachineKey } from '../../store/users.ts';
import { sameValue } from '../kernel/changed-fields.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { randomToken } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { normalizedPem } from './public-keys.ts';

/** The user a change is for, and who makes it. */
export interface MachineChange {
  userId: string;
  instanceId: string;
  orgId: string;
  creator: string;
}

/** The largest PEM accepted (an RSA 16384-bit public key is about 2.8 KB). */
export const MAX_PUBLIC_KEY_BYTES = 8192;

/** What ZITADEL's key files say for a key without expiry. */
const NO_EXPIRY = '9999-12-31T23:59:59Z';

/** Why a supplied public key is refused, or its PEM (SPKI) as stored. The rules of the bootstrap file's keys. */
export function parsePublicKey(bytes: Uint8Array): { pem: string } | { problem: string } {
  if (bytes.length > MAX_PUBLIC_KEY_BYTES) return { problem: `must be at most ${MAX_PUBLIC_KEY_BYTES} bytes` };
  const text = Buffer.from(bytes).toString('utf8');
  if (text.includes('PRIVATE KEY')) return { problem: 'is a private key; give the public key (-----BEGIN PUBLIC KEY-----)' };
  if (!text.includes('-----BEGIN ')) return { problem: 'is not a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)' };
  try {
    const key = createPublicKey(text);
    const type = key.asymmetricKeyType;
    if (type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return { problem: 'is an RSA key shorter than 2048 bits' };
    if (type !== 'rsa' && type !== 'ec' && type !== 'ed25519') return { problem: `is a ${type ?? 'unknown'} key; use RSA, EC or Ed25519` };
    return { pem: key.export({ type: 'spki', format: 'pem' }).toString() };
  } catch {
    return { problem: 'is not a valid PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)' };
  }
}

const generateRsa = promisify(generateKeyPair);

/** A new RSA key pair: the public key as SPKI PEM, the private key as PKCS#1 PEM (as ZITADEL's key files hold it). */
export async function newRsaKeyPair(): Promise<{ publicPem: string; privatePem: string }> {
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { publicPem: publicKey, privatePem: privateKey };
}

/**
 * ZITADEL's key file of a machine user (docs/decisions.md#machine-credentials): what its SDKs read to
 * sign JWT-profile assertions.
 */
export interface MachineKeyFile {
  type: 'serviceaccount';
  keyId: string;
  /** The private key, PEM (PKCS#1). */
  key: string;
  /** RFC 3339; a key without expiry carries ZITADEL's "never" date. */
  expirationDate: string;
  userId: string;
}

export function machineKeyFileOf(key: { keyId: string; privatePem: string; userId: string; expiresAt: Date | null }): MachineKeyFile {
  return {
    type: 'serviceaccount',
    keyId: key.keyId,
    key: key.privatePem,
    expirationDate: key.expiresAt === null ? NO_EXPIRY : key.expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    userId: key.userId,
  };
}

/** The key file as the API returns it. */
export function machineKeyFile(key: { keyId: string; privatePem: string; userId: string; expiresAt: Date | null }): string {
  return JSON.stringify(machineKeyFileOf(key));
}

export async function addMachineKey(trx: DB, change: MachineChange, key: { keyId: string; publicPem: string; expiresAt: Date | null; generated: boolean }): Promise<ChangeDetails> {
  await insertMachineKey(trx, { id: key.keyId, user_id: change.userId, public_key: key.publicPem, expires_at: key.expiresAt });
  return appendEvent(trx, {
    instanceId: change.instanceId,
    aggregateId: change.userId,
    resourceOwner: change.orgId,
    type: 'user.machine.key.added',
    creator: change.creator,
    payload: { keyId: key.keyId, expiresAt: key.expiresAt?.toISOString() ?? null, generated: key.generated },
  });
}

/** A key given with its public half (the bootstrap file's): `pem` is SPKI PEM as parsePublicKey gives it. */
export interface GivenMachineKey {
  keyId: string;
  pem: string;
  expiresAt: Date | null;
}

/** A key id another machine user's key has. */
export class MachineKeyTaken extends Refusal {
  override name = 'MachineKeyTaken';
  readonly keyId: string;
  constructor(keyId: string, owner: string) {
    super('exists', 'USER-KeyIdTaken', `keyId ${keyId} already belongs to another user (${owner})`);
    this.keyId = keyId;
  }
}


/**
 * Adds the given keys to the user, or updates a key of the same id whose public key or expiry
 * differs; keys not given (made by the CLI or the API, say) stay. No event of its own: the caller's
 * `user.machine.added` or `.changed` names them. True when any key changed.
 */
export async function declareMachineKeys(trx: DB, userId: string, keys: readonly GivenMachineKey[]): Promise<boolean> {
  let changed = false;
  for (const key of keys) {
    const row = await findMachineKey(trx, key.keyId);
    if (row === undefined) {
      await insertMachineKey(trx, { id: key.keyId, user_id: userId, public_key: key.pem, expires_at: key.expiresAt });
      changed = true;
    } else if (row.owner !== userId) {
      throw new MachineKeyTaken(key.keyId, row.owner);
    } else if (normalizedPem(row.public_key) !== key.pem || !sameValue(row.expires_at, key.expiresAt)) {
      await updateMachineKey(trx, key.keyId, { public_key: key.pem, expires_at: key.expiresAt });
      changed = true;
    }
  }
  return changed;
}

/** Removes one key of the user; undefined when the user has no key with that id. */
export async function removeMachineKey(trx: DB, change: MachineChange, keyId: string): Promise<ChangeDetails | undefined> {
  if (!(await deleteMachineKey(trx, change.userId, keyId))) return undefined;
  return appendEvent(trx, {
    instanceId: change.instanceId,
    aggregateId: change.userId,
    resourceOwner: change.orgId,
    type: 'user.machine.key.removed',
    creator: change.creator,
    payload: { keyId },
  });
}

/** A new machine secret: 32 random bytes, base64url (safe in HTTP Basic and form bodies alike). */
export function newMachineSecret(): string {
  return randomToken(32);
}

/** Stores the hash of a new secret, replacing the previous one. */
export async function setMachineSecret(trx: DB, change: MachineChange, secretHash: string, now = new Date()): Promise<ChangeDetails> {
  await setMachineSecretHash(trx, change.userId, secretHash, now);
  return appendEvent(trx, {
    instanceId: change.instanceId,
    aggregateId: change.userId,
    resourceOwner: change.orgId,
    type: 'user.machine.secret.set',
    creator: change.creator,
  });
}

/** Removes the user's secret; undefined when it has none. */
export async function removeMachineSecret(trx: DB, change: MachineChange, now = new Date()): Promise<ChangeDetails | undefined> {
  if (!(await clearMachineSecretHash(trx, change.userId, now))) return undefined;
  return appendEvent(trx, {
    instanceId: change.instanceId,
    aggregateId: change.userId,
    resourceOwner: change.orgId,
    type: 'user.machine.secret.removed',
    creator: change.creator,
  });
}
