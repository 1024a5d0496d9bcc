/**
 * What every step of applying a bootstrap shares: the transaction context, who the wings are told
 * writes (`bootstrap`), matching by id or natural key, a wing's refusal as a conflict at a path of
 * the document, secrets that are only re-hashed when they changed, and public keys added by keyId.
 */
import { createPublicKey } from 'node:crypto';
import { changedColumns, sameValue } from '../domain/kernel/changed-fields.ts';
import { hashSecret, verifySecret } from '../domain/kernel/crypto.ts';
import { appendEvent } from '../domain/kernel/events.ts';
import { claimIdentifiersFor, claimNewIdentifiers, IdentifierTaken, type IdentifierOwner } from '../domain/kernel/identifiers.ts';
import { Refusal } from '../domain/kernel/refusals.ts';
import { UserExists, UserInputError, UserStateConflict } from '../domain/users/user-rules.ts';
import type { DB } from '../store/database.ts';
import type { PublicKeySpec } from './document.ts';
import { BootstrapError } from './errors.ts';

export { changedColumns, sameValue };

export type ObjectKind = 'instance' | 'org' | 'user' | 'machine' | 'project' | 'app' | 'authorization';
export type Action = 'created' | 'updated' | 'unchanged';

export interface ObjectResult {
  kind: ObjectKind;
  /** Path in the document ('' for the instance). */
  path: string;
  id: string;
  action: Action;
}

export interface ApplyContext {
  trx: DB;
  file: string;
  instanceId: string;
  results: ObjectResult[];
}

/** The events' creator for everything the file writes. */
export const BOOTSTRAP = 'bootstrap';

/** Who the wings are told writes: the file, in its instance. */
export function writer(ctx: ApplyContext): { instanceId: string; creator: string } {
  return { instanceId: ctx.instanceId, creator: BOOTSTRAP };
}

export function conflict(ctx: ApplyContext, path: string, message: string): never {
  throw new BootstrapError([{ file: ctx.file, path, message }]);
}

/**
 * Runs a wing's write for the object at `path`; a refusal becomes a conflict there (`at` may say a
 * more precise path, or a message in the file's words). Anything else passes as it is.
 */
export async function refusedAt<T>(
  ctx: ApplyContext,
  path: string,
  work: () => Promise<T>,
  at: (refusal: Error) => { path: string; message?: string } | undefined = () => undefined,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isRefusal(error)) throw error;
    const where = at(error);
    conflict(ctx, where?.path ?? path, where?.message ?? error.message);
  }
}

/** The wings' refusals: Refusal, and the users wing's own (user-rules.ts). */
function isRefusal(error: unknown): error is Error {
  return error instanceof Refusal || error instanceof UserInputError || error instanceof UserExists || error instanceof UserStateConflict;
}

/** A value of the namespace of token names that is taken (domain/kernel/identifiers.ts), in the file's words. */
export function takenMessage(value: string): string {
  return `"${value}" is taken: user ids, machine user names, project ids, application ids and client ids share one namespace, and a value is never given again after its holder is deleted`;
}

/**
 * Claims the values of an object the file creates (`fresh`) or renames in the instance's namespace of
 * token names (domain/identifiers.ts); a taken value is a conflict at `path`.
 */
export async function claim(ctx: ApplyContext, path: string, owner: IdentifierOwner, values: readonly string[], fresh: boolean): Promise<void> {
  try {
    if (fresh) await claimNewIdentifiers(ctx.trx, ctx.instanceId, owner, values);
    else await claimIdentifiersFor(ctx.trx, ctx.instanceId, owner, values);
  } catch (error) {
    if (!(error instanceof IdentifierTaken)) throw error;
    conflict(ctx, path, takenMessage(error.value));
  }
}

export function record(ctx: ApplyContext, kind: ObjectKind, path: string, id: string, action: Action): void {
  ctx.results.push({ kind, path, id, action });
}

export async function emit(
  ctx: ApplyContext,
  aggregateType: string,
  aggregateId: string,
  resourceOwner: string,
  type: string,
  payload: Record<string, unknown>,
): Promise<void> {
  await appendEvent(ctx.trx, { instanceId: ctx.instanceId, aggregateType, aggregateId, resourceOwner, type, creator: 'bootstrap', payload });
}

/**
 * The hash to store for `secret`: the current one when it still verifies (so re-applying an
 * unchanged file changes nothing), a new one otherwise, null for no secret.
 */
export async function secretHash(current: string | null | undefined, secret: string | undefined): Promise<{ hash: string | null; changed: boolean }> {
  if (secret === undefined) return { hash: null, changed: current !== null && current !== undefined };
  if (current && (await verifySecret(current, secret))) return { hash: current, changed: false };
  return { hash: await hashSecret(secret), changed: true };
}

/**
 * The id of an existing object: by `id` when the file gives one, else by natural key. A natural key
 * held by another object than the given id is a conflict (it would break a unique index).
 */
export async function match<R extends { id: string }>(
  ctx: ApplyContext,
  path: string,
  givenId: string | undefined,
  byId: (id: string) => Promise<R | undefined>,
  byKey: () => Promise<R | undefined>,
  label: string,
): Promise<R | undefined> {
  const keyed = await byKey();
  if (givenId === undefined) return keyed;
  if (keyed && keyed.id !== givenId) conflict(ctx, `${path}.id`, `${label} already belongs to the object with id ${keyed.id}, not to id ${givenId}`);
  return keyed ?? (await byId(givenId));
}

export interface KeyRow {
  id: string;
  owner: string;
  public_key: string;
  expires_at: Date | null;
}

export interface KeyTable {
  find(keyId: string): Promise<KeyRow | undefined>;
  insert(key: PublicKeySpec): Promise<void>;
  update(key: PublicKeySpec): Promise<void>;
}

function normalizedPem(pem: string): string {
  try {
    return createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  } catch {
    return pem;
  }
}

/** Adds or updates the listed keys; keys not listed (made by the CLI, say) stay. True when any changed. */
export async function syncKeys(ctx: ApplyContext, ownerId: string, keys: PublicKeySpec[], table: KeyTable, ownerLabel: string): Promise<boolean> {
  let changed = false;
  for (const key of keys) {
    const row = await table.find(key.keyId);
    if (!row) {
      await table.insert(key);
      changed = true;
    } else if (row.owner !== ownerId) {
      conflict(ctx, `${key.path}.keyId`, `keyId ${key.keyId} already belongs to another ${ownerLabel} (${row.owner})`);
    } else if (normalizedPem(row.public_key) !== key.pem || !sameValue(row.expires_at, key.expiresAt)) {
      await table.update(key);
      changed = true;
    }
  }
  return changed;
}
