/**
 * The `tokens` table (stored access and refresh tokens, by SHA-256 of the token) and `revocations`
 * (ids of JWTs, grants and sessions whose tokens no longer count). Every statement that revokes
 * something also announces the ids on the `gatehouse_revoked` channel in the same transaction, so
 * every server process drops them from its caches as soon as the change commits (store/change-listener.ts).
 */
import { sql, type Insertable } from 'kysely';
import { preparedAs, preparedSelect, type DB } from './database.ts';
import type { TokenRow, TokensTable } from './schema.ts';

export type NewToken = Insertable<TokensTable>;

/** The NOTIFY channel of revocations; the payload is `id:expiresAtSeconds` items joined by commas. */
export const REVOKED_CHANNEL = 'gatehouse_revoked';
/** The NOTIFY channel of users whose access changed; the payload is the user id. */
export const USERS_CHANNEL = 'gatehouse_users';
/** PostgreSQL's payload limit is 8000 bytes; ids are short, so chunks of this many stay well below. */
const IDS_PER_NOTIFICATION = 100;

export interface Revoked {
  id: string;
  /** Until when the revocation matters (the latest expiry of what it covers), epoch milliseconds. */
  until: number;
}

export function encodeRevoked(items: readonly Revoked[]): string {
  return items.map((item) => `${item.id}:${Math.ceil(item.until / 1000)}`).join(',');
}

export function decodeRevoked(payload: string): Revoked[] {
  return payload.split(',').flatMap((item) => {
    const [id, seconds] = item.split(':');
    const until = Number(seconds) * 1000;
    return id && Number.isFinite(until) ? [{ id, until }] : [];
  });
}

/** Announces revocations to every process; delivered when the surrounding transaction commits. */
async function announce(db: DB, items: readonly Revoked[]): Promise<void> {
  for (let start = 0; start < items.length; start += IDS_PER_NOTIFICATION) {
    const payload = encodeRevoked(items.slice(start, start + IDS_PER_NOTIFICATION));
    await sql`select pg_notify(${REVOKED_CHANNEL}, ${payload})`.execute(db);
  }
}

