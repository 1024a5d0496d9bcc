/**
 * The scope parameter (RFC 6749 §3.3), the scopes Gatehouse knows
 * (docs/endpoints.md#authorization-endpoint) and the audience they grant (docs/decisions.md#audience).
 * An unknown scope is invalid_scope rather than silently dropped, so a client learns of its typo at
 * once.
 */
import { apiAudienceScope } from '../config/index.ts';
import { idpScopePattern } from '../domain/federation/idp-scope.ts';
import type { Gatehouse } from '../context.ts';
import { InvalidScope } from './errors.ts';

export const STANDARD_SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'] as const;

/** Space-delimited scope (RFC 6749 §3.3): NQCHAR tokens, duplicates collapsed, order kept. */
export function parseScope(value: string): string[] {
  const scopes = value.split(' ').filter((s) => s !== '');
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new InvalidScope('scope is malformed');
  }
  return [...new Set(scopes)];
}

/** Compiled once per service name (one per process), not on every token request. */
function once<T>(build: (serviceName: string) => T): (serviceName: string) => T {
  const built = new Map<string, T>();
  return (serviceName) => {
    let value = built.get(serviceName);
    if (value === undefined) {
      value = build(serviceName);
      built.set(serviceName, value);
    }
    return value;
  };
}

const projectScopePattern = once((serviceName) => new RegExp(`^urn:${serviceName}:iam:org:project:id:([0-9A-Za-z_-]+):aud$`));

/** Role scopes (docs/management-api.md#roles): `…:project:roles` asks for every role, `…:project:role:{key}` for that role. */
export interface RoleScopes {
  all: boolean;
  keys: string[];
}

const roleScopePatterns = once((serviceName): { all: string; one: RegExp } => ({
  all: `urn:${serviceName}:iam:org:project:roles`,
  one: new RegExp(`^urn:${serviceName}:iam:org:project:role:(.+)$`),
}));

/** The role scopes among `scopes` (of a request, or of a token already issued). */
export function roleScopesOf(serviceName: string, scopes: readonly string[]): RoleScopes {
  const patterns = roleScopePatterns(serviceName);
  const result: RoleScopes = { all: false, keys: [] };
  for (const scope of scopes) {
    if (scope === patterns.all) result.all = true;
    const match = patterns.one.exec(scope);
    if (match) result.keys.push(match[1]!);
  }
  return result;
}

export interface GrantedScopes {
  scopes: string[];
  /** Project ids named by project audience scopes. */
  projectIds: string[];
  /** Whether the reserved scope asks for the Gatehouse API audience. */
  api: boolean;
}

/**
 * Validates requested scopes for a client of organization `orgId` (for a machine user, its own
 * organization; for a user's sign-in, the application's). docs/security.md 10.6: a project audience
 * scope is granted only for a project of that organization, and every other project id, existing or
 * not, gets the same answer, so the error tells nobody which project ids exist. The same for the
 * provider scope: granted only for a provider the organization offers at sign-in (its active
 * providers, domain/instance/directory.ts `orgSettings`), one at most.
 */
export async function checkScopes(gh: Gatehouse, requested: string[], orgId: string): Promise<GrantedScopes> {
  const service = gh.config.serviceName;
  const apiScope = apiAudienceScope(service);
  const pattern = projectScopePattern(service);
  const roles = roleScopePatterns(service);
  const projectScopes = new Map<string, string>(); // project id → the scope that names it
  const idpScope = idpScopePattern(service);
  const idpScopes: string[] = [];
  let api = false;
  for (const scope of requested) {
    if ((STANDARD_SCOPES as readonly string[]).includes(scope)) continue;
    if (scope === roles.all || roles.one.test(scope)) continue;
    if (scope === apiScope) {
      api = true;
      continue;
    }
    const match = pattern.exec(scope);
    if (match) {
      projectScopes.set(match[1]!, scope);
      continue;
    }
    if (idpScope.test(scope)) {
      idpScopes.push(scope);
      continue;
    }
    throw new InvalidScope(`scope ${scope} is not supported`);
  }
  const projectIds = [...projectScopes.keys()];
  if (projectIds.length > 0) {
    const projects = await Promise.all(projectIds.map((id) => gh.directory.project(gh.instanceId, id)));
    const refused = projectIds.find((_id, i) => projects[i]?.orgId !== orgId);
    if (refused !== undefined) throw new InvalidScope(`scope ${projectScopes.get(refused)!} names no project of the client's organization`);
  }
  if (idpScopes.length > 1) throw new InvalidScope('at most one identity provider scope');
  if (idpScopes.length === 1) {
    const idpId = idpScope.exec(idpScopes[0]!)![1]!;
    const { idps } = await gh.directory.orgSettings(gh.instanceId, orgId);
    if (!idps.some((idp) => idp.id === idpId)) throw new InvalidScope(`scope ${idpScopes[0]!} names no identity provider the client's organization offers`);
  }
  return { scopes: requested, projectIds, api };
}

/** The audience of the Gatehouse API itself, added by the reserved scope: the issuer URL. */
export function apiAudience(gh: Gatehouse): string {
  return gh.config.externalUrl;
}

/** docs/decisions.md#audience: the client id, the client's project, every project named by a scope, and the API when asked. */
export function audienceFor(gh: Gatehouse, clientId: string, clientProjectId: string | undefined, granted: GrantedScopes): string[] {
  const audience = [clientId];
  if (clientProjectId) audience.push(clientProjectId);
  audience.push(...granted.projectIds);
  if (granted.api) audience.push(apiAudience(gh));
  return [...new Set(audience)];
}
