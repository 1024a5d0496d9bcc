/**
 * Validation rules for projects, applications (OIDC clients and API resource servers) and public
 * keys: enums, redirect URIs, PEM keys, and the combinations an authorization server must refuse.
 * The rules of an application itself (redirect URIs, flows, secrets) are domain/applications.ts,
 * which the management API applies too.
 */
import { createPublicKey } from 'node:crypto';
import { APP_TYPES, GRANT_TYPES, OIDC_APP_TYPES, type AppSpec, type AuthorizationSpec, type GrantType, type ProjectRoleSpec, type ProjectSpec, type PublicKeySpec } from './document.ts';
import { roleKeyProblem } from '../domain/kernel/names.ts';
import { defaultFlows, flowProblems, isApiAppAuthMethod, needsRedirectUris, usesSecret } from '../domain/projects/applications.ts';
import { redirectUriProblem } from '../domain/projects/redirect-uris.ts';
import { Fields, readEnum, readString, type Issues, type StringRule } from './validator.ts';
import { ACCESS_TOKEN_TYPES, AUTH_METHODS, RESPONSE_TYPES, type ResponseType } from '../oidc/vocabulary.ts';

export const ID_RULE = {
  check: (value: string) => (/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(value) ? undefined : 'must be letters, digits, "_" or "-" (at most 128)'),
};
export const NAME_RULE = {
  check: (value: string) =>
    value !== value.trim() ? 'must not start or end with spaces' : value.length > 200 ? 'must be at most 200 characters' : undefined,
};
const CLIENT_ID_RULE = {
  check: (value: string) => (/^[\x21-\x7e]{1,200}$/.test(value) ? undefined : 'must be printable ASCII without spaces (at most 200)'),
};

function readExpiry(fields: Fields): Date | null {
  const raw = fields.string('expiresAt', {
    check: (value) => (/^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value)) ? undefined : 'must be an RFC 3339 time like 2030-01-01T00:00:00Z'),
  });
  return raw === undefined ? null : new Date(raw);
}

