/**
 * The settings of an application as ZITADEL's AppService carries them, turned into Gatehouse's
 * columns (docs/management-api.md#the-identity-model; the enums one to one, app/enums.ts) and checked
 * by the rules of domain/applications.ts. Settings Gatehouse cannot honour are refused with
 * InvalidArgument naming the field, never dropped: the device code grant, additional origins,
 * back-channel logout, a clock skew other than zero.
 */
import type { Duration } from '@bufbuild/protobuf/wkt';
import type {
  CreateAPIApplicationRequest,
  CreateOIDCApplicationRequest,
  UpdateAPIApplicationConfigurationRequest,
  UpdateOIDCApplicationConfigurationRequest,
} from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import { OIDCGrantType, OIDCResponseType, OIDCVersion } from '../../../gen/zitadel/app/v2beta/oidc_pb.js';
import type { AppSettings } from '../../domain/projects/app-admin.ts';
import { defaultFlows, oidcSettingsProblems } from '../../domain/projects/applications.ts';
import type { AppGrantType } from '../../oidc/grant-types.ts';
import type { AppRow } from '../../store/schema.ts';
import { invalidArgument } from '../management/lists.ts';
import { API_AUTH_METHODS, APP_TYPES, AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES, TOKEN_TYPES, type EnumMap } from './enums.ts';
import type { ResponseType } from '../../oidc/vocabulary.ts';

export type { AppSettings };

/** At most this many URIs in one list, each at most this long: bounds what one request can store. */
const MAX_URIS = 100;
const MAX_URI_LENGTH = 2000;

function readUris(uris: readonly string[], field: string): string[] {
  if (uris.length > MAX_URIS) throw invalidArgument(field, `must name at most ${MAX_URIS} URIs`);
  for (const [index, uri] of uris.entries()) {
    if (uri.length > MAX_URI_LENGTH) throw invalidArgument(`${field}[${index}]`, `must be at most ${MAX_URI_LENGTH} characters`);
  }
  return [...uris];
}

function readList<E extends number, V>(values: readonly E[], map: EnumMap<E, V>, field: string, refuse?: (value: E) => string | undefined): V[] {
  const read = values.map((value, index) => {
    const refused = refuse?.(value);
    if (refused !== undefined) throw invalidArgument(`${field}[${index}]`, refused);
    return map.read(value, `${field}[${index}]`);
  });
  return [...new Set(read)];
}

const readResponseTypes = (values: readonly OIDCResponseType[]) =>
  readList(values, RESPONSE_TYPES, 'responseTypes', (value) => (value === OIDCResponseType.OIDC_RESPONSE_TYPE_UNSPECIFIED ? 'must be specified' : undefined));
const readGrantTypes = (values: readonly OIDCGrantType[]) =>
  readList(values, GRANT_TYPES, 'grantTypes', (value) =>
    value === OIDCGrantType.OIDC_GRANT_TYPE_DEVICE_CODE ? 'the device authorization grant is not supported by Gatehouse' : undefined,
  );

/** The settings Gatehouse has no counterpart for: accepted only with the value that asks for nothing. */
interface Unsupported {
  version?: OIDCVersion | undefined;
  clockSkew?: Duration | undefined;
  additionalOrigins: readonly string[];
  backChannelLogoutUri?: string | undefined;
}

function refuseUnsupported(request: Unsupported): void {
  if (request.version !== undefined && request.version !== OIDCVersion.OIDC_VERSION_1_0) throw invalidArgument('version', `unknown value ${request.version}`);
  const skew = request.clockSkew;
  if (skew !== undefined && (skew.seconds !== 0n || skew.nanos !== 0)) {
    throw invalidArgument('clockSkew', 'must be zero: Gatehouse does not shift the times of its tokens');
  }
  if (request.additionalOrigins.length > 0) {
    throw invalidArgument('additionalOrigins', 'is not supported: Gatehouse allows the origins of the redirect URIs');
  }
  if (request.backChannelLogoutUri !== undefined && request.backChannelLogoutUri !== '') {
    throw invalidArgument('backChannelLogoutUri', 'is not supported: Gatehouse has no back-channel logout');
  }
}

/** InvalidArgument for the first problem of complete OIDC settings (domain/applications.ts). */
function checkOidc(settings: AppSettings): AppSettings {
  const [problem] = oidcSettingsProblems({
    redirectUris: settings.redirect_uris,
    postLogoutRedirectUris: settings.post_logout_redirect_uris,
    responseTypes: settings.response_types,
    grantTypes: settings.grant_types,
    authMethod: settings.auth_method,
    appType: settings.oidc_app_type,
    devMode: settings.dev_mode,
  });
  if (problem !== undefined) throw invalidArgument(problem.field, problem.message);
  return settings;
}

