/**
 * Signing in at an external identity provider ("upstream"): the authorization code flow against a
 * generic OpenID provider (OpenID Connect Core 1.0 §3.1, discovery per OpenID Connect Discovery 1.0)
 * or a generic OAuth 2.0 server (RFC 6749 §4.1 plus a user endpoint), as ZITADEL's generic OIDC and
 * generic OAuth providers do (ZITADEL `internal/idp/providers/oidc`, `…/oauth`).
 *
 * The protocol work is oauth4webapi's (certified by the OpenID Foundation as a relying party): it
 * checks the discovery document's issuer, the token response, and the ID token's claims (`iss`
 * exactly, `aud` contains the client, `azp` with several audiences, `exp`/`iat` with 30 s of
 * tolerance, `nonce`). The ID token's signature is checked against the provider's key set
 * (validateApplicationLevelSignature), which OpenID Connect Core §3.1.3.7 would let a client skip
 * over TLS, but a provider's TLS is the only thing that would vouch for it otherwise. Every request
 * goes through outboundFetch (the private-network rule, 10 s, 1 MiB).
 * docs/federation.md#how-gatehouse-talks-to-a-provider says all this to operators.
 */
import crypto from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { outboundFetch, UpstreamUnavailable, type OutboundOptions } from './outbound.ts';
import { mapOidcClaims, type UpstreamProfile } from './claims.ts';

export type { UpstreamProfile } from './claims.ts';

export type UpstreamConfig =
  | { kind: 'oidc'; id: string; name: string; issuer: string; clientId: string; clientSecret: string; scopes: string[]; idTokenMapping: boolean; usePkce: boolean }
  | { kind: 'oauth'; id: string; name: string; clientId: string; clientSecret: string; authorizationEndpoint: string; tokenEndpoint: string; userEndpoint: string; scopes: string[]; idAttribute: string; usePkce: boolean };

/**
 * The provider's answer could not be used. `message` (= `reason`) is safe to show to the person
 * signing in and to log; `detail` says more for the logs (never a token or secret).
 */
export class UpstreamRefused extends Error {
  readonly reason: string;
  readonly detail: string;
  constructor(reason: string, detail: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'UpstreamRefused';
    this.reason = reason;
    this.detail = detail;
  }
}

export interface StartedUpstream {
  /** Where to send the browser. */
  authorizationUrl: string;
  /** Random, 256 bits base64url; expected back on the callback. */
  state: string;
  /** OpenID providers only: random, 256 bits; expected in the ID token. */
  nonce?: string;
  /** PKCE (RFC 7636) verifier: always for OpenID providers, for OAuth servers when `usePkce`. */
  codeVerifier?: string;
}

export interface FinishedUpstream {
  /** The upstream user id: the ID token's `sub`, or the OAuth user endpoint's `idAttribute`. */
  subject: string;
  profile: UpstreamProfile;
  /** Everything the provider said about the user (userinfo, the ID token's claims, or the user endpoint). */
  raw: Record<string, unknown>;
  tokens: { accessToken: string; idToken?: string; refreshToken?: string };
  /** Authentication methods of the sign-in at Gatehouse: `fed`, plus `mfa` when the provider's ID token names it. */
  amr: string[];
}

/** Scopes ZITADEL asks an OpenID provider for when none are configured (ZITADEL `internal/idp/providers/oidc/oidc.go`). */
export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email', 'phone'];

/** How long a provider's discovery document is reused. Its key set is kept by oauth4webapi for five minutes as well. */
const DISCOVERY_CACHE_MS = 5 * 60 * 1000;

/** Seconds of clock difference tolerated on `exp`, `iat` and `nbf` (oauth4webapi's default, stated here). */
const CLOCK_TOLERANCE_SECONDS = 30;

interface CachedProvider {
  as: oauth.AuthorizationServer;
  jwks: oauth.JWKSCacheInput;
  until: number;
}
const discoveries = new Map<string, CachedProvider>();

