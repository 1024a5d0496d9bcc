/**
 * Authorization requests (OIDC Core §3.1.2): validated at /authorize, carried through the login UI by
 * id (bound to the browser that started them), then answered with a code or tokens. A code is
 * stored as its SHA-256 and exchanged once; a second exchange finds the grant it issued so that the
 * caller can revoke it (RFC 6749 §4.1.2).
 */
import {
  clearOtpPending as clearStoredOtpPending,
  findAuthRequestByCodeForUpdate,
  findPendingAuthRequest,
  insertAuthRequest,
  markAuthRequestClosed,
  markCodeUsed,
  markOtpPending as markStoredOtpPending,
  movePendingAuthRequests,
  rememberLoginName as rememberStoredLoginName,
  setAuthRequestCode,
  setAuthRequestSession,
} from '../../store/auth-requests.ts';
import type { DB } from '../../store/database.ts';
import type { AuthRequestRow } from '../../store/schema.ts';
import { sha256 } from '../kernel/crypto.ts';
import { newId, randomToken } from '../kernel/ids.ts';
import type { ResponseMode, ResponseType } from '../../oidc/vocabulary.ts';

/** How long a user has between /authorize and finishing the login UI. */
export const AUTH_REQUEST_SECONDS = 3600;



export interface AuthRequest {
  id: string;
  instanceId: string;
  browser: string;
  clientId: string;
  redirectUri: string;
  responseType: ResponseType;
  responseMode: ResponseMode;
  scopes: string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  prompt: string[];
  maxAge: number | undefined;
  loginHint: string | undefined;
  /** The subject named by id_token_hint. */
  hintUserId: string | undefined;
  uiLocales: string[];
  /** The user the login UI has identified (login name step, account selection). */
  userId: string | undefined;
  /** The session that authenticated the request; set when the login is done. */
  sessionId: string | undefined;
  expiresAt: Date;
}

export type NewAuthRequest = Omit<AuthRequest, 'id' | 'userId' | 'sessionId' | 'expiresAt'>;

function toAuthRequest(row: AuthRequestRow): AuthRequest {
  return {
    id: row.id,
    instanceId: row.instance_id,
    browser: row.browser_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    responseType: row.response_type as ResponseType,
    responseMode: row.response_mode as ResponseMode,
    scopes: row.scopes,
    state: row.state ?? undefined,
    nonce: row.nonce ?? undefined,
    codeChallenge: row.code_challenge ?? undefined,
    prompt: row.prompt,
    maxAge: row.max_age ?? undefined,
    loginHint: row.login_hint ?? undefined,
    hintUserId: row.hint_user_id ?? undefined,
    uiLocales: row.ui_locales,
    userId: row.user_id ?? undefined,
    sessionId: row.session_id ?? undefined,
    expiresAt: row.expires_at,
  };
}

export async function createAuthRequest(db: DB, input: NewAuthRequest, now = new Date()): Promise<AuthRequest> {
  const row = await insertAuthRequest(db, {
    id: newId(),
    instance_id: input.instanceId,
    browser_hash: input.browser,
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    response_type: input.responseType,
    response_mode: input.responseMode,
    scopes: input.scopes,
    state: input.state ?? null,
    nonce: input.nonce ?? null,
    code_challenge: input.codeChallenge ?? null,
    prompt: input.prompt,
    max_age: input.maxAge ?? null,
    login_hint: input.loginHint ?? null,
    hint_user_id: input.hintUserId ?? null,
    ui_locales: input.uiLocales,
    created_at: now,
    expires_at: new Date(now.getTime() + AUTH_REQUEST_SECONDS * 1000),
  });
  return toAuthRequest(row);
}

/** A pending request of this browser: not expired, not yet answered. */
export async function pendingAuthRequest(db: DB, id: string, browser: string, now = new Date()): Promise<AuthRequest | undefined> {
  if (!/^\d{1,24}$/.test(id)) return undefined;
  const row = await findPendingAuthRequest(db, id, browser, now);
  return row ? toAuthRequest(row) : undefined;
}

/** Moves the browser's unanswered requests to its new cookie (docs/security.md 10.7; see sessions.ts moveBrowser). */
export async function movePendingRequests(db: DB, instanceId: string, from: string, to: string, now = new Date()): Promise<void> {
  await movePendingAuthRequests(db, instanceId, from, to, now);
}

/** The login is done: the request is authenticated by this session. */
export async function attachSession(db: DB, id: string, userId: string, sessionId: string): Promise<void> {
  await setAuthRequestSession(db, id, userId, sessionId);
}

/**
 * Answers the request with a code; the request can no longer be used in the login UI. With `session`,
 * the same statement binds the request to the session the code carries (attachSession).
 */
export async function issueCode(
  db: DB,
  id: string,
  lifetimeSeconds: number,
  now = new Date(),
  session?: { userId: string; sessionId: string },
): Promise<{ code: string; grantId: string }> {
  const code = randomToken(32);
  const grantId = newId();
  await setAuthRequestCode(db, id, { hash: sha256(code), expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000), grantId, session });
  return { code, grantId };
}

/** Marks an implicit or already answered request as done, so it cannot be replayed through the UI. */
export async function closeAuthRequest(db: DB, id: string): Promise<void> {
  await markAuthRequestClosed(db, id, new Date());
}

export type CodeExchange =
  | { kind: 'valid'; request: AuthRequest; grantId: string }
  | { kind: 'reused'; grantId: string }
  | { kind: 'unknown' }
  | { kind: 'expired' };

/**
 * Consumes a code exactly once (a row lock makes concurrent exchanges of one code see each other).
 * `vet` checks the code's request (client, redirect URI) before anything else and throws to refuse:
 * a refused code stays unused and its reuse revokes nothing, so a foreign client can burn no code
 * (docs/security.md 10.15).
 */
export async function consumeCode(db: DB, code: string, vet: (request: AuthRequest) => void, now = new Date()): Promise<CodeExchange> {
  return db.transaction().execute(async (trx) => {
    const row = await findAuthRequestByCodeForUpdate(trx, sha256(code));
    if (!row || !row.grant_id) return { kind: 'unknown' };
    const request = toAuthRequest(row);
    vet(request);
    if (row.code_used_at) return { kind: 'reused', grantId: row.grant_id };
    if (!row.code_expires_at || row.code_expires_at <= now) return { kind: 'expired' };
    await markCodeUsed(trx, row.id, now);
    return { kind: 'valid', request, grantId: row.grant_id };
  });
}

/**
 * The login name step's choice: the name as typed and the user it names (null for an unknown name,
 * which goes on to the password step like a known one); any session chosen before is dropped.
 */
export function rememberLoginName(db: DB, requestId: string, loginName: string, userId: string | null): Promise<void> {
  return rememberStoredLoginName(db, requestId, loginName, userId);
}

/**
 * The first factor was right (`firstFactorAmr`: `pwd` after a password, `fed` and the provider's
 * values after an external identity provider) and the user owes a second factor: the request is
 * bound to that user until the second factor is proven or set up.
 */
export function markOtpPending(db: DB, requestId: string, userId: string, firstFactorAmr: readonly string[], at = new Date()): Promise<void> {
  return markStoredOtpPending(db, requestId, userId, at, firstFactorAmr);
}

/** The one-time code step is done (or abandoned): the request owes no code any more. */
export function clearOtpPending(db: DB, requestId: string): Promise<void> {
  return clearStoredOtpPending(db, requestId);
}
