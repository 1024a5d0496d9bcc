/**
 * The grant types Gatehouse knows (RFC 6749 §4, RFC 7523 §2.1, RFC 8693 §2.1), in one place: the
 * token endpoint's registry (oauth/grants/) names its grants with these, and the bootstrap file
 * accepts for an application exactly those an application may be registered for.
 */
export const AUTHORIZATION_CODE = 'authorization_code';
export const IMPLICIT = 'implicit';
export const REFRESH_TOKEN = 'refresh_token';
export const CLIENT_CREDENTIALS = 'client_credentials';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/**
 * What an application's `grantTypes` may list. `implicit` is an authorization endpoint flow with no
 * token endpoint grant; client_credentials and the JWT profile are machine users'
 * (docs/decisions.md#machine-users-as-clients), but client_credentials stays listable for
 * compatibility with ZITADEL's application settings.
 */
export const APP_GRANT_TYPES = [AUTHORIZATION_CODE, IMPLICIT, REFRESH_TOKEN, CLIENT_CREDENTIALS, TOKEN_EXCHANGE] as const;
export type AppGrantType = (typeof APP_GRANT_TYPES)[number];
