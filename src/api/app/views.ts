/** Applications and their keys as ZITADEL's AppService shows them. */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { APIConfigSchema } from '../../../gen/zitadel/app/v2beta/api_pb.js';
import { AppState, type ApplicationKeySchema, type ApplicationSchema } from '../../../gen/zitadel/app/v2beta/app_pb.js';
import { APIAuthMethodType } from '../../../gen/zitadel/app/v2beta/api_pb.js';
import { OIDCVersion, type OIDCConfigSchema } from '../../../gen/zitadel/app/v2beta/oidc_pb.js';
import type { AppGrantType } from '../../oidc/grant-types.ts';
import { httpOrigin } from '../../domain/kernel/origin.ts';
import type { AppKeyRow } from '../../store/apps.ts';
import type { AppRow } from '../../store/schema.ts';
import { API_AUTH_METHODS, APP_TYPES, AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES, TOKEN_TYPES } from './enums.ts';
import type { ResponseType } from '../../oidc/vocabulary.ts';

/** Values ZITADEL has a name for; Gatehouse's others (client_credentials from the bootstrap file) are left out. */
function named<E extends number>(values: readonly (E | undefined)[]): E[] {
  return values.filter((value): value is E => value !== undefined);
}

/** What a browser may call from: the origins of the redirect and post-logout URIs (server/cors.ts). */
function allowedOrigins(row: AppRow): string[] {
  const origins = [...row.redirect_uris, ...row.post_logout_redirect_uris].map(httpOrigin).filter((origin) => origin !== undefined);
  return [...new Set(origins)];
}

function oidcConfig(row: AppRow): MessageInitShape<typeof OIDCConfigSchema> {
  return {
    redirectUris: row.redirect_uris,
    responseTypes: named(row.response_types.map((type) => RESPONSE_TYPES.write(type as ResponseType))),
    grantTypes: named(row.grant_types.map((grant) => GRANT_TYPES.write(grant as AppGrantType))),
    appType: APP_TYPES.write(row.oidc_app_type),
    clientId: row.client_id,
    authMethodType: AUTH_METHODS.write(row.auth_method),
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    version: OIDCVersion.OIDC_VERSION_1_0,
    devMode: row.dev_mode,
    accessTokenType: TOKEN_TYPES.write(row.access_token_type),
    accessTokenRoleAssertion: row.access_token_role_assertion,
    idTokenRoleAssertion: row.id_token_role_assertion,
    idTokenUserinfoAssertion: row.id_token_userinfo_assertion,
    clockSkew: { seconds: 0n, nanos: 0 },
    additionalOrigins: [],
    allowedOrigins: allowedOrigins(row),
    // Gatehouse shows no success page: it always redirects straight to the application.
    skipNativeAppSuccessPage: true,
    backChannelLogoutUri: '',
  };
}

function apiConfig(row: AppRow): MessageInitShape<typeof APIConfigSchema> {
  // The bootstrap file and the API give API applications only the two methods of introspection.
  return { clientId: row.client_id, authMethodType: API_AUTH_METHODS.write(row.auth_method) ?? APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC };
}

export function applicationOf(row: AppRow): MessageInitShape<typeof ApplicationSchema> {
  return {
    id: row.id,
    creationDate: timestampFromDate(row.created_at),
    changeDate: timestampFromDate(row.changed_at),
    // Gatehouse has no deactivated applications: an application exists and works, or is deleted.
    state: AppState.ACTIVE,
    name: row.name,
    config: row.kind === 'api' ? { case: 'apiConfig', value: apiConfig(row) } : { case: 'oidcConfig', value: oidcConfig(row) },
  };
}

export function applicationKeyOf(row: AppKeyRow): MessageInitShape<typeof ApplicationKeySchema> {
  return {
    id: row.id,
    applicationId: row.app_id,
    projectId: row.project_id,
    creationDate: timestampFromDate(row.created_at),
    organizationId: row.org_id,
    ...(row.expires_at === null ? {} : { expirationDate: timestampFromDate(row.expires_at) }),
  };
}