/** Remembers revoked ids (JWTs, grants, sessions are not rows of `tokens`) and announces them. */
async function recordRevocations(trx: DB, items: readonly Revoked[], kind: 'access_token' | 'grant' | 'session'): Promise<void> {
  await trx
    .insertInto('revocations')
    .values(items.map((item) => ({ id: item.id, kind, expires_at: new Date(item.until) })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await announce(trx, items);
}

/** Stores tokens of any kind with any of their columns (refresh tokens, oauth/grants/user-tokens.ts). */
export async function insertTokens(db: DB, rows: readonly NewToken[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('tokens').values([...rows]).execute();
}

/** An access token as domain/tokens.ts stores it; the columns it leaves out keep their defaults. */
export interface NewAccessToken {
  id: string;
  instance_id: string;
  token_hash: string;
  client_id: string;
  subject: string;
  scopes: readonly string[];
  audience: readonly string[];
  grant_id: string | null;
  session_id: string | null;
  /** JSON text. */
  actor: string | null;
  auth_time: Date | null;
  amr: readonly string[] | null;
  created_at: Date;
  expires_at: Date;
}

/**
 * Stores access tokens in one statement (several requests' tokens batched together,
 * store/insert-batcher.ts). The rows travel as one array per column, unnested by PostgreSQL, so
 * the statement's text is the same for any number of rows and is prepared once per connection; a
 * multi-row VALUES list was a new statement to parse and plan for every batch size. Measured with
 * batches of 16: 25 µs of PostgreSQL's CPU per row instead of 35.
 */
export async function insertAccessTokens(db: DB, rows: readonly NewAccessToken[]): Promise<void[]> {
  if (rows.length === 0) return [];
  const column = <T>(pick: (row: NewAccessToken) => T): T[] => rows.map(pick);
  await sql`${preparedAs('insert_access_tokens')}insert into tokens
      (id, instance_id, kind, token_hash, client_id, subject, scopes, audience, grant_id, session_id, actor, auth_time, amr, created_at, expires_at)
    select id, instance_id, 'access', token_hash, client_id, subject, scopes::text[], audience::text[], grant_id, session_id, actor::jsonb, auth_time, amr::text[], created_at, expires_at
    from unnest(${column((r) => r.id)}::text[], ${column((r) => r.instance_id)}::text[], ${column((r) => r.token_hash)}::text[],
      ${column((r) => r.client_id)}::text[], ${column((r) => r.subject)}::text[], ${column((r) => textArray(r.scopes))}::text[],
      ${column((r) => textArray(r.audience))}::text[], ${column((r) => r.grant_id)}::text[], ${column((r) => r.session_id)}::text[],
      ${column((r) => r.actor)}::text[], ${column((r) => r.auth_time)}::timestamptz[], ${column((r) => (r.amr === null ? null : textArray(r.amr)))}::text[],
      ${column((r) => r.created_at)}::timestamptz[], ${column((r) => r.expires_at)}::timestamptz[])
    as t(id, instance_id, token_hash, client_id, subject, scopes, audience, grant_id, session_id, actor, auth_time, amr, created_at, expires_at)`.execute(db);
  return rows.map(() => undefined);
}

/**
 * A text[] in PostgreSQL's array syntax, for a row's array inside a column's array (unnest flattens
 * nested arrays): every element double-quoted, with `"` and `\` escaped by a backslash.
 */
function textArray(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/**
 * A stored access token by hash, with whether its grant or session has been revoked since, in one
 * round trip (the CASE spares tokens without either the subquery; measured: user tokens +25%,
 * machine tokens -10% against two statements, because the larger statement costs more to plan).
 */
export async function findAccessToken(db: DB, tokenHash: string): Promise<(TokenRow & { family_revoked: boolean }) | undefined> {
  const [row] = await accessTokenStatement(db, tokenHash);
  return row;
}

const accessTokenStatement = preparedSelect('find_access_token', (db: DB, tokenHash: string) =>
  db
    .selectFrom('tokens')
    .selectAll('tokens')
    .select(
      sql<boolean>`case when tokens.grant_id is null and tokens.session_id is null then false else exists (select 1 from revocations where revocations.id in (tokens.grant_id, tokens.session_id)) end`.as(
        'family_revoked',
      ),
    )
    .where('token_hash', '=', tokenHash)
    .where('kind', '=', 'access'),
);

/** A stored token of either kind by hash (the revocation endpoint finds tokens by their shape). */
export async function findTokenByHash(db: DB, tokenHash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function findRefreshTokenByHash(db: DB, tokenHash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('token_hash', '=', tokenHash).where('kind', '=', 'refresh').executeTakeFirst();
}

/** A refresh token's use marks under a row lock, for its rotation (one winner among parallel uses). */
export async function lockTokenUse(trx: DB, id: string): Promise<Pick<TokenRow, 'used_at' | 'revoked_at'> | undefined> {
  return trx.selectFrom('tokens').select(['used_at', 'revoked_at']).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function markTokenUsed(trx: DB, id: string, at: Date): Promise<void> {
  await trx.updateTable('tokens').set({ used_at: at }).where('id', '=', id).execute();
}

/** The end of a grant's live refresh tokens (the latest absolute expiry), or undefined when none lives. */
export async function liveFamilyEnd(db: DB, grantId: string, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.max('absolute_expires_at').as('end'))
    .where('grant_id', '=', grantId)
    .where('kind', '=', 'refresh')
    .where('revoked_at', 'is', null)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.end ? new Date(row.end) : undefined;
}

/** Revokes one stored token (RFC 7009 §2.1: an access token revokes only itself). */
export async function revokeStoredToken(db: DB, token: Revoked, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('tokens').set({ revoked_at: now }).where('id', '=', token.id).where('revoked_at', 'is', null).execute();
    await announce(trx, [token]);
  });
}

/**
 * Revokes every token issued in these sessions, inside the caller's transaction: the records
 * (kind session) that every check of a token and of a refresh family consults, announced to every
 * process at the commit. The token rows are left alone, however many a session issued.
 */
export async function recordSessionRevocations(trx: DB, sessions: readonly Revoked[]): Promise<void> {
  if (sessions.length > 0) await recordRevocations(trx, sessions, 'session');
}

/**
 * Revokes tokens by id inside the caller's transaction (a removed personal access token): the
 * record every process's cache consults, announced at the commit.
 */
export async function recordTokenRevocations(trx: DB, tokens: readonly Revoked[]): Promise<void> {
  if (tokens.length > 0) await recordRevocations(trx, tokens, 'access_token');
}

/** Revokes JWT access tokens by jti: they are not stored, so the jti itself is remembered. */
export async function insertRevocation(db: DB, revoked: Revoked, kind: 'access_token'): Promise<void> {
  await db.transaction().execute((trx) => recordRevocations(trx, [revoked], kind));
}

/** Revokes every token of a grant: stored ones directly, JWT access tokens through their grant id. */
export async function revokeGrantTokens(db: DB, grant: Revoked, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('tokens').set({ revoked_at: now }).where('grant_id', '=', grant.id).where('revoked_at', 'is', null).execute();
    await recordRevocations(trx, [grant], 'grant');
  });
}

/** Revokes every token issued in these sessions: by session id for JWTs and stored tokens alike, and the rows. */
export async function revokeSessionTokens(db: DB, sessions: readonly Revoked[], now: Date): Promise<void> {
  if (sessions.length === 0) return;
  const ids = sessions.map((session) => session.id);
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('tokens').set({ revoked_at: now }).where('session_id', 'in', ids).where('revoked_at', 'is', null).execute();
    await recordRevocations(trx, sessions, 'session');
  });
}