export function oidcScopes(configured: string[]): string[] {
  const scopes = configured.map((s) => s.trim()).filter((s) => s !== '');
  if (scopes.length === 0) return [...DEFAULT_OIDC_SCOPES];
  return scopes.includes('openid') ? scopes : [...scopes, 'openid'];
}

function requestOptions(fetchOptions: OutboundOptions) {
  return {
    [oauth.customFetch]: (url: string, init: oauth.CustomFetchOptions<string, unknown>) =>
      outboundFetch(url, { method: init.method, headers: init.headers, body: init.body as string | URLSearchParams | undefined, signal: init.signal }, fetchOptions),
    // outboundFetch alone decides about http (refused unless private networks are allowed), so the refusal names the rule.
    [oauth.allowInsecureRequests]: true,
  };
}

function clientOf(clientId: string): oauth.Client {
  return { client_id: clientId, [oauth.clockTolerance]: CLOCK_TOLERANCE_SECONDS };
}

/** The error's code as a provider wrote it, reduced to RFC 6749's error characters so it is safe to show. */
function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code) ? code : 'an error';
}

/** Turns whatever went wrong into UpstreamRefused: a specific reason where one is known, else the step's. */
function refusal(error: unknown, fallback: string): UpstreamRefused {
  if (error instanceof UpstreamRefused) return error;
  if (error instanceof UpstreamUnavailable) {
    if (/did not answer within/.test(error.reason)) return new UpstreamRefused('the provider did not answer in time', error.reason, { cause: error });
    if (/answered with more than/.test(error.reason)) return new UpstreamRefused('the provider answered with too much data', error.reason, { cause: error });
    if (/^resolves to|https URL|user name or password/.test(error.reason)) return new UpstreamRefused('the provider is at an address Gatehouse may not reach', error.reason, { cause: error });
    return new UpstreamRefused('the provider could not be reached', error.reason, { cause: error });
  }
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError) {
    return new UpstreamRefused(`the provider answered ${safeCode(error.error)}`, `${error.error}: ${(error.error_description ?? '').slice(0, 300)}`, { cause: error });
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    return new UpstreamRefused(`the provider answered ${safeCode(error.cause[0]?.parameters.error ?? error.cause[0]?.scheme)}`, error.message, { cause: error });
  }
  if (error instanceof oauth.OperationProcessingError) {
    const cause = error.cause as { claim?: string; attribute?: string } | undefined;
    const detail = `${error.code ?? ''} ${error.message}`.trim();
    if (error.code === oauth.JWT_CLAIM_COMPARISON || (error.code === oauth.INVALID_RESPONSE && /JWT "iss"|issuer/.test(error.message))) {
      if (cause?.claim === 'iss' || /"iss"/.test(error.message)) return new UpstreamRefused('the ID token is not from this provider', detail, { cause: error });
      if (cause?.claim === 'aud' || cause?.claim === 'azp') return new UpstreamRefused('the ID token is for another client', detail, { cause: error });
      if (cause?.claim === 'nonce') return new UpstreamRefused('wrong nonce', detail, { cause: error });
    }
    if (error.code === oauth.JWT_TIMESTAMP_CHECK) return new UpstreamRefused('the ID token has expired or is not valid yet', detail, { cause: error });
    if (error.code === oauth.KEY_SELECTION || /signature/i.test(error.message)) return new UpstreamRefused("the ID token's signature does not verify with the provider's keys", detail, { cause: error });
    if (error.code === oauth.JSON_ATTRIBUTE_COMPARISON && cause?.attribute === 'sub') return new UpstreamRefused("the provider's user information is about another user", detail, { cause: error });
    if (error.code === oauth.JSON_ATTRIBUTE_COMPARISON && cause?.attribute === 'issuer') return new UpstreamRefused("the provider's discovery document names another issuer", detail, { cause: error });
    return new UpstreamRefused(fallback, detail, { cause: error });
  }
  if (error instanceof oauth.UnsupportedOperationError) return new UpstreamRefused(fallback, `unsupported: ${error.message}`, { cause: error });
  return new UpstreamRefused(fallback, error instanceof Error ? `${error.name}: ${error.message}` : String(error), { cause: error });
}

