/**
 * The user a verified token speaks for. The subject must still exist in the instance and be active;
 * so must every actor of a delegated or impersonating token (RFC 8693 §4.1 `act` and the prior
 * actors nested in it): deactivating an impersonator ends every token issued for its impersonations
 * at once, and for any chain built on them.
 *
 * A token's issue time is compared with each of those users: it must not be older than the user
 * itself (an id is never given again, but a token never speaks for a user it was not issued to), nor
 * than the moment the user's earlier tokens were ended (`tokensValidAfter`: deactivated, locked,
 * deleted, its password reset). This is what ends a user's tokens, whatever their number: their rows
 * are not touched (user-lifecycle.ts).
 */
import type { Directory, User } from '../instance/directory.ts';
import { idTime } from '../kernel/ids.ts';
import type { AccessTokenClaims } from './access-token-claims.ts';

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

/**
 * Whether a token issued at `issued` may speak for `user`: not issued before the user existed
 * (compared by the second, the precision of `iat`), not before its `tokensValidAfter`. The issue
 * time to the millisecond is read (`issued.exact`) only when the second alone cannot tell.
 */
export function issuedForCurrentUser(user: Pick<User, 'createdAt' | 'tokensValidAfter'>, issued: IssueTime): boolean {
  if (Math.floor(issued.ms / 1000) < Math.floor(user.createdAt.getTime() / 1000)) return false;
  if (user.tokensValidAfter === null) return true;
  const validAfter = user.tokensValidAfter.getTime();
  if (Math.floor(issued.ms / 1000) !== Math.floor(validAfter / 1000)) return issued.ms >= validAfter;
  return issued.exact() >= validAfter;
}

/** When a token was issued: in milliseconds as far as cheaply known, and exactly on demand. */
export interface IssueTime {
  ms: number;
  exact(): number;
}

async function activeUser(directory: Directory, instanceId: string, userId: string, issued: IssueTime | undefined): Promise<User | undefined> {
  const user = await directory.user(userId);
  if (!user || user.instanceId !== instanceId || user.state !== 'active') return undefined;
  return issued === undefined || issuedForCurrentUser(user, issued) ? user : undefined;
}

/**
 * A token's subject and actors, and when it was issued: `issuedAt` (a stored row's exact time), or
 * `iat` (seconds), refined to the millisecond by the `jti` when that is one of our ids made in the
 * same second (ids.ts idTime): a token issued just after a user's tokens were ended, in the same
 * second, must not be taken for one issued before.
 */
export type TokenUsers = Pick<AccessTokenClaims, 'sub' | 'actor' | 'personal'> & { iat?: number | undefined; jti?: string | undefined; issuedAt?: Date | undefined };

/** When the token was issued, as precisely as it tells (the jti is parsed only when asked). */
export function issuedAtOf(token: Pick<TokenUsers, 'iat' | 'jti' | 'issuedAt'>): IssueTime | undefined {
  if (token.issuedAt !== undefined) {
    const ms = token.issuedAt.getTime();
    return { ms, exact: () => ms };
  }
  const { iat, jti } = token;
  if (iat === undefined) return undefined;
  return {
    ms: iat * 1000,
    exact: () => {
      const exact = jti === undefined ? undefined : idTime(jti);
      return exact !== undefined && Math.floor(exact / 1000) === iat ? exact : iat * 1000;
    },
  };
}

/**
 * The active subject of a token whose actors are all active too, each of them checked against the
 * token's issue time (issuedForCurrentUser). Without a time only the users' states are checked.
 */
export async function activeTokenUser(directory: Directory, instanceId: string, token: TokenUsers): Promise<User | undefined> {
  const chain = actorChain(token.actor);
  if (!chain) return undefined;
  // A personal access token is a credential of its machine user, as its keys are: it goes on after
  // a deactivation or lock is lifted (docs/management-api.md#personal-access-tokens); it is removed
  // with its user. Every other token ends with the access its user had when it was issued.
  const issued = token.personal ? undefined : issuedAtOf(token);
  const user = await activeUser(directory, instanceId, token.sub, issued);
  if (!user) return undefined;
  for (const actorId of chain) {
    if (!(await activeUser(directory, instanceId, actorId, issued))) return undefined;
  }
  return user;
}
