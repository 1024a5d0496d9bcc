/**
 * Personal access tokens (docs/management-api.md#personal-access-tokens): long-lived bearer tokens
 * of machine users, as ZITADEL's `AddPersonalAccessToken` gives them. A token is 256 random bits
 * behind a fixed prefix, which tells it apart from an opaque access token without a lookup and lets
 * secret scanners recognise it; only its SHA-256 is stored. It always expires, speaks for its user
 * with the scopes fixed at creation (the API's among them), and is checked for expiry, removal and
 * its user's state on every use (tokens.ts `verifyAccessToken`).
 *
 * A removal deletes the row and records a revocation of its id in the same transaction: the row is
 * gone for the database lookup, the revocation drops it from every process's cache at the commit.
 */
import type { DB } from '../../store/database.ts';
import { deletePersonalAccessToken, insertPersonalAccessToken } from '../../store/personal-access-tokens.ts';
import { recordTokenRevocations } from '../../store/tokens.ts';
import { sha256 } from '../kernel/crypto.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId, randomToken } from '../kernel/ids.ts';

/** What every personal access token starts with. */
export const PERSONAL_ACCESS_TOKEN_PREFIX = 'gatehouse_pat_';

/** Tokens expire before this (ZITADEL's own "never" is 9999-12-31). */
export const LATEST_PAT_EXPIRY = Date.UTC(10000, 0, 1);

/** The machine user a change is about, and who makes it. */
export interface PersonalAccessTokenOwner {
  userId: string;
  instanceId: string;
  orgId: string;
  creator: string;
}

export interface NewPersonalAccessToken {
  id: string;
  /** The token itself: the only copy, shown once. */
  token: string;
  hash: string;
}

export function newPersonalAccessToken(): NewPersonalAccessToken {
  const token = `${PERSONAL_ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  return { id: newId(), token, hash: sha256(token) };
}

export function isPersonalAccessToken(token: string): boolean {
  return token.startsWith(PERSONAL_ACCESS_TOKEN_PREFIX);
}

/**
 * The scopes of every personal access token: the user's identity and the API's audience scope, as
 * ZITADEL stores `openid profile` and its own audience scopes with every token it creates.
 */
export function personalAccessTokenScopes(apiScope: string): string[] {
  return ['openid', 'profile', apiScope];
}

export async function addPersonalAccessToken(
  trx: DB,
  owner: PersonalAccessTokenOwner,
  token: { id: string; hash: string; expiresAt: Date; scopes: readonly string[]; createdAt?: Date },
): Promise<ChangeDetails> {
  await insertPersonalAccessToken(trx, {
    id: token.id,
    user_id: owner.userId,
    token_hash: token.hash,
    scopes: [...token.scopes],
    expires_at: token.expiresAt,
    ...(token.createdAt ? { created_at: token.createdAt } : {}),
  });
  return appendEvent(trx, {
    instanceId: owner.instanceId,
    aggregateId: owner.userId,
    resourceOwner: owner.orgId,
    type: 'user.personal.access.token.added',
    creator: owner.creator,
    payload: { tokenId: token.id, expiresAt: token.expiresAt.toISOString() },
  });
}

/** Removes the user's token and revokes its id; undefined when the user has no token with that id. */
export async function removePersonalAccessToken(
  trx: DB,
  owner: PersonalAccessTokenOwner,
  tokenId: string,
): Promise<{ details: ChangeDetails; revoked: { id: string; until: number } } | undefined> {
  const expiresAt = await deletePersonalAccessToken(trx, owner.userId, tokenId);
  if (expiresAt === undefined) return undefined;
  const revoked = { id: tokenId, until: expiresAt.getTime() };
  await recordTokenRevocations(trx, [revoked]);
  const details = await appendEvent(trx, {
    instanceId: owner.instanceId,
    aggregateId: owner.userId,
    resourceOwner: owner.orgId,
    type: 'user.personal.access.token.removed',
    creator: owner.creator,
    payload: { tokenId },
  });
  return { details, revoked };
}
