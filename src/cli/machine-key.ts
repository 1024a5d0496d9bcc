/**
 * `gatehouse machine-key create --user NAME`: a new RSA key pair for a machine user
 * (docs/decisions.md#machine-credentials). Only the public key is stored; the private key leaves once, in
 * ZITADEL's key file layout `{"type":"serviceaccount","keyId","key","expirationDate","userId"}`, with `key` a
 * PKCS#1 "RSA PRIVATE KEY" PEM as ZITADEL writes it (its SDKs, @zitadel/node among them, read that form).
 */
import { addMachineKey, machineKeyFileOf, newRsaKeyPair, type MachineKeyFile } from '../domain/credentials/machine-credentials.ts';
import { newId } from '../domain/kernel/ids.ts';
import type { DB } from '../store/database.ts';
import { findMachineUsersByName } from '../store/users.ts';

export type KeyFile = MachineKeyFile;

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
  const { publicPem, privatePem } = await newRsaKeyPair();
  const keyId = newId();
  const expiresAt = options.expiresAt ?? null;
  const userId = await db.transaction().execute(async (trx) => {
    const users = await findMachineUsersByName(trx, options.userName);
    const [user] = users;
    if (!user) throw new MachineKeyError(`no machine user named "${options.userName}"`);
    if (users.length > 1) throw new MachineKeyError(`several machine users are named "${options.userName}"`);
    const change = { instanceId: user.instance_id, orgId: user.org_id, userId: user.id, creator: 'cli' };
    await addMachineKey(trx, change, { keyId, publicPem, expiresAt, generated: true });
    return user.id;
  });
  return machineKeyFileOf({ keyId, privatePem, userId, expiresAt });
}
