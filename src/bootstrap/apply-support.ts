/**
 * What every step of applying a bootstrap shares: the transaction context, who the wings are told
 * writes (`bootstrap`), matching by id or natural key, a wing's refusal as a conflict at a path of
 * the document, and secrets that are only re-hashed when they changed.
 */
import type { IdpContext } from '../domain/federation/providers.ts';
import { hashSecret, verifySecret } from '../domain/kernel/crypto.ts';
import { Refusal } from '../domain/kernel/refusals.ts';
import type { DB } from '../store/database.ts';
import { BootstrapError } from './errors.ts';


export type ObjectKind = 'instance' | 'org' | 'user' | 'machine' | 'pat' | 'project' | 'app' | 'authorization' | 'idp';
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
  /** Files to write once the transaction has committed (personal access tokens): never before. */
  files: PendingFile[];
  /** The API audience scope the server reads (`GATEHOUSE_SERVICE_NAME`), for personal access tokens. */
  apiScope: string;
  /** Sealing and checking identity providers; absent without a master key (a file with providers is refused then). */
  idp?: IdpContext | undefined;
}

export interface PendingFile {
  path: string;
  content: string;
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
    if (!(error instanceof Refusal)) throw error;
    const where = at(error);
    conflict(ctx, where?.path ?? path, where?.message ?? error.message);
  }
}


/** A value of the namespace of token names that is taken (domain/kernel/identifiers.ts), in the file's words. */
export function takenMessage(value: string): string {
  return `"${value}" is taken: user ids, machine user names, project ids, application ids and client ids share one namespace, and a value is never given again after its holder is deleted`;
}

export function record(ctx: ApplyContext, kind: ObjectKind, path: string, id: string, action: Action): void {
  ctx.results.push({ kind, path, id, action });
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
