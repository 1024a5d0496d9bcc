/**
 * GET and POST /oauth/v2/authorize (RFC 6749 §4.1.1, §4.2.1; OIDC Core §3.1.2, §3.2.2;
 * docs/endpoints.md#authorization-endpoint).
 *
 * validate the client and redirect URI (errors shown on our error page) → validate the rest (errors
 * redirected to the client) → remember the request, bound to this browser → answer at once from an
 * existing session when that is allowed, else send the browser to the login UI, which comes back
 * through /oauth/v2/authorize/callback.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { createAuthRequest, type AuthRequest } from '../domain/sign-in/auth-requests.ts';
import type { Application } from '../domain/instance/directory.ts';
import { sessionMeetsFactors } from '../domain/credentials/otp.ts';
import { verifyIdTokenHint } from '../domain/tokens/own-id-token.ts';
import { redirectUriMatches } from '../domain/projects/redirect-uris.ts';
import { activeSessions, type UserSession } from '../domain/sign-in/sessions.ts';
import { browserOf } from '../http/browser.ts';
import { renderErrorPage } from '../http/error-page.ts';
import { optional, readQueryOrForm, type Params } from '../http/form.ts';
import { LOGIN_UI_PATH } from '../http/paths.ts';
import { finishAuthorization } from './authorize-finish.ts';
import { InvalidRequest, InvalidScope, OAuthError, UnauthorizedClient } from './errors.ts';
import { deliver } from './response-mode.ts';
import { checkScopes, parseScope } from './scopes.ts';
import { RESPONSE_MODES, RESPONSE_TYPES, type ResponseMode, type ResponseType } from '../oidc/vocabulary.ts';
/**
 * `consent` is accepted and needs no screen: every application is registered by the instance's
 * operators, so the consent is theirs and given (OIDC Core §3.1.2.1 defines the value; clients that
 * ask for offline_access send it, as Core §11 tells them to).
 */
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account', 'create']);

/** An error to show on our own page: the redirect URI cannot be trusted (RFC 6749 §4.1.2.1). */
class UntrustedRedirect extends OAuthError {}

/** Response types are space-delimited sets (OAuth Multiple Response Types §3): order does not matter. */
function normalizeResponseType(value: string): ResponseType | undefined {
  const parts = value.split(' ').filter(Boolean).sort().join(' ');
  return RESPONSE_TYPES.find((type) => type.split(' ').sort().join(' ') === parts);
}

function defaultMode(type: string | undefined): ResponseMode {
  return type !== undefined && type !== 'code' ? 'fragment' : 'query';
}

async function trustedClient(gh: Gatehouse, params: Params, repeated: string[]): Promise<{ app: Application; redirectUri: string }> {
  for (const name of ['client_id', 'redirect_uri']) if (repeated.includes(name)) throw new UntrustedRedirect('invalid_request', 400, `${name} is repeated`);
  const clientId = optional(params, 'client_id');
  if (!clientId) throw new UntrustedRedirect('invalid_request', 400, 'client_id is required');
  const app = await gh.directory.application(gh.instanceId, clientId);
  if (!app || app.kind !== 'oidc') throw new UntrustedRedirect('invalid_client', 400, 'the client is unknown');
  const redirectUri = optional(params, 'redirect_uri');
  if (!redirectUri) throw new UntrustedRedirect('invalid_request', 400, 'redirect_uri is required');
  // Exact string comparison, no normalisation (OIDC Core §3.1.2.1); a native app's loopback IP URI on any port (RFC 8252 §7.3).
  if (!redirectUriMatches(app.redirectUris, redirectUri, app.appType)) {
    throw new UntrustedRedirect('invalid_request', 400, 'redirect_uri is not registered for this client');
  }
  return { app, redirectUri };
}

interface Validated {
  responseType: ResponseType;
  scopes: string[];
  nonce: string | undefined;
  codeChallenge: string | undefined;
  prompt: string[];
  maxAge: number | undefined;
  hintUserId: string | undefined;
}