/**
 * A token endpoint that refuses the client with an HTTP authentication challenge (RFC 6749 §5.2
 * has one for a client that authenticated with Basic) says why in its JSON body: oauth4webapi stops
 * at the challenge, so the body's `error` is read here, else the challenge's scheme would be all
 * the reason says.
 */
async function withChallengeBody(error: unknown): Promise<unknown> {
  if (!(error instanceof oauth.WWWAuthenticateChallengeError) || error.response.bodyUsed) return error;
  try {
    const body = (await error.response.json()) as { error?: unknown; error_description?: unknown };
    if (typeof body.error !== 'string') return error;
    const description = typeof body.error_description === 'string' ? body.error_description.slice(0, 300) : '';
    return new UpstreamRefused(`the provider answered ${safeCode(body.error)}`, `${body.error}: ${description}`, { cause: error });
  } catch {
    return error; // no JSON body: the challenge is all there is
  }
}

/** The provider's discovery document (cached a few minutes per issuer), with the cache of its key set. */
async function discover(issuer: string, fetchOptions: OutboundOptions): Promise<CachedProvider> {
  const key = `${fetchOptions.allowPrivateNetworks}|${issuer}`;
  const cached = discoveries.get(key);
  if (cached !== undefined && cached.until > Date.now()) return cached;
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch (error) {
    throw new UpstreamRefused('the provider is not configured correctly', `the issuer ${JSON.stringify(issuer)} is no URL`, { cause: error });
  }
  try {
    const response = await oauth.discoveryRequest(issuerUrl, { ...requestOptions(fetchOptions), algorithm: 'oidc' });
    const as = await oauth.processDiscoveryResponse(issuerUrl, response);
    if (as.authorization_endpoint === undefined || as.token_endpoint === undefined || as.jwks_uri === undefined) {
      throw new UpstreamRefused("the provider's discovery document is incomplete", 'authorization_endpoint, token_endpoint and jwks_uri are required');
    }
    const entry: CachedProvider = { as, jwks: {}, until: Date.now() + DISCOVERY_CACHE_MS };
    discoveries.set(key, entry);
    return entry;
  } catch (error) {
    throw refusal(error, "the provider's discovery document could not be read");
  }
}

function browserUrl(raw: string, fetchOptions: OutboundOptions, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new UpstreamRefused('the provider is not configured correctly', `the ${what} is no URL`, { cause: error });
  }
  if (url.protocol !== 'https:' && !(fetchOptions.allowPrivateNetworks && url.protocol === 'http:')) {
    throw new UpstreamRefused('the provider is not configured correctly', `the ${what} must be an https URL`);
  }
  return url;
}

/** Where to send the browser to sign in at the provider, and what to keep until it comes back. */
export async function startUpstream(config: UpstreamConfig, options: { redirectUri: string; loginHint?: string; fetchOptions: OutboundOptions }): Promise<StartedUpstream> {
  const state = oauth.generateRandomState();
  let url: URL;
  let scopes: string[];
  let nonce: string | undefined;
  let codeVerifier: string | undefined;
  if (config.kind === 'oidc') {
    const { as } = await discover(config.issuer, options.fetchOptions);
    url = browserUrl(as.authorization_endpoint!, options.fetchOptions, 'authorization endpoint');
    scopes = oidcScopes(config.scopes);
    nonce = oauth.generateRandomNonce();
    // PKCE for every OpenID provider, whatever `usePkce` says: it costs nothing and binds the code to this sign-in.
    codeVerifier = oauth.generateRandomCodeVerifier();
  } else {
    url = browserUrl(config.authorizationEndpoint, options.fetchOptions, 'authorization endpoint');
    scopes = config.scopes.map((s) => s.trim()).filter((s) => s !== '');
    if (config.usePkce) codeVerifier = oauth.generateRandomCodeVerifier();
  }
  url.searchParams.set('client_id', config.clientId);
  url.searchParams.set('redirect_uri', options.redirectUri);
  url.searchParams.set('response_type', 'code');
  if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  if (nonce !== undefined) url.searchParams.set('nonce', nonce);
  if (codeVerifier !== undefined) {
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  if (options.loginHint !== undefined && options.loginHint !== '' && config.kind === 'oidc') url.searchParams.set('login_hint', options.loginHint);
  return { authorizationUrl: url.href, state, ...(nonce !== undefined ? { nonce } : {}), ...(codeVerifier !== undefined ? { codeVerifier } : {}) };
}

/** Compares two secrets in constant time, whatever their lengths. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(a), digest(b));
}

export interface FinishInput {
  /** The callback's `code`. */
  code: string;
  redirectUri: string;
  /** The callback's `state`. */
  state: string;
  /** The callback's `iss` (RFC 9207), or undefined when it has none; required when the provider announces it sends one. */
  iss: string | undefined;
  /** What startUpstream returned for this sign-in. */
  expectedState: string;
  nonce?: string;
  codeVerifier?: string;
  fetchOptions: OutboundOptions;
}

