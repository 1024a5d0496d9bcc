/**
 * Access tokens, ID tokens, their verification and their revocation. A JWT access token (typ at+jwt,
 * RFC 9068) is verified locally and is not stored; revoking it writes its jti to `revocations`. An
 * opaque access token is 256 random bits, stored as its SHA-256 before it is returned (rows of
 * concurrent requests share one INSERT, store/insert-batcher.ts). Both are checked against
 * revocations on every use; the revocations and the stored tokens already read are kept in memory
 * (domain/revocation-cache.ts), trusted only while every process's revocations reach this one
 * (store/change-listener.ts), so verification needs no round trip and revocation still counts at
 * once on this process and within a second on every other.
 */
import { createHash } from 'node:crypto';
import type { DB } from '../../store/database.ts';
import { InsertBatcher } from '../../store/insert-batcher.ts';
import type { TokenRow } from '../../store/schema.ts';
import {
  anyRevoked,
  findAccessToken,
  insertRevocation,
  insertAccessTokens,
  liveRevocations,
  revokeGrantTokens,
  revokeSessionTokens,
  revokeStoredToken,
  type NewAccessToken,
  type Revoked,
} from '../../store/tokens.ts';
import { sha256 } from '../kernel/crypto.ts';
import { newId, randomToken } from '../kernel/ids.ts';
import type { KeyStore } from './keys.ts';
import { signOwnJwt, verifyOwnJwt } from './own-jwt.ts';
import type { AccessTokenClaims, IssuedAccessToken } from './access-token-claims.ts';
import { RevocationCache } from './revocation-cache.ts';
import { TurnBatch } from '../kernel/turn-batch.ts';
import { findPersonalAccessToken } from '../../store/personal-access-tokens.ts';
import { isPersonalAccessToken } from './personal-access-tokens.ts';
import type { AccessTokenType } from '../../oidc/vocabulary.ts';

export const ACCESS_TOKEN_JWT_TYPE = 'at+jwt';

export interface TokenConfig {
  issuer: string;
  accessTokenSeconds: number;
  idTokenSeconds: number;
}

export interface AccessTokenRequest {
  instanceId: string;
  type: AccessTokenType;
  subject: string;
  clientId: string;
  scopes: string[];
  audience: string[];
  grantId?: string;
  sessionId?: string;
  actor?: Record<string, unknown>;
  authTime?: Date;
  amr?: string[];
  /** The token expires no later than this (token exchange: never past the tokens presented for it). */
  notAfter?: Date | undefined;
  /** More claims of a JWT access token (role claims, docs/management-api.md#roles); opaque tokens carry none. */
  jwtClaims?: Record<string, unknown> | undefined;
}

/** A lifetime from `iat` (seconds), shortened so that it ends by `notAfter` (never below zero). */
export function cappedLifetime(iat: number, seconds: number, notAfter: Date | undefined): number {
  if (notAfter === undefined) return seconds;
  return Math.max(0, Math.min(seconds, Math.floor(notAfter.getTime() / 1000) - iat));
}