async function validate(gh: Gatehouse, app: Application, params: Params, repeated: string[]): Promise<Validated> {
  if (repeated[0] !== undefined) throw new InvalidRequest(`${repeated[0]} is repeated`); // RFC 6749 §3.1
  if (params.has('request')) throw new OAuthError('request_not_supported', 400, 'request objects are not supported');
  if (params.has('request_uri')) throw new OAuthError('request_uri_not_supported', 400, 'request_uri is not supported');

  const rawType = optional(params, 'response_type');
  if (!rawType) throw new InvalidRequest('response_type is required');
  const responseType = normalizeResponseType(rawType);
  if (!responseType) throw new OAuthError('unsupported_response_type', 400, `response_type ${rawType} is not supported`);
  if (!app.responseTypes.includes(responseType)) throw new UnauthorizedClient(`response_type ${responseType} is not allowed for this client`);

  const rawScope = optional(params, 'scope');
  if (!rawScope) throw new InvalidScope('scope is required');
  const scopes = parseScope(rawScope);
  if (!scopes.includes('openid')) throw new InvalidScope('the openid scope is required');
  await checkScopes(gh, scopes, app.orgId); // docs/security.md 10.6: project scopes of the app's organization only

  const nonce = optional(params, 'nonce');
  if (responseType !== 'code' && !nonce) throw new InvalidRequest('nonce is required for the implicit flow'); // OIDC Core §3.2.2.1

  // PKCE (RFC 7636 §4.3): S256 only; required for public clients in the code flow.
  const codeChallenge = optional(params, 'code_challenge');
  const method = optional(params, 'code_challenge_method');
  if (method !== undefined && method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');
  if (codeChallenge !== undefined) {
    if (method === undefined) throw new InvalidRequest('code_challenge_method must be S256');
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(codeChallenge)) throw new InvalidRequest('code_challenge is malformed');
  } else if (method !== undefined) {
    throw new InvalidRequest('code_challenge is required with code_challenge_method');
  }
  if (responseType === 'code' && app.authMethod === 'none' && codeChallenge === undefined) {
    throw new InvalidRequest('code_challenge is required for public clients');
  }

  const prompt = (optional(params, 'prompt') ?? '').split(' ').filter(Boolean);
  for (const value of prompt) if (!PROMPTS.has(value)) throw new InvalidRequest(`prompt ${value} is not supported`);
  if (prompt.includes('none') && prompt.length > 1) throw new InvalidRequest('prompt none cannot be combined'); // OIDC Core §3.1.2.1

  const rawMaxAge = optional(params, 'max_age');
  if (rawMaxAge !== undefined && !/^\d{1,9}$/.test(rawMaxAge)) throw new InvalidRequest('max_age must be a non-negative integer');
  const maxAge = rawMaxAge === undefined ? undefined : Number(rawMaxAge);

  let hintUserId: string | undefined;
  const idTokenHint = optional(params, 'id_token_hint');
  if (idTokenHint !== undefined) {
    const hint = verifyIdTokenHint(gh, idTokenHint);
    if (!hint) throw new InvalidRequest('id_token_hint is not a valid ID token of this issuer');
    hintUserId = hint.sub;
  }
  return { responseType, scopes, nonce, codeChallenge, prompt, maxAge, hintUserId };
}

/** Sessions of this browser that may answer the request: the hinted user's, active users only. */
async function candidateSessions(gh: Gatehouse, request: AuthRequest): Promise<UserSession[]> {
  const sessions = await activeSessions(gh.db, gh.instanceId, request.browser);
  const usable: UserSession[] = [];
  for (const session of sessions) {
    const user = await gh.directory.user(session.userId);
    if (!user || user.state !== 'active' || user.kind !== 'human') continue;
    if (request.hintUserId !== undefined && user.id !== request.hintUserId) continue;
    if (request.loginHint !== undefined && request.hintUserId === undefined) {
      const hint = request.loginHint.toLowerCase();
      if (hint !== user.loginName.toLowerCase() && hint !== user.userName.toLowerCase()) continue;
    }
    usable.push(session);
  }
  return usable;
}