/**
 * Exchanges the callback's code for the provider's word about the user, checking everything that
 * can be checked; UpstreamRefused when anything is off.
 */
export async function finishUpstream(config: UpstreamConfig, input: FinishInput): Promise<FinishedUpstream> {
  if (!sameSecret(input.state, input.expectedState)) {
    throw new UpstreamRefused('the answer does not belong to this sign-in (wrong state)', 'the callback state differs from the one sent');
  }
  return config.kind === 'oidc' ? finishOidc(config, input) : finishOauth(config, input);
}

function callbackParameters(as: oauth.AuthorizationServer, client: oauth.Client, input: FinishInput): URLSearchParams {
  const parameters = new URLSearchParams({ code: input.code, state: input.state });
  if (input.iss !== undefined) parameters.set('iss', input.iss);
  try {
    // The state was compared above in constant time.
    return oauth.validateAuthResponse(as, client, parameters, oauth.skipStateCheck);
  } catch (error) {
    if (error instanceof oauth.OperationProcessingError && /"iss"/.test(error.message)) {
      throw new UpstreamRefused('the answer is not from this provider (iss)', error.message, { cause: error });
    }
    throw refusal(error, "the provider's answer is not valid");
  }
}

async function finishOidc(config: Extract<UpstreamConfig, { kind: 'oidc' }>, input: FinishInput): Promise<FinishedUpstream> {
  if (input.nonce === undefined || input.codeVerifier === undefined) {
    throw new UpstreamRefused('the sign-in at the provider was not started properly', 'an OpenID sign-in needs its nonce and PKCE verifier');
  }
  const provider = await discover(config.issuer, input.fetchOptions);
  const { as } = provider;
  const client = clientOf(config.clientId);
  const parameters = callbackParameters(as, client, input);
  const options = requestOptions(input.fetchOptions);

  // client_secret_basic, the default of OpenID Connect Core §9, unless the provider says it takes only client_secret_post.
  const methods = as.token_endpoint_auth_methods_supported;
  const auth =
    methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')
      ? oauth.ClientSecretPost(config.clientSecret)
      : oauth.ClientSecretBasic(config.clientSecret);

  let tokens: oauth.TokenEndpointResponse;
  let idClaims: oauth.IDToken;
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(as, client, auth, parameters, input.redirectUri, input.codeVerifier, options);
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: input.nonce, requireIdToken: true });
    idClaims = oauth.getValidatedIdTokenClaims(tokens)!;
  } catch (error) {
    throw refusal(await withChallengeBody(error), "the provider's token answer is not valid");
  }
  try {
    await oauth.validateApplicationLevelSignature(as, response, { ...options, [oauth.jwksCache]: provider.jwks });
  } catch (error) {
    throw refusal(error, "the ID token's signature could not be checked");
  }

  let raw: Record<string, unknown> = { ...idClaims };
  // Claims from userinfo unless the provider is set to map the ID token; a provider without a userinfo endpoint maps the ID token.
  if (!config.idTokenMapping && as.userinfo_endpoint !== undefined) {
    try {
      const response = await oauth.userInfoRequest(as, client, tokens.access_token, options);
      raw = { ...(await oauth.processUserInfoResponse(as, client, idClaims.sub, response)) };
    } catch (error) {
      throw refusal(error, "the provider's user information could not be read");
    }
  }
  const amr = Array.isArray(idClaims.amr) && idClaims.amr.includes('mfa') ? ['fed', 'mfa'] : ['fed'];
  return {
    subject: idClaims.sub,
    profile: mapOidcClaims(raw),
    raw,
    tokens: { accessToken: tokens.access_token, ...(tokens.id_token !== undefined ? { idToken: tokens.id_token } : {}), ...(tokens.refresh_token !== undefined ? { refreshToken: tokens.refresh_token } : {}) },
    amr,
  };
}

