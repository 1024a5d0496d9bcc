/**
 * The scope parameter (RFC 6749 §3.3), the scopes Gatehouse knows (seed §4.4, §5; SPEC §6) and the
 * audience they grant. An unknown scope is invalid_scope rather than silently dropped, so a client
 * learns of its typo at once.
 */
import { apiAudienceScope } from '../config/index.ts';
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

function projectScopePattern(serviceName: string): RegExp {
  return new RegExp(`^urn:${serviceName}:iam:org:project:id:([0-9A-Za-z_-]+):aud$`);
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
 * organization; for a user's sign-in, the application's). SPEC 10.6: a project audience scope is
 * granted only for a project of that organization, and every other project id, existing or not,
 * gets the same answer, so the error tells nobody which project ids exist (SPEC 10.15).
 */
export async function checkScopes(gh: Gatehouse, requested: string[], orgId: string): Promise<GrantedScopes> {
  const service = gh.config.serviceName;
  const apiScope = apiAudienceScope(service);
  const pattern = projectScopePattern(service);
  const projectScopes = new Map<string, string>(); // project id → the scope that names it
  let api = false;
  for (const scope of requested) {
    if ((STANDARD_SCOPES as readonly string[]).includes(scope)) continue;
    if (scope === apiScope) {
      api = true;
      continue;
    }
    const match = pattern.exec(scope);
    if (match) {
      projectScopes.set(match[1]!, scope);
      continue;
    }
    throw new InvalidScope(`scope ${scope} is not supported`);
  }
  const projectIds = [...projectScopes.keys()];
  if (projectIds.length > 0) {
    const owners = await Promise.all(projectIds.map((id) => gh.directory.projectOrgId(gh.instanceId, id)));
    const refused = projectIds.find((_id, i) => owners[i] !== orgId);
    if (refused !== undefined) throw new InvalidScope(`scope ${projectScopes.get(refused)!} names no project of the client's organization`);
  }
  return { scopes: requested, projectIds, api };
}

/** The audience of the Gatehouse API itself, added by the reserved scope: the issuer URL. */
export function apiAudience(gh: Gatehouse): string {
  return gh.config.externalUrl;
}

/** SPEC §6: the client id, the client's project, every project named by a scope, and the API when asked. */
export function audienceFor(gh: Gatehouse, clientId: string, clientProjectId: string | undefined, granted: GrantedScopes): string[] {
  const audience = [clientId];
  if (clientProjectId) audience.push(clientProjectId);
  audience.push(...granted.projectIds);
  if (granted.api) audience.push(apiAudience(gh));
  return [...new Set(audience)];
}
