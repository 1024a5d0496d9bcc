/**
 * `gatehouse machine-key create --user NAME`: a new RSA key pair for a machine user (SPEC §5, §9).
 * Only the public key is stored; the private key leaves once, in ZITADEL's key file layout
 * `{"type":"serviceaccount","keyId","key","userId"}`, with `key` a PKCS#1 "RSA PRIVATE KEY" PEM as
 * ZITADEL writes it (its SDKs, @zitadel/node among them, read that form).
 */
import { generateKeyPairSync } from 'node:crypto';
import { appendEvent } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import type { DB } from '../store/database.ts';
import { findMachineUsersByName, insertMachineKey } from '../store/users.ts';

export interface KeyFile {
  type: 'serviceaccount';
  keyId: string;
  /** The private key, PEM (PKCS#1). */
  key: string;
  userId: string;
}

export interface CreateMachineKeyOptions {
  userName: string;
  /** When the key stops being accepted; never when absent. */
  expiresAt?: Date;
}

export class MachineKeyError extends Error {
  override name = 'MachineKeyError';
}

export async function createMachineKey(db: DB, options: CreateMachineKeyOptions): Promise<KeyFile> {
  if (options.expiresAt !== undefined && !(options.expiresAt.getTime() > Date.now())) {
    throw new MachineKeyError('the expiry of a new key must lie in the future');
  }
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const keyId = newId();
  const userId = await db.transaction().execute(async (trx) => {
    const users = await findMachineUsersByName(trx, options.userName);
    const [user] = users;
    if (!user) throw new MachineKeyError(`no machine user named "${options.userName}"`);
    if (users.length > 1) throw new MachineKeyError(`several machine users are named "${options.userName}"`);
    await insertMachineKey(trx, { id: keyId, user_id: user.id, public_key: publicKey, expires_at: options.expiresAt ?? null });
    await appendEvent(trx, {
      instanceId: user.instance_id,
      aggregateType: 'user',
      aggregateId: user.id,
      resourceOwner: user.org_id,
      type: 'user.machine.key.added',
      creator: 'cli',
      payload: { keyId, expiresAt: options.expiresAt?.toISOString() ?? null },
    });
    return user.id;
  });
  return { type: 'serviceaccount', keyId, key: privateKey, userId };
}