/** The generic OAuth user id: the `idAttribute` of the user endpoint's answer, a string or a number rendered as one. */
export function oauthSubject(raw: Record<string, unknown>, idAttribute: string): string {
  const value = raw[idAttribute];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new UpstreamRefused(
    "the provider's user information has no user id",
    `the user endpoint's answer has ${value === undefined ? 'no' : 'an unusable'} attribute ${JSON.stringify(idAttribute)}`,
  );
}

async function finishOauth(config: Extract<UpstreamConfig, { kind: 'oauth' }>, input: FinishInput): Promise<FinishedUpstream> {
  if (config.usePkce && input.codeVerifier === undefined) {
    throw new UpstreamRefused('the sign-in at the provider was not started properly', 'PKCE is on but no verifier was kept');
  }
  const tokenEndpoint = browserUrl(config.tokenEndpoint, input.fetchOptions, 'token endpoint');
  const as: oauth.AuthorizationServer = {
    // A generic OAuth server has no issuer; oauth4webapi needs an identifier, and never compares it here (no ID token is read).
    issuer: tokenEndpoint.origin,
    authorization_endpoint: config.authorizationEndpoint,
    token_endpoint: tokenEndpoint.href,
  };
  const client = clientOf(config.clientId);
  const parameters = callbackParameters(as, client, { ...input, iss: undefined });
  const fetchOptions = input.fetchOptions;
  const options = {
    ...requestOptions(fetchOptions),
    // A generic OAuth provider is not trusted for OpenID claims: an ID token it may send along is dropped unread.
    [oauth.customFetch]: async (url: string, init: oauth.CustomFetchOptions<string, unknown>) => {
      const response = await outboundFetch(url, { method: init.method, headers: init.headers, body: init.body as string | URLSearchParams | undefined, signal: init.signal }, fetchOptions);
      if (!response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return response;
      const body = (await response.json()) as unknown;
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) delete (body as Record<string, unknown>)['id_token'];
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    },
  };

  let tokens: oauth.TokenEndpointResponse;
  try {
    // client_secret_post, as openid-client does by default for a client with a secret: what most OAuth-only providers (GitHub, …) take.
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(config.clientSecret), parameters, input.redirectUri, input.codeVerifier ?? oauth.nopkce, options);
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  } catch (error) {
    throw refusal(await withChallengeBody(error), "the provider's token answer is not valid");
  }

  let raw: Record<string, unknown>;
  try {
    browserUrl(config.userEndpoint, fetchOptions, 'user endpoint');
    const response = await outboundFetch(config.userEndpoint, { headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' } }, fetchOptions);
    if (response.status !== 200) throw new UpstreamRefused("the provider's user information could not be read", `the user endpoint answered ${response.status}`);
    const body = (await response.json().catch(() => undefined)) as unknown;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new UpstreamRefused("the provider's user information could not be read", 'the user endpoint answered no JSON object');
    raw = body as Record<string, unknown>;
  } catch (error) {
    throw refusal(error, "the provider's user information could not be read");
  }
  return {
    subject: oauthSubject(raw, config.idAttribute),
    // Generic OAuth vouches for nothing but the user id (ZITADEL maps no profile either): no names, no verified email.
    profile: { emailVerified: false, phoneVerified: false },
    raw,
    tokens: { accessToken: tokens.access_token, ...(tokens.refresh_token !== undefined ? { refreshToken: tokens.refresh_token } : {}) },
    amr: ['fed'],
  };
}
