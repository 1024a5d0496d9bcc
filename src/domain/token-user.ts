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

/**
 * The users of an `act` claim, the current actor first and prior actors after it; empty without
 * one, undefined when it is malformed (a level that is no object or has no string `sub`) or longer
 * than any exchange makes it.
 */
export function actorChain(act: unknown): string[] | undefined {
  const chain: string[] = [];
  for (let level: unknown = act; level !== undefined; level = (level as Record<string, unknown>)['act']) {
    if (chain.length >= MAX_CHAIN || typeof level !== 'object' || level === null) return undefined;
    const sub = (level as Record<string, unknown>)['sub'];
    if (typeof sub !== 'string') return undefined;
    chain.push(sub);
  }
  return chain;
}

async function activeUser(directory: Directory, instanceId: string, userId: string): Promise<User | undefined> {
  const user = await directory.user(userId);
  return user && user.instanceId === instanceId && user.state === 'active' ? user : undefined;
}

/**
 * `claims.iat` (seconds), when given, must not be before the subject's `tokensValidAfter`: a user
 * deactivated, locked or deleted keeps none of its earlier tokens when it is active again (SPEC §12).
 */
export async function activeTokenUser(
  directory: Directory,
  instanceId: string,
  claims: Pick<AccessTokenClaims, 'sub' | 'actor'> & { iat?: number },
): Promise<User | undefined> {
  const chain = actorChain(claims.actor);
  if (!chain) return undefined;
  const user = await activeUser(directory, instanceId, claims.sub);
  if (!user) return undefined;
  if (claims.iat !== undefined && user.tokensValidAfter !== null && claims.iat * 1000 < user.tokensValidAfter.getTime()) return undefined;
  for (const actorId of chain) {
    if (!(await activeUser(directory, instanceId, actorId))) return undefined;
  }
  return user;
}
