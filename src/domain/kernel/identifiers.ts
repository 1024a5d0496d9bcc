/**
 * One namespace for everything a token can name (`aud`, `client_id`, `sub`): user ids, machine user
 * names (a machine's client id), project ids, application ids and client ids, across kinds and
 * organizations, compared case-insensitively. A value names one thing and is never given to anything
 * else, even after its owner is deleted: otherwise an organization could name an application after
 * another organization's project and have that organization's API accept its tokens, lock a machine
 * user out of client_credentials by taking its name as a client id, or inherit a deleted user's
 * still-valid tokens by creating a user with its id.
 *
 * Every writer that creates one of these objects claims its values in the creating transaction;
 * the answer to a taken value is the same whoever holds it (IdentifierTaken names the value, never
 * the holder).
 */
import type { DB } from '../../store/database.ts';
import { identifierHolders, takeIdentifiers } from '../../store/identifiers.ts';
import type { IdentifierOwnerType } from '../../store/schema.ts';

export interface IdentifierOwner {
  type: IdentifierOwnerType;
  id: string;
}

/** A value another object holds, or held before it was deleted. */
export class IdentifierTaken extends Error {
  readonly value: string;
  constructor(value: string) {
    super(`the value "${value}" is taken`);
    this.value = value;
  }
}

/** The values, each letter case once (the first spelling kept). */
function distinct(values: readonly string[]): string[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = value.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Claims the values of an object being created: none may be held by anything, a deleted object
 * included (an id is never reused, even for an object of the same kind). Throws IdentifierTaken
 * for the first held value; the caller's transaction then rolls back what it claimed.
 */
export async function claimNewIdentifiers(trx: DB, instanceId: string, owner: IdentifierOwner, values: readonly string[], now = new Date()): Promise<void> {
  const held = await takeIdentifiers(trx, instanceId, owner, distinct(values), now);
  if (held.length > 0) throw new IdentifierTaken(held[0]!);
}

/**
 * Claims values for an existing object (a machine user renamed, a client id changed by the
 * bootstrap file): each must be free or already the object's own (an earlier name it takes back).
 * Values it gives up stay its own.
 */
export async function claimIdentifiersFor(trx: DB, instanceId: string, owner: IdentifierOwner, values: readonly string[], now = new Date()): Promise<void> {
  const held = await takeIdentifiers(trx, instanceId, owner, distinct(values), now);
  if (held.length === 0) return;
  const holders = await identifierHolders(trx, instanceId, held);
  for (const holder of holders.values()) {
    if (holder.ownerType !== owner.type || holder.ownerId !== owner.id) throw new IdentifierTaken(holder.value);
  }
}

/**
 * Whether a value is taken for a new object, as a check before slow work (hashing a secret): the
 * claim in the creating transaction still decides.
 */
export async function identifierTaken(db: DB, instanceId: string, value: string): Promise<boolean> {
  return (await identifierHolders(db, instanceId, [value])).size > 0;
}
