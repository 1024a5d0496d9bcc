/**
 * What this process knows about revocations, so that verifying a token needs no database round trip:
 * the ids (JWT ids, grant ids, session ids, stored token ids) revoked and not yet expired, and the
 * stored access tokens already read, by hash.
 *
 * It is trusted only while it is *live*: loaded from `revocations` after this process started to
 * listen for revocation announcements (store/change-listener.ts), with the listener still connected.
 * While not live (starting, or the listener lost its connection and announcements may have been
 * missed) every check goes to the database, as if there were no cache. Entries are removed only
 * when what they cover has expired; the token cache is emptied whenever liveness is lost.
 */
import type { Revoked } from '../../store/tokens.ts';
import type { AccessTokenClaims } from './access-token-claims.ts';

/** A stored access token as verified from its row: the claims and the instance it belongs to. */
export interface CachedAccessToken {
  claims: AccessTokenClaims;
  instanceId: string;
}

const MAX_CACHED_TOKENS = 100_000;
/** Expired revocations are swept at most this often (they only cost memory until then). */
const SWEEP_EVERY_MS = 60_000;

export class RevocationCache {
  #revoked = new Map<string, number>();
  #tokens = new Map<string, CachedAccessToken>();
  #live = false;
  #lastSweep = 0;
  /** Moves at every suspend and resume: a row read in an earlier epoch is not remembered. */
  #epoch = 0;

  get live(): boolean {
    return this.#live;
  }

  /** Take before reading a token from the database; pass to `remember` with what was read. */
  get epoch(): number {
    return this.#epoch;
  }

  /** Records revocations (announced by any process, or made by this one after its commit). */
  add(items: readonly Revoked[]): void {
    for (const item of items) {
      const known = this.#revoked.get(item.id);
      if (known === undefined || known < item.until) this.#revoked.set(item.id, item.until);
    }
  }

  /** Whether any id is revoked; undefined when the cache is not live and the database must answer. */
  anyRevoked(ids: readonly string[], now = Date.now()): boolean | undefined {
    if (!this.#live) return undefined;
    this.#sweep(now);
    return ids.some((id) => (this.#revoked.get(id) ?? 0) > now);
  }

  /** A stored access token read before, if the cache is live. Revocations are checked by the caller. */
  token(hash: string): CachedAccessToken | undefined {
    return this.#live ? this.#tokens.get(hash) : undefined;
  }

  remember(hash: string, token: CachedAccessToken, readInEpoch: number): void {
    if (!this.#live || readInEpoch !== this.#epoch) return;
    if (this.#tokens.size >= MAX_CACHED_TOKENS) {
      const oldest = this.#tokens.keys().next().value;
      if (oldest !== undefined) this.#tokens.delete(oldest);
    }
    this.#tokens.set(hash, token);
  }

  forget(hash: string): void {
    this.#tokens.delete(hash);
  }

  /** Announcements may have been missed: stop trusting the cache until `resume`. */
  suspend(): void {
    this.#live = false;
    this.#epoch += 1;
    this.#tokens.clear();
  }

  /**
   * Trust again, with the revocations read from the database after listening started (announcements
   * received meanwhile were added and are kept: the sets are merged, never replaced).
   */
  resume(loaded: readonly Revoked[]): void {
    this.add(loaded);
    this.#tokens.clear();
    this.#epoch += 1;
    this.#live = true;
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [id, until] of this.#revoked) if (until <= now) this.#revoked.delete(id);
    for (const [hash, token] of this.#tokens) if (token.claims.exp * 1000 <= now) this.#tokens.delete(hash);
  }
}
