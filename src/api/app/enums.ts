/**
 * ZITADEL's application enums and Gatehouse's values, both ways. Value 0 is a real choice for
 * several of them (OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDC_APP_TYPE_WEB, OIDC_AUTH_METHOD_TYPE_BASIC,
 * OIDC_TOKEN_TYPE_BEARER = opaque tokens, API_AUTH_METHOD_TYPE_BASIC).
 */
import { APIAuthMethodType } from '../../../gen/zitadel/app/v2beta/api_pb.js';
import { OIDCAppType, OIDCAuthMethodType, OIDCGrantType, OIDCResponseType, OIDCTokenType } from '../../../gen/zitadel/app/v2beta/oidc_pb.js';
import { AUTHORIZATION_CODE, IMPLICIT, REFRESH_TOKEN, TOKEN_EXCHANGE, type AppGrantType } from '../../oidc/grant-types.ts';
import type { OidcAppType } from '../../store/schema.ts';
import { invalidArgument } from '../management/lists.ts';
import type { AccessTokenType, AuthMethod, ResponseType } from '../../oidc/vocabulary.ts';

/** ZITADEL's value and Gatehouse's, both ways. */
export class EnumMap<E extends number, V> {
  readonly #toValue: ReadonlyMap<E, V>;
  readonly #toEnum: ReadonlyMap<V, E>;
  constructor(pairs: ReadonlyArray<readonly [E, V]>) {
    this.#toValue = new Map(pairs);
    this.#toEnum = new Map(pairs.map(([e, v]) => [v, e]));
  }
  /** Gatehouse's value of `value`; InvalidArgument naming `field` for one it does not know. */
  read(value: E, field: string): V {
    const known = this.#toValue.get(value);
    if (known === undefined) throw invalidArgument(field, `unknown value ${value}`);
    return known;
  }
  /** ZITADEL's value, or undefined for a Gatehouse value ZITADEL has no name for. */
  write(value: V): E | undefined {
    return this.#toEnum.get(value);
  }
}

export const RESPONSE_TYPES = new EnumMap<OIDCResponseType, ResponseType>([
  [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE, 'code'],
  [OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN, 'id_token'],
  [OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN, 'id_token token'],
]);
/** client_credentials, which the bootstrap file may list for an application, has no ZITADEL name. */
export const GRANT_TYPES = new EnumMap<OIDCGrantType, AppGrantType>([
  [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, AUTHORIZATION_CODE],
  [OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT, IMPLICIT],
  [OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN, REFRESH_TOKEN],
  [OIDCGrantType.OIDC_GRANT_TYPE_TOKEN_EXCHANGE, TOKEN_EXCHANGE],
]);
export const APP_TYPES = new EnumMap<OIDCAppType, OidcAppType>([
  [OIDCAppType.OIDC_APP_TYPE_WEB, 'web'],
  [OIDCAppType.OIDC_APP_TYPE_USER_AGENT, 'user_agent'],
  [OIDCAppType.OIDC_APP_TYPE_NATIVE, 'native'],
]);
export const AUTH_METHODS = new EnumMap<OIDCAuthMethodType, AuthMethod>([
  [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC, 'client_secret_basic'],
  [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST, 'client_secret_post'],
  [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE, 'none'],
  [OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, 'private_key_jwt'],
]);
export const TOKEN_TYPES = new EnumMap<OIDCTokenType, AccessTokenType>([
  [OIDCTokenType.OIDC_TOKEN_TYPE_BEARER, 'opaque'],
  [OIDCTokenType.OIDC_TOKEN_TYPE_JWT, 'jwt'],
]);
export const API_AUTH_METHODS = new EnumMap<APIAuthMethodType, AuthMethod>([
  [APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC, 'client_secret_basic'],
  [APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, 'private_key_jwt'],
]);