/**
 * Tells every process that a user's access changed (deactivated, locked, deleted, its password
 * reset): their caches of users forget it when the transaction commits, so its tokens meet the
 * user's new state at once everywhere rather than at the next change poll.
 */
export async function announceUserChanged(trx: DB, userId: string): Promise<void> {
  await sql`select pg_notify(${USERS_CHANNEL}, ${userId})`.execute(trx);
}

/** Whether any of these token, grant or session ids has been revoked. */
export async function anyRevoked(db: DB, ids: readonly string[]): Promise<boolean> {
  if (ids.length === 0) return false;
  const row = await db.selectFrom('revocations').select('id').where('id', 'in', [...ids]).executeTakeFirst();
  return row !== undefined;
}

/** Every revocation that still matters, for a process that starts or has missed announcements. */
export async function liveRevocations(db: DB, now: Date): Promise<Revoked[]> {
  const rows = await db.selectFrom('revocations').select(['id', 'expires_at']).where('expires_at', '>', now).execute();
  return rows.map((row) => ({ id: row.id, until: row.expires_at.getTime() }));
}

/** Deletes at most `limit` revocation records that expired before `now` (what they revoked has expired too); returns how many. */
export async function deleteExpiredRevocations(db: DB, now: Date, limit: number): Promise<number> {
  return deleteSomeExpired(db, 'revocations', now, limit);
}

/** Deletes at most `limit` token rows that expired before `before` (the housekeeping keeps them a day past expiry); returns how many. */
export async function deleteTokensExpiredBefore(db: DB, before: Date, limit: number): Promise<number> {
  return deleteSomeExpired(db, 'tokens', before, limit);
}

/**
 * One bounded batch of a prune: a short statement that holds its rows' locks briefly, however much
 * has expired (a million expired tokens in one DELETE ran for 12 s). Rows are picked by their
 * physical address, found through the expiry index where the table has one.
 */
export async function deleteSomeExpired(db: DB, table: 'tokens' | 'revocations' | 'used_assertions', before: Date, limit: number): Promise<number> {
  // By expiry where there is an index on it: the plan then reads the index whatever the table's
  // statistics say (right after a bulk load it read the whole table for every batch otherwise).
  const order = table === 'tokens' ? sql`order by expires_at` : sql``;
  const result = await sql`delete from ${sql.table(table)} where ctid = any(array(
      select ctid from ${sql.table(table)} where expires_at < ${before} ${order} limit ${limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