/** at_hash / c_hash (OIDC Core §3.1.3.6): left half of the hash of the ASCII value, base64url. */
export function halfHash(value: string, alg: string): string {
  const hash = alg === 'ES384' || alg === 'RS384' || alg === 'PS384' ? 'sha384' : alg === 'ES512' || alg === 'RS512' || alg === 'PS512' ? 'sha512' : alg === 'EdDSA' ? 'sha512' : 'sha256';
  const digest = createHash(hash).update(value, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** The claims of a stored access token's row. */
function claimsOfRow(row: TokenRow): AccessTokenClaims {
  return {
    jti: row.id,
    sub: row.subject,
    clientId: row.client_id,
    scopes: row.scopes,
    audience: row.audience,
    iat: Math.floor(row.created_at.getTime() / 1000),
    exp: Math.floor(row.expires_at.getTime() / 1000),
    grantId: row.grant_id ?? undefined,
    sessionId: row.session_id ?? undefined,
    actor: row.actor ?? undefined,
    authTime: row.auth_time ?? undefined,
    amr: row.amr ?? undefined,
  };
}

/** The ids whose revocation ends a token: its own, its grant's and its session's. */
function coveringIds(claims: AccessTokenClaims): string[] {
  const ids = [claims.jti];
  if (claims.grantId !== undefined) ids.push(claims.grantId);
  if (claims.sessionId !== undefined) ids.push(claims.sessionId);
  return ids;
}

/** What the token cache answers for a token it does not know. */
const MISS = Symbol('not cached');

/** Verified JWT access tokens kept at most (about 4 MB of tokens); the map empties itself when full. */
const MAX_VERIFIED_JWTS = 4096;

export class Tokens {
  readonly #db: DB;
  readonly #keys: KeyStore;
  readonly #config: TokenConfig;
  readonly #writer: InsertBatcher<NewAccessToken>;
  /** The signatures asked for in one turn of the event loop, made in a row (domain/turn-batch.ts). */
  readonly #signatures = new TurnBatch();
  /** Revocations and stored tokens this process knows; see domain/revocation-cache.ts. */
  readonly revocations = new RevocationCache();
  /**
   * JWT access tokens whose signature and claims this process verified, by token: a resource server
   * introspects the same token again and again, and the RSA verification was most of that work.
   * A token is immutable, so its verification stands; what can change is checked on every use:
   * expiry, whether its key is still published, and revocation.
   */
  readonly #verifiedJwts = new Map<string, { claims: AccessTokenClaims; kid: string }>();

  constructor(db: DB, keys: KeyStore, config: TokenConfig) {
    this.#db = db;
    this.#keys = keys;
    this.#config = config;
    // Two statements in flight: one batch is committing while the next one gathers.
    this.#writer = new InsertBatcher((rows) => insertAccessTokens(db, rows), { concurrency: 2, maxRows: 500 });
  }

  get issuer(): string {
    return this.#config.issuer;
  }

  /**
   * Loads the live revocations and trusts the cache from now on. For a process that is the only one
   * on its database (the embedded one); otherwise the revocation listener calls it once it listens.
   */
  async trustRevocations(now = new Date()): Promise<void> {
    this.revocations.resume(await liveRevocations(this.#db, now));
  }

  /** Signs a JWT with the current key, in a row with the other signatures of this turn of the event loop. */
  async sign(payload: Record<string, unknown>, typ: string): Promise<{ jwt: string; alg: string }> {
    const signer = await this.#keys.signer();
    const jwt = await this.#signatures.run(() => signOwnJwt({ alg: signer.alg, kid: signer.kid, typ }, payload, signer.alg, signer.key));
    return { jwt, alg: signer.alg };
  }

  async issueAccessToken(request: AccessTokenRequest, now = Date.now()): Promise<IssuedAccessToken> {
    const iat = Math.floor(now / 1000);
    const expiresIn = cappedLifetime(iat, this.#config.accessTokenSeconds, request.notAfter);
    const claims: AccessTokenClaims = {
      jti: newId(),
      sub: request.subject,
      clientId: request.clientId,
      scopes: request.scopes,
      audience: request.audience,
      iat,
      exp: iat + expiresIn,
      grantId: request.grantId,
      sessionId: request.sessionId,
      actor: request.actor,
      authTime: request.authTime,
      amr: request.amr,
    };
    if (request.type === 'jwt') {
      const { jwt } = await this.sign(
        {
          iss: this.#config.issuer,
          sub: claims.sub,
          aud: claims.audience,
          client_id: claims.clientId,
          scope: claims.scopes.join(' '),
          iat,
          nbf: iat,
          exp: claims.exp,
          jti: claims.jti,
          ...(claims.grantId ? { gid: claims.grantId } : {}),
          ...(claims.sessionId ? { sid: claims.sessionId } : {}),
          ...(claims.actor ? { act: claims.actor } : {}),
          ...(request.authTime ? { auth_time: Math.floor(request.authTime.getTime() / 1000) } : {}),
          ...(request.amr && request.amr.length > 0 ? { amr: request.amr } : {}),
          ...request.jwtClaims,
        },
        ACCESS_TOKEN_JWT_TYPE,
      );
      return { token: jwt, claims, expiresIn };
    }
    const token = randomToken(32);
    // Resolves after the commit of the statement that holds this row: never answered before.
    await this.#writer.add({
      id: claims.jti,
      instance_id: request.instanceId,
      token_hash: sha256(token),
      client_id: claims.clientId,
      subject: claims.sub,
      scopes: claims.scopes,
      audience: claims.audience,
      grant_id: request.grantId ?? null,
      session_id: request.sessionId ?? null,
      actor: request.actor ? JSON.stringify(request.actor) : null,
      auth_time: request.authTime ?? null,
      amr: request.amr ?? null,
      created_at: new Date(iat * 1000),
      expires_at: new Date(claims.exp * 1000),
    });
    return { token, claims, expiresIn };
  }

  /** The claims of a valid, unexpired, unrevoked access token; undefined for anything else. */
  async verifyAccessToken(token: string, now = Date.now()): Promise<AccessTokenClaims | undefined> {
    if (token.length === 0 || token.length > 8192) return undefined;
    if (token.includes('.')) return this.#verifyJwt(token, now);
    return isPersonalAccessToken(token) ? this.#verifyPersonal(token, now) : this.#verifyOpaque(token, now);
  }

  async #verifyJwt(token: string, now: number): Promise<AccessTokenClaims | undefined> {
    let entry = this.#verifiedJwts.get(token);
    if (entry === undefined) {
      entry = this.#verifyJwtSignature(token, now);
      if (entry === undefined) return undefined;
      if (this.#verifiedJwts.size >= MAX_VERIFIED_JWTS) this.#verifiedJwts.clear();
      this.#verifiedJwts.set(token, entry);
    } else if (entry.claims.exp * 1000 <= now || this.#keys.verificationKey(entry.kid, new Date(now)) === undefined) {
      this.#verifiedJwts.delete(token);
      return undefined;
    }
    return (await this.revoked(coveringIds(entry.claims), now)) ? undefined : entry.claims;
  }

  /** Signature, header and claims of one of our JWT access tokens (no revocation check). */
  #verifyJwtSignature(token: string, now: number): { claims: AccessTokenClaims; kid: string } | undefined {
    const verified = verifyOwnJwt(token, { typ: ACCESS_TOKEN_JWT_TYPE, issuer: this.#config.issuer, now }, (kid) =>
      this.#keys.verificationKey(kid, new Date(now)),
    );
    if (!verified) return undefined;
    const payload = verified.payload;
    if (typeof payload['sub'] !== 'string' || typeof payload['jti'] !== 'string' || typeof payload['client_id'] !== 'string') return undefined;
    if (typeof payload['iat'] !== 'number') return undefined;
    const claims: AccessTokenClaims = {
      jti: payload['jti'],
      sub: payload['sub'],
      clientId: payload['client_id'],
      scopes: typeof payload['scope'] === 'string' ? payload['scope'].split(' ').filter(Boolean) : [],
      audience: Array.isArray(payload['aud']) ? payload['aud'].filter((a): a is string => typeof a === 'string') : typeof payload['aud'] === 'string' ? [payload['aud']] : [],
      iat: payload['iat'],
      exp: payload['exp'] as number,
      grantId: typeof payload['gid'] === 'string' ? payload['gid'] : undefined,
      sessionId: typeof payload['sid'] === 'string' ? payload['sid'] : undefined,
      actor: typeof payload['act'] === 'object' && payload['act'] !== null ? (payload['act'] as Record<string, unknown>) : undefined,
      authTime: typeof payload['auth_time'] === 'number' ? new Date(payload['auth_time'] * 1000) : undefined,
      amr: Array.isArray(payload['amr']) ? payload['amr'].filter((m): m is string => typeof m === 'string') : undefined,
    };
    return { claims, kid: verified.header['kid'] as string };
  }

  /** Whether any of these token, grant or session ids has been revoked. */
  async revoked(ids: string[], now = Date.now()): Promise<boolean> {
    if (ids.length === 0) return false;
    return this.revocations.anyRevoked(ids, now) ?? anyRevoked(this.#db, ids);
  }

  async #verifyOpaque(token: string, now: number): Promise<AccessTokenClaims | undefined> {
    const hash = sha256(token);
    const cached = this.#cachedToken(hash, now);
    if (cached !== MISS) return cached;
    const epoch = this.revocations.epoch;
    const row = await findAccessToken(this.#db, hash);
    if (!row || row.revoked_at || row.family_revoked || row.expires_at.getTime() <= now) return undefined;
    const claims = claimsOfRow(row);
    this.revocations.remember(hash, { claims, instanceId: row.instance_id }, epoch);
    return claims;
  }

  /**
   * A stored token (opaque or personal) this process read before, by hash: its claims while it is
   * unexpired and none of its ids is revoked, undefined when it no longer counts, MISS when the cache
   * does not know it (or is not live) and the database must answer.
   */
  #cachedToken(hash: string, now: number): AccessTokenClaims | undefined | typeof MISS {
    const cached = this.revocations.token(hash);
    if (!cached) return MISS;
    const { claims } = cached;
    if (claims.exp * 1000 <= now) {
      this.revocations.forget(hash);
      return undefined;
    }
    return this.revocations.anyRevoked(coveringIds(claims), now) === false ? claims : undefined;
  }

  /**
   * A personal access token (personal-access-tokens.ts): cached by hash as stored access tokens are;
   * a removal revokes its id, which drops it from the cache; its user's state is the caller's check.
   */
  async #verifyPersonal(token: string, now: number): Promise<AccessTokenClaims | undefined> {
    const hash = sha256(token);
    const cached = this.#cachedToken(hash, now);
    if (cached !== MISS) return cached;
    const epoch = this.revocations.epoch;
    const row = await findPersonalAccessToken(this.#db, hash);
    // A removed token's row is gone: the lookup itself answers for it.
    if (!row || row.expires_at.getTime() <= now) return undefined;
    const claims: AccessTokenClaims = {
      jti: row.id,
      sub: row.user_id,
      // The machine user is the client of its own token (it has no application).
      clientId: row.user_id,
      scopes: row.scopes,
      audience: [this.#config.issuer],
      iat: Math.floor(row.created_at.getTime() / 1000),
      exp: Math.floor(row.expires_at.getTime() / 1000),
      personal: true,
    };
    this.revocations.remember(hash, { claims, instanceId: row.instance_id }, epoch);
    return claims;
  }

  /** Drops removed personal access tokens from this process's cache at once (others follow the revocation's announcement). */
  forgetPersonalAccessToken(revoked: { id: string; until: number }): void {
    this.revocations.add([revoked]);
  }

  /** Revokes one access token (RFC 7009 §2.1: an access token revokes only itself). */
  async revokeAccessToken(claims: AccessTokenClaims, opaque: boolean): Promise<void> {
    const revoked = { id: claims.jti, until: claims.exp * 1000 };
    if (opaque) await revokeStoredToken(this.#db, revoked, new Date());
    else await insertRevocation(this.#db, revoked, 'access_token');
    this.revocations.add([revoked]);
  }

  /** Revokes one stored token of either kind by its row (the revocation endpoint). */
  async revokeStoredToken(row: Pick<TokenRow, 'id' | 'expires_at'>): Promise<void> {
    const revoked = { id: row.id, until: row.expires_at.getTime() };
    await revokeStoredToken(this.#db, revoked, new Date());
    this.revocations.add([revoked]);
  }

  /** Revokes every token of a grant (a refresh family); the revocation lasts until `until`. */
  async revokeGrant(grantId: string, until: Date): Promise<void> {
    const revoked = { id: grantId, until: until.getTime() };
    await revokeGrantTokens(this.#db, revoked, new Date());
    this.revocations.add([revoked]);
  }

  /** Revokes every token issued in these sessions, until `until`. */
  async revokeSessions(sessionIds: readonly string[], until: Date, now = new Date()): Promise<void> {
    const revoked: Revoked[] = sessionIds.map((id) => ({ id, until: until.getTime() }));
    await revokeSessionTokens(this.#db, revoked, now);
    this.revocations.add(revoked);
  }
}
