/**
 * The protocol's words, written once: what requests may say, what applications may be registered
 * for, and what discovery lists (OAuth 2.0, OIDC Core, RFC 7636, RFC 8693, RFC 9068). No behaviour,
 * no imports: every floor of the house may use them, as zitadel/oidc keeps its wire constants in
 * pkg/oidc apart from the provider.
 */

/** Response types of the authorization endpoint (OIDC Core §3: the code flow and the implicit flow). */
export const RESPONSE_TYPES = ['code', 'id_token', 'id_token token'] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

/** How an authorization response travels (OAuth 2.0 Multiple Response Type Encoding, Form Post Response Mode). */
export const RESPONSE_MODES = ['query', 'fragment', 'form_post'] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

/** Client authentication methods (OIDC Core §9). */
export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
/** The order discovery lists them in. */
const DISCOVERY_ORDER: readonly AuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'];

/** Who may introspect (RFC 7662 §2.1): resource servers with HTTP Basic or a signed assertion. */
export const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'private_key_jwt'] as const satisfies readonly AuthMethod[];

/** Access tokens: a JWT (RFC 9068, verified locally) or an opaque token (looked up). */
export const ACCESS_TOKEN_TYPES = ['jwt', 'opaque'] as const;
export type AccessTokenType = (typeof ACCESS_TOKEN_TYPES)[number];

/** PKCE (RFC 7636 §4.2): S256 only; `plain` is refused. */
export const CODE_CHALLENGE_METHODS = ['S256'] as const;

/** RFC 8693 §3 token type identifiers. */
const TOKEN_TYPE_PREFIX = 'urn:ietf:params:oauth:token-type:';
export const ACCESS_TOKEN_TYPE = `${TOKEN_TYPE_PREFIX}access_token`;
export const REFRESH_TOKEN_TYPE = `${TOKEN_TYPE_PREFIX}refresh_token`;
export const ID_TOKEN_TYPE = `${TOKEN_TYPE_PREFIX}id_token`;
export const JWT_TOKEN_TYPE = `${TOKEN_TYPE_PREFIX}jwt`;

/** `urn:<service>:params:oauth:token-type:user_id` (GATEHOUSE_SERVICE_NAME, as ZITADEL's `urn:zitadel:…`). */
export function userIdTokenType(serviceName: string): string {
  return `urn:${serviceName}:params:oauth:token-type:user_id`;
}

/** Methods in discovery's order, for lists built from sets of them. */
export function inDiscoveryOrder(methods: Iterable<AuthMethod>): AuthMethod[] {
  const given = new Set(methods);
  return DISCOVERY_ORDER.filter((method) => given.has(method));
}
