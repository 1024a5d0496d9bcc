/**
 * Refresh tokens (RFC 6749 §6), the tokens wing's one writer of them: a refresh token is 256 random
 * bits, stored as its SHA-256 in `tokens` (kind 'refresh'). Every token of one sign-in shares a
 * family id (`grant_id`, the code's grant id): revoking the family revokes its refresh tokens and
 * every access token minted from them. A refresh token lives for the idle lifetime from its own
 * issue, never past the absolute lifetime counted from the family's start. Rotation marks the
 * presented token used under its row lock, so one of parallel uses wins (RFC 9700 §4.14.2).
 */
import type { AccessTokenType } from '../../oidc/vocabulary.ts';
import type { DB } from '../../store/database.ts';
import type { TokenRow } from '../../store/schema.ts';
import { insertTokens, liveFamilyEnd, lockTokenUse, markTokenUsed } from '../../store/tokens.ts';
import { sha256 } from '../kernel/crypto.ts';
import { newId, randomToken } from '../kernel/ids.ts';

/** Where refresh tokens are issued: the instance, and how long one lives without being used. */
export interface RefreshIssuer {
  instanceId: string;
  refreshIdleSeconds: number;
}

/** What a refresh token carries from the sign-in that started its family. */
export interface RefreshFamily {
  grantId: string;
  clientId: string;
  subject: string;
  sessionId: string | undefined;
  /** The scopes of the original grant: a refresh may narrow them for one access token, never widen. */
  scopes: string[];
  audience: string[];
  authTime: Date;
  amr: string[];
  /** The end of the family: absolute lifetime from its start. */
  absoluteExpiresAt: Date;
  /** RFC 8693 §4.1: who acts for the subject, in families started by a token exchange. */
  actor?: Record<string, unknown> | undefined;
  /**
   * Refresh tokens issued by a token exchange: the access token type they mint. Their audience and
   * actor stay those of the exchange; a sign-in family's audience follows its scopes.
   */
  exchangedAs?: AccessTokenType | undefined;
  /** Refresh tokens of an impersonation: the actor's right is checked again at every refresh. */
  impersonation?: boolean | undefined;
}

/** The family of a stored refresh token row. */
export function familyOf(row: TokenRow): RefreshFamily {
  return {
    grantId: row.grant_id ?? row.id,
    clientId: row.client_id,
    subject: row.subject,
    sessionId: row.session_id ?? undefined,
    scopes: row.scopes,
    audience: row.audience,
    authTime: row.auth_time ?? row.created_at,
    amr: row.amr ?? [],
    absoluteExpiresAt: row.absolute_expires_at ?? row.expires_at,
    actor: row.actor ?? undefined,
    exchangedAs: row.exchanged_as ?? undefined,
    impersonation: row.impersonation,
  };
}

/** Stores a new refresh token of the family (`db` may be a transaction) and returns it. */
export async function storeRefreshToken(db: DB, issuer: RefreshIssuer, family: RefreshFamily, now = new Date()): Promise<string> {
  const token = randomToken(32);
  const idle = now.getTime() + issuer.refreshIdleSeconds * 1000;
  await insertTokens(db, [
    {
      id: newId(),
      instance_id: issuer.instanceId,
      kind: 'refresh',
      token_hash: sha256(token),
      client_id: family.clientId,
      subject: family.subject,
      scopes: family.scopes,
      audience: family.audience,
      grant_id: family.grantId,
      session_id: family.sessionId ?? null,
      auth_time: family.authTime,
      amr: family.amr,
      created_at: now,
      expires_at: new Date(Math.min(idle, family.absoluteExpiresAt.getTime())),
      absolute_expires_at: family.absoluteExpiresAt,
      actor: family.actor ? JSON.stringify(family.actor) : null,
      exchanged_as: family.exchangedAs ?? null,
      impersonation: family.impersonation === true,
    },
  ]);
  return token;
}

export type Rotation = { kind: 'rotated'; token: string } | { kind: 'reused' } | { kind: 'revoked' };

/**
 * Marks the presented token used and stores its successor, in the caller's transaction, under the
 * token's row lock: of parallel uses one rotates, the others find it used (a reuse) or revoked.
 */
export async function rotateRefreshToken(trx: DB, issuer: RefreshIssuer, row: TokenRow, now = new Date()): Promise<Rotation> {
  const current = await lockTokenUse(trx, row.id);
  if (!current || current.revoked_at) return { kind: 'revoked' };
  if (current.used_at) return { kind: 'reused' };
  await markTokenUsed(trx, row.id, now);
  return { kind: 'rotated', token: await storeRefreshToken(trx, issuer, familyOf(row), now) };
}

/**
 * The end of a family's live refresh tokens (the latest absolute expiry), or undefined when none
 * lives: a token exchange issues a refresh token only within a live family of its authorizing sign-in.
 */
export async function familyEnd(db: DB, grantId: string, now = new Date()): Promise<Date | undefined> {
  const end = await liveFamilyEnd(db, grantId, now);
  return end && end.getTime() > now.getTime() ? end : undefined;
}