/** A PEM public key that node:crypto can parse, normalized to SPKI PEM. */
export function readPublicKey(issues: Issues, path: string, value: unknown): PublicKeySpec | undefined {
  const fields = Fields.of(issues, path, value, ['keyId', 'pem', 'expiresAt']);
  if (!fields) return undefined;
  const keyId = fields.requiredString('keyId', ID_RULE);
  const expiresAt = readExpiry(fields);
  const pem = fields.requiredString('pem', {
    check: (text) => {
      if (text.includes('PRIVATE KEY')) return 'is a private key; give the public key (-----BEGIN PUBLIC KEY-----)';
      try {
        const key = createPublicKey(text);
        const type = key.asymmetricKeyType;
        if (type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return 'is an RSA key shorter than 2048 bits';
        if (type !== 'rsa' && type !== 'ec' && type !== 'ed25519') return `is a ${type ?? 'unknown'} key; use RSA, EC or Ed25519`;
        return undefined;
      } catch {
        return 'is not a valid PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)';
      }
    },
  });
  if (keyId === undefined || pem === undefined) return undefined;
  const normalized = createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  return { path, keyId, pem: normalized, expiresAt };
}

function checkFlows(fields: Fields, app: Pick<AppSpec, 'responseTypes' | 'grantTypes'> & { authMethod: AppSpec['authMethod'] | undefined }): void {
  const { issues } = fields;
  for (const problem of flowProblems(app)) issues.add(`${fields.at(problem.list)}[${problem.index}]`, problem.message);
  if (needsRedirectUris(app.responseTypes)) {
    const raw = fields.raw('redirectUris');
    const flows = app.responseTypes.join(', ');
    if (raw === undefined) issues.add(fields.at('redirectUris'), `is required for response types ${flows}`);
    else if (Array.isArray(raw) && raw.length === 0) issues.add(fields.at('redirectUris'), `must name at least one URI for response types ${flows}`);
  }
}

const APP_KEYS = [
  'id', 'name', 'clientId', 'clientSecret', 'type', 'appType', 'authMethod', 'redirectUris', 'postLogoutRedirectUris',
  'responseTypes', 'grantTypes', 'accessTokenType', 'idTokenUserinfoAssertion', 'idTokenRoleAssertion', 'accessTokenRoleAssertion',
  'devMode', 'publicKeys',
];
/** What an API application (a resource server, which may only introspect) must not have. */
const OIDC_ONLY_KEYS = [
  'appType', 'redirectUris', 'postLogoutRedirectUris', 'responseTypes', 'grantTypes', 'accessTokenType', 'idTokenUserinfoAssertion',
  'idTokenRoleAssertion', 'accessTokenRoleAssertion', 'devMode',
];

export function readApp(issues: Issues, path: string, value: unknown): AppSpec | undefined {
  const fields = Fields.of(issues, path, value, APP_KEYS);
  if (!fields) return undefined;
  const id = fields.string('id', ID_RULE);
  const name = fields.requiredString('name', NAME_RULE);
  const clientId = fields.requiredString('clientId', CLIENT_ID_RULE);
  const type = fields.enumValue('type', APP_TYPES) ?? 'oidc';
  const authMethod = fields.requiredEnum('authMethod', AUTH_METHODS);
  const appType = fields.enumValue('appType', OIDC_APP_TYPES) ?? 'web';
  const devMode = fields.boolean('devMode') ?? false;
  const uris = (key: string) => fields.stringList(key, (uri, at) => readString(issues, at, uri, { check: (text) => redirectUriProblem(text, { appType, devMode }) })) ?? [];
  const redirectUris = uris('redirectUris');
  const postLogoutRedirectUris = uris('postLogoutRedirectUris');
  const issuesBeforeFlows = issues.list.length;
  const givenResponses = fields.stringList('responseTypes', (item, at) => readEnum(issues, at, item, RESPONSE_TYPES)) as ResponseType[] | undefined;
  const givenGrants = fields.stringList('grantTypes', (item, at) => readEnum(issues, at, item, GRANT_TYPES)) as GrantType[] | undefined;
  const flowsReadable = issues.list.length === issuesBeforeFlows;
  const accessTokenType = fields.enumValue('accessTokenType', ACCESS_TOKEN_TYPES) ?? 'opaque';
  const idTokenUserinfoAssertion = fields.boolean('idTokenUserinfoAssertion') ?? false;
  const idTokenRoleAssertion = fields.boolean('idTokenRoleAssertion') ?? false;
  const accessTokenRoleAssertion = fields.boolean('accessTokenRoleAssertion') ?? false;
  const clientSecret = fields.string('clientSecret');
  const publicKeys = fields.list('publicKeys', (item, at) => readPublicKey(issues, at, item));

  if (authMethod !== undefined && usesSecret(authMethod)) {
    if (!fields.has('clientSecret')) issues.add(fields.at('clientSecret'), `is required for authMethod ${authMethod}`);
  } else if (authMethod !== undefined && fields.has('clientSecret')) {
    issues.add(fields.at('clientSecret'), `is not allowed for authMethod ${authMethod}${authMethod === 'none' ? ' (a public client has no secret)' : ''}`);
  }
  if (authMethod === 'private_key_jwt') {
    const rawKeys = fields.raw('publicKeys');
    if (rawKeys === undefined || (Array.isArray(rawKeys) && rawKeys.length === 0)) {
      issues.add(fields.at('publicKeys'), 'is required for authMethod private_key_jwt (at least one key)');
    }
  } else if (authMethod !== undefined && fields.has('publicKeys')) {
    issues.add(fields.at('publicKeys'), 'is only allowed with authMethod private_key_jwt');
  }

  let responseTypes: ResponseType[] = [];
  let grantTypes: GrantType[] = [];
  if (type === 'api') {
    for (const key of OIDC_ONLY_KEYS) if (fields.has(key)) issues.add(fields.at(key), 'is not allowed for type: api (an API application may only introspect)');
    if (authMethod !== undefined && !isApiAppAuthMethod(authMethod)) {
      issues.add(fields.at('authMethod'), 'must be client_secret_basic or private_key_jwt for type: api (the methods of introspection)');
    }
  } else {
    // Defaults follow each other: a code client unless the file says otherwise.
    ({ responseTypes, grantTypes } = defaultFlows(givenResponses, givenGrants));
    if (flowsReadable) checkFlows(fields, { responseTypes, grantTypes, authMethod });
  }
  if (name === undefined || clientId === undefined || authMethod === undefined) return undefined;
  return {
    path, id, name, clientId, type, appType, clientSecret, authMethod, redirectUris, postLogoutRedirectUris, responseTypes, grantTypes,
    accessTokenType, idTokenUserinfoAssertion, idTokenRoleAssertion, accessTokenRoleAssertion, devMode, publicKeys: publicKeys ?? [],
  };
}

/** A role key (domain/names.ts: scope characters only). */
export const ROLE_KEY_RULE: StringRule = { check: roleKeyProblem };

function readProjectRole(issues: Issues, path: string, value: unknown): ProjectRoleSpec | undefined {
  const fields = Fields.of(issues, path, value, ['key', 'displayName', 'group']);
  if (!fields) return undefined;
  const key = fields.requiredString('key', ROLE_KEY_RULE);
  const displayName = fields.string('displayName', NAME_RULE) ?? '';
  const group = fields.string('group', NAME_RULE) ?? '';
  return key === undefined ? undefined : { path, key, displayName, group };
}

export function readProject(issues: Issues, path: string, value: unknown): ProjectSpec | undefined {
  const fields = Fields.of(issues, path, value, ['id', 'name', 'roles', 'roleAssertion', 'authorizationRequired', 'projectAccessRequired', 'apps']);
  if (!fields) return undefined;
  const id = fields.string('id', ID_RULE);
  const name = fields.requiredString('name', NAME_RULE);
  const roles = fields.list('roles', (item, at) => readProjectRole(issues, at, item)) ?? [];
  const seen = new Set<string>();
  for (const role of roles) {
    if (seen.has(role.key)) issues.add(`${role.path}.key`, `role "${role.key}" is defined twice in this project`);
    seen.add(role.key);
  }
  const roleAssertion = fields.boolean('roleAssertion') ?? false;
  const authorizationRequired = fields.boolean('authorizationRequired') ?? false;
  const projectAccessRequired = fields.boolean('projectAccessRequired') ?? false;
  const apps = fields.list('apps', (item, at) => readApp(issues, at, item)) ?? [];
  return name === undefined ? undefined : { path, id, name, roles, roleAssertion, authorizationRequired, projectAccessRequired, apps };
}

/** `{project, roles}`: roles of a project of the user's organization (checked when applied). */
export function readAuthorization(issues: Issues, path: string, value: unknown): AuthorizationSpec | undefined {
  const fields = Fields.of(issues, path, value, ['project', 'roles']);
  if (!fields) return undefined;
  const project = fields.requiredString('project', NAME_RULE);
  const roles = fields.stringList('roles', (item, at) => readString(issues, at, item, ROLE_KEY_RULE));
  if (roles === undefined && !fields.has('roles')) issues.add(fields.at('roles'), 'is required');
  return project === undefined || roles === undefined ? undefined : { path, project, roles: [...new Set(roles)] };
}