/**
 * A new OIDC application. Empty response or grant types take their defaults as in the bootstrap file
 * (domain/applications.ts `defaultFlows`): a code client unless told otherwise.
 */
export function oidcSettingsOf(request: CreateOIDCApplicationRequest): AppSettings {
  refuseUnsupported(request);
  const { responseTypes, grantTypes } = defaultFlows(
    request.responseTypes.length > 0 ? readResponseTypes(request.responseTypes) : undefined,
    request.grantTypes.length > 0 ? readGrantTypes(request.grantTypes) : undefined,
  );
  return checkOidc({
    kind: 'oidc',
    auth_method: AUTH_METHODS.read(request.authMethodType, 'authMethodType'),
    redirect_uris: readUris(request.redirectUris, 'redirectUris'),
    post_logout_redirect_uris: readUris(request.postLogoutRedirectUris, 'postLogoutRedirectUris'),
    response_types: responseTypes,
    grant_types: grantTypes,
    oidc_app_type: APP_TYPES.read(request.appType, 'appType'),
    access_token_type: TOKEN_TYPES.read(request.accessTokenType, 'accessTokenType'),
    id_token_userinfo_assertion: request.idTokenUserinfoAssertion,
    id_token_role_assertion: request.idTokenRoleAssertion,
    access_token_role_assertion: request.accessTokenRoleAssertion,
    dev_mode: request.devMode,
  });
}

/** An API application: a resource server, which may only introspect (docs/management-api.md#the-identity-model). */
export function apiSettingsOf(request: CreateAPIApplicationRequest | UpdateAPIApplicationConfigurationRequest): AppSettings {
  return {
    kind: 'api',
    auth_method: API_AUTH_METHODS.read(request.authMethodType, 'authMethodType'),
    redirect_uris: [],
    post_logout_redirect_uris: [],
    response_types: [],
    grant_types: [],
    oidc_app_type: 'web',
    access_token_type: 'opaque',
    id_token_userinfo_assertion: false,
    id_token_role_assertion: false,
    access_token_role_assertion: false,
    dev_mode: false,
  };
}

/** The settings an application has now. */
export function settingsOfRow(row: AppRow): AppSettings {
  return {
    kind: row.kind,
    auth_method: row.auth_method,
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    response_types: row.response_types as ResponseType[],
    grant_types: row.grant_types as AppGrantType[],
    oidc_app_type: row.oidc_app_type,
    access_token_type: row.access_token_type,
    id_token_userinfo_assertion: row.id_token_userinfo_assertion,
    id_token_role_assertion: row.id_token_role_assertion,
    access_token_role_assertion: row.access_token_role_assertion,
    dev_mode: row.dev_mode,
  };
}

/**
 * An OIDC application's settings after an update (docs/management-api.md#services-and-calls): a field
 * left out, or an empty list, leaves its setting as it is; the result must satisfy every rule as a
 * new application would.
 */
export function updatedOidcSettings(current: AppSettings, request: UpdateOIDCApplicationConfigurationRequest): AppSettings {
  refuseUnsupported(request);
  const list = <T>(given: readonly unknown[], read: () => T[], kept: T[]): T[] => (given.length > 0 ? read() : kept);
  return checkOidc({
    ...current,
    redirect_uris: list(request.redirectUris, () => readUris(request.redirectUris, 'redirectUris'), current.redirect_uris),
    post_logout_redirect_uris: list(
      request.postLogoutRedirectUris,
      () => readUris(request.postLogoutRedirectUris, 'postLogoutRedirectUris'),
      current.post_logout_redirect_uris,
    ),
    response_types: list(request.responseTypes, () => readResponseTypes(request.responseTypes), current.response_types),
    grant_types: list(request.grantTypes, () => readGrantTypes(request.grantTypes), current.grant_types),
    auth_method: request.authMethodType === undefined ? current.auth_method : AUTH_METHODS.read(request.authMethodType, 'authMethodType'),
    oidc_app_type: request.appType === undefined ? current.oidc_app_type : APP_TYPES.read(request.appType, 'appType'),
    access_token_type: request.accessTokenType === undefined ? current.access_token_type : TOKEN_TYPES.read(request.accessTokenType, 'accessTokenType'),
    id_token_userinfo_assertion: request.idTokenUserinfoAssertion ?? current.id_token_userinfo_assertion,
    id_token_role_assertion: request.idTokenRoleAssertion ?? current.id_token_role_assertion,
    access_token_role_assertion: request.accessTokenRoleAssertion ?? current.access_token_role_assertion,
    dev_mode: request.devMode ?? current.dev_mode,
  });
}