export function fresh(session: UserSession, maxAge: number | undefined, now = Date.now()): boolean {
  return maxAge === undefined || now - session.authTime.getTime() <= maxAge * 1000;
}

function loginUi(gh: Gatehouse, page: 'login' | 'accounts' | 'register', request: AuthRequest): string {
  return `${gh.config.externalUrl}${LOGIN_UI_PATH}/${page}?authRequestID=${encodeURIComponent(request.id)}`;
}

export function authorizeEndpoint(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    let params: Params;
    let repeated: string[];
    let client: { app: Application; redirectUri: string };
    try {
      ({ params, repeated } = await readQueryOrForm(req, gh.config.maxBodyBytes));
      client = await trustedClient(gh, params, repeated);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      renderErrorPage(res, { status: error.status, error: error.error, description: error.description, acceptLanguage: req.headers['accept-language'] });
      return;
    }
    const state = repeated.includes('state') ? undefined : optional(params, 'state');
    const requestedMode = optional(params, 'response_mode');
    const rawType = optional(params, 'response_type');
    // Invalid response_mode values are ignored (docs/decisions.md#authorization-requests).
    const mode = RESPONSE_MODES.find((m) => m === requestedMode) ?? defaultMode(rawType === undefined ? undefined : normalizeResponseType(rawType));
    try {
      const valid = await validate(gh, client.app, params, repeated);
      // fragment for tokens: they never travel in a query string (OAuth Multiple Response Types §3)
      const responseMode: ResponseMode = valid.responseType !== 'code' && mode === 'query' ? 'fragment' : mode;
      const request = await createAuthRequest(gh.db, {
        instanceId: gh.instanceId,
        browser: browserOf(gh, req, res),
        clientId: client.app.clientId,
        redirectUri: client.redirectUri,
        responseType: valid.responseType,
        responseMode,
        scopes: valid.scopes,
        state,
        nonce: valid.nonce,
        codeChallenge: valid.codeChallenge,
        prompt: valid.prompt,
        maxAge: valid.maxAge,
        loginHint: optional(params, 'login_hint'),
        hintUserId: valid.hintUserId,
        uiLocales: (optional(params, 'ui_locales') ?? '').split(' ').filter(Boolean).slice(0, 10),
      });
      await route(gh, req, res, request);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      deliver(res, client.redirectUri, mode, { error: error.error, error_description: error.description, state, iss: gh.config.externalUrl });
    }
  };
}

/** Where a fresh request goes: straight back to the client, or into the login UI. */
async function route(gh: Gatehouse, req: Request, res: Response, request: AuthRequest): Promise<void> {
  const candidates = await candidateSessions(gh, request);
  const usable: UserSession[] = [];
  for (const session of candidates) {
    if (fresh(session, request.maxAge) && (await sessionMeetsFactors(gh.db, session))) usable.push(session);
  }
  if (request.prompt.includes('none')) {
    if (usable.length === 0) throw new OAuthError('login_required', 400, 'the user is not signed in');
    if (usable.length > 1) throw new OAuthError('interaction_required', 400, 'the user must choose an account');
    await finishAuthorization(gh, req, res, request, usable[0]!);
    return;
  }
  if (request.prompt.includes('create')) return void res.redirect(303, loginUi(gh, 'register', request));
  if (request.prompt.includes('login')) return void res.redirect(303, loginUi(gh, 'login', request));
  if (request.prompt.includes('select_account')) return void res.redirect(303, loginUi(gh, 'accounts', request));
  if (usable.length === 1 && candidates.length === 1) {
    await finishAuthorization(gh, req, res, request, usable[0]!);
    return;
  }
  // several sessions: the user chooses (docs/decisions.md#prompt)
  res.redirect(303, loginUi(gh, candidates.length > 1 ? 'accounts' : 'login', request));
}
