/**
 * The user a verified access token speaks for. The subject must still exist in the instance and be
 * active; so must the actor of a delegated or impersonating token (RFC 8693 §4.1 `act`, its `sub`):
 * deactivating an impersonator ends every token issued for its impersonations at once.
 */
import type { Directory, User } from './directory.ts';
import type { AccessTokenClaims } from './tokens.ts';

async function activeUser(directory: Directory, instanceId: string, userId: unknown): Promise<User | undefined> {
  if (typeof userId !== 'string') return undefined;
  const user = await directory.user(userId);
  return user && user.instanceId === instanceId && user.state === 'active' ? user : undefined;
}

export async function activeTokenUser(directory: Directory, instanceId: string, claims: Pick<AccessTokenClaims, 'sub' | 'actor'>): Promise<User | undefined> {
  const user = await activeUser(directory, instanceId, claims.sub);
  if (!user || claims.actor === undefined) return user;
  return (await activeUser(directory, instanceId, claims.actor['sub'])) ? user : undefined;
}
