/**
 * The user a verified access token speaks for. The subject must still exist in the instance and be
 * active; so must every actor of a delegated or impersonating token (RFC 8693 §4.1 `act` and the
 * prior actors nested in it): deactivating an impersonator ends every token issued for its
 * impersonations at once, and for any chain built on them.
 */
import type { Directory, User } from './directory.ts';
import type { AccessTokenClaims } from './tokens.ts';

/** Longer chains are refused when tokens are exchanged; one more level tolerates nothing unchecked. */
const MAX_CHAIN = 6;

async function activeUser(directory: Directory, instanceId: string, userId: unknown): Promise<User | undefined> {
  if (typeof userId !== 'string') return undefined;
  const user = await directory.user(userId);
  return user && user.instanceId === instanceId && user.state === 'active' ? user : undefined;
}

export async function activeTokenUser(directory: Directory, instanceId: string, claims: Pick<AccessTokenClaims, 'sub' | 'actor'>): Promise<User | undefined> {
  const user = await activeUser(directory, instanceId, claims.sub);
  if (!user) return undefined;
  let actor: unknown = claims.actor;
  for (let depth = 0; actor !== undefined; depth++) {
    if (depth >= MAX_CHAIN || typeof actor !== 'object' || actor === null) return undefined;
    const { sub, act } = actor as Record<string, unknown>;
    if (!(await activeUser(directory, instanceId, sub))) return undefined;
    actor = act;
  }
  return user;
}
