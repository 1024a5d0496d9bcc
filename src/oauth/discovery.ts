/**
 * GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §3, §4). Built once per change
 * (the list of grants depends on feature flags) and served as a prepared string. There is no
 * /.well-known/oauth-authorization-server (docs/endpoints.md#discovery). Its lists come from what
 * the server does: the protocol's words (oidc/vocabulary.ts), the enabled grants and the methods
 * each grant and endpoint accepts.
 */
import type { Gatehouse } from '../context.ts';
import { ASSERTION_ALGORITHMS } from './assertions.ts';
import { grantRegistry } from './grants/index.ts';
import { END_SESSION_PATH } from './end-session.ts';
import { INTROSPECT_PATH } from './introspect.ts';
import { REVOCATION_AUTH_METHODS, REVOKE_PATH } from './revoke.ts';
import { CODE_CHALLENGE_METHODS, inDiscoveryOrder, INTROSPECTION_AUTH_METHODS, RESPONSE_MODES, RESPONSE_TYPES, type AuthMethod } from '../oidc/vocabulary.ts';
import { STANDARD_SCOPES } from './scopes.ts';
import { TOKEN_PATH } from './token.ts';
import { USERINFO_PATH } from './userinfo.ts';

export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const KEYS_PATH = '/oauth/v2/keys';
export const AUTHORIZE_PATH = '/oauth/v2/authorize';


export async function discoveryDocument(gh: Gatehouse): Promise<Record<string, unknown>> {
  const base = gh.config.externalUrl;
  const grantTypes: string[] = [];
  const tokenAuth = new Set<AuthMethod>();
  for (const grant of grantRegistry.values()) {
    if (grant.enabled && !(await grant.enabled(gh))) continue;
    grantTypes.push(grant.grantType);
    if (grant.clientAuth !== 'assertion') for (const method of grant.clientAuth) tokenAuth.add(method);
  }
  return {
    issuer: base,
    authorization_endpoint: `${base}${AUTHORIZE_PATH}`,
    token_endpoint: `${base}${TOKEN_PATH}`,
    introspection_endpoint: `${base}${INTROSPECT_PATH}`,
    revocation_endpoint: `${base}${REVOKE_PATH}`,
    userinfo_endpoint: `${base}${USERINFO_PATH}`,
    end_session_endpoint: `${base}${END_SESSION_PATH}`,
    jwks_uri: `${base}${KEYS_PATH}`,
    scopes_supported: [...STANDARD_SCOPES],
    response_types_supported: [...RESPONSE_TYPES],
    response_modes_supported: [...RESPONSE_MODES],
    grant_types_supported: grantTypes,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [gh.config.signingAlg],
    token_endpoint_auth_methods_supported: inDiscoveryOrder(tokenAuth),
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    introspection_endpoint_auth_methods_supported: inDiscoveryOrder(INTROSPECTION_AUTH_METHODS),
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    revocation_endpoint_auth_methods_supported: inDiscoveryOrder(REVOCATION_AUTH_METHODS),
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    claims_supported: [
      'iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'c_hash', 'sid', 'act',
      'name', 'given_name', 'family_name', 'nickname', 'preferred_username', 'locale', 'gender', 'updated_at',
      'email', 'email_verified', 'phone_number', 'phone_number_verified', 'address',
    ],
    code_challenge_methods_supported: [...CODE_CHALLENGE_METHODS],
    authorization_response_iss_parameter_supported: true,
    ui_locales_supported: ['en', 'de'],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}
