/**
 * The rules of an application (docs/decisions.md#applications), in one place for the bootstrap file
 * (bootstrap/rules-apps.ts) and the management API (api/app/): which redirect URIs are acceptable
 * (domain/redirect-uris.ts), which response and grant types go together, which authentication
 * methods carry a secret, and how generated client ids and secrets look.
 */
import type { OidcAppType } from '../../store/schema.ts';
import { AUTHORIZATION_CODE, CLIENT_CREDENTIALS, IMPLICIT, type AppGrantType } from '../../oidc/grant-types.ts';
import { randomToken } from '../kernel/ids.ts';
import { redirectUriProblem } from './redirect-uris.ts';
import { INTROSPECTION_AUTH_METHODS, type AuthMethod, type ResponseType } from '../../oidc/vocabulary.ts';


/** The methods an API application (a resource server) authenticates with at introspection. */
export const API_APP_AUTH_METHODS = INTROSPECTION_AUTH_METHODS;

/** The grant type each response type needs (OIDC Core §3: code flow, implicit flow). */
export function grantFor(responseType: ResponseType): AppGrantType {
  return responseType === 'code' ? AUTHORIZATION_CODE : IMPLICIT;
}

/**
 * The flows of an application when some are left out: a code client unless told otherwise; grant
 * types follow the response types, and response types the grant types.
 */
export function defaultFlows(
  responseTypes: readonly ResponseType[] | undefined,
  grantTypes: readonly AppGrantType[] | undefined,
): { responseTypes: ResponseType[]; grantTypes: AppGrantType[] } {
  const responses = responseTypes
    ? [...responseTypes]
    : grantTypes
      ? grantTypes.filter((grant) => grant === AUTHORIZATION_CODE).map(() => 'code' as const)
      : ['code' as const];
  return { responseTypes: responses, grantTypes: grantTypes ? [...grantTypes] : [...new Set(responses.map(grantFor))] };
}

export interface FlowProblem {
  /** The list the problem is in, and the position of the entry. */
  list: 'responseTypes' | 'grantTypes';
  index: number;
  message: string;
}

/** Response and grant types that do not go together, or a grant the authentication method cannot use. */
export function flowProblems(app: {
  responseTypes: readonly ResponseType[];
  grantTypes: readonly AppGrantType[];
  authMethod: AuthMethod | undefined;
}): FlowProblem[] {
  const problems: FlowProblem[] = [];
  for (const [index, responseType] of app.responseTypes.entries()) {
    const grant = grantFor(responseType);
    if (!app.grantTypes.includes(grant)) problems.push({ list: 'responseTypes', index, message: `response type "${responseType}" needs grant type "${grant}" in grantTypes` });
  }
  for (const [index, grant] of app.grantTypes.entries()) {
    const at = (message: string) => problems.push({ list: 'grantTypes', index, message });
    if (grant === AUTHORIZATION_CODE && !app.responseTypes.includes('code')) at('grant type "authorization_code" needs response type "code" in responseTypes');
    if (grant === IMPLICIT && !app.responseTypes.some((type) => type !== 'code')) at('grant type "implicit" needs response type "id_token" or "id_token token"');
    if (grant === CLIENT_CREDENTIALS && app.authMethod !== undefined && !usesSecret(app.authMethod)) {
      at('grant type "client_credentials" needs authMethod client_secret_basic or client_secret_post');
    }
  }
  return problems;
}

/** Every flow of the authorization endpoint redirects, so any response type needs a redirect URI. */
export function needsRedirectUris(responseTypes: readonly ResponseType[]): boolean {
  return responseTypes.length > 0;
}

/** The methods that authenticate with a client secret; `none` and `private_key_jwt` have none. */
export function usesSecret(method: AuthMethod): boolean {
  return method === 'client_secret_basic' || method === 'client_secret_post';
}

export function isApiAppAuthMethod(method: AuthMethod): method is (typeof API_APP_AUTH_METHODS)[number] {
  return (API_APP_AUTH_METHODS as readonly AuthMethod[]).includes(method);
}

/** A complete OIDC application's settings, as the management API checks them after a create or an update. */
export interface OidcAppSettings {
  redirectUris: readonly string[];
  postLogoutRedirectUris: readonly string[];
  responseTypes: readonly ResponseType[];
  grantTypes: readonly AppGrantType[];
  authMethod: AuthMethod;
  /** Native applications may register private-use schemes and loopback URIs of any port. */
  appType: OidcAppType;
  devMode: boolean;
}

export interface SettingProblem {
  /** The setting, with the position in a list: `redirectUris[0]`. */
  field: string;
  message: string;
}

/** What is wrong with an OIDC application's settings: every rule above, each problem naming its field. */
export function oidcSettingsProblems(settings: OidcAppSettings): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const list of ['redirectUris', 'postLogoutRedirectUris'] as const) {
    for (const [index, uri] of settings[list].entries()) {
      const problem = redirectUriProblem(uri, settings);
      if (problem !== undefined) problems.push({ field: `${list}[${index}]`, message: problem });
    }
  }
  for (const flow of flowProblems(settings)) problems.push({ field: `${flow.list}[${flow.index}]`, message: flow.message });
  if (needsRedirectUris(settings.responseTypes) && settings.redirectUris.length === 0) {
    problems.push({ field: 'redirectUris', message: `must name at least one URI for response types ${settings.responseTypes.join(', ')}` });
  }
  return problems;
}

/**
 * A generated client id: the application id and the project's name, as ZITADEL forms them
 * (`{appId}@{project}`), the name lower-cased with runs of other characters than a–z and 0–9 turned
 * into "-"; the application id alone when nothing of the name is left. Unique because the
 * application id is.
 */
export function clientIdFor(appId: string, projectName: string): string {
  const project = projectName.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100);
  return project === '' ? appId : `${appId}@${project}`;
}

/** A new client secret: 32 random bytes, URL-safe. Returned once; only its hash is stored. */
export function newClientSecret(): string {
  return randomToken(32);
}
