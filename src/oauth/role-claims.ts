/**
 * Role claims (docs/management-api.md#roles), as ZITADEL names them:
 * `urn:<service>:iam:org:project:roles` holds the user's roles in the requesting client's project,
 * `urn:<service>:iam:org:project:{projectId}:roles` those in each project of the token (the
 * client's, and those named by audience scopes, which are projects of the client's organization: a
 * project id of another organization never counts); each is `{roleKey: {orgId: primaryDomain}}` and
 * is left out when the user has no such role.
 *
 * When they are asserted: in userinfo and introspection when the client's project has role assertion
 * or the token's scopes ask for roles (`…:project:roles`, or `…:project:role:{key}` for that role
 * only); in the ID token and in JWT access tokens under the same condition, and only when the
 * application also has ID token / access token role assertion.
 */
import type { Gatehouse } from '../context.ts';
import type { User } from '../domain/instance/directory.ts';
import { roleScopesOf } from './scopes.ts';
import { clientOrgOf } from './token-audience.ts';

export type RoleClaimTarget = 'userinfo' | 'id_token' | 'access_token';

export interface RoleClaimRequest {
  user: User;
  /** The token's scopes. */
  scopes: readonly string[];
  /** The project of the client the token was issued to, if the client is an application. */
  clientProjectId: string | undefined;
  /** The token's audience: the project ids in it get their own claim. */
  audience: readonly string[];
  /**
   * The organization of the token's client: a project id of the audience counts only for a project
   * of this organization (the client's own project always does).
   */
  clientOrgId: string | undefined;
  /** For ID and access tokens: whether the application asserts roles in that token. */
  appAsserts?: boolean;
}

export async function roleClaims(gh: Gatehouse, target: RoleClaimTarget, request: RoleClaimRequest): Promise<Record<string, unknown>> {
  const { user } = request;
  if (user.authorizations.length === 0) return {};
  if (target !== 'userinfo' && request.appAsserts !== true) return {};
  const asked = roleScopesOf(gh.config.serviceName, request.scopes);
  const filter = asked.all || asked.keys.length === 0 ? undefined : new Set(asked.keys);
  if (!asked.all && filter === undefined) {
    const project = request.clientProjectId === undefined ? undefined : await gh.directory.project(gh.instanceId, request.clientProjectId);
    if (project?.roleAssertion !== true) return {};
  }
  const prefix = `urn:${gh.config.serviceName}:iam:org:project`;
  const claims: Record<string, unknown> = {};
  const projectIds = new Set([...(request.clientProjectId === undefined ? [] : [request.clientProjectId]), ...request.audience]);
  for (const authorization of user.authorizations) {
    if (!projectIds.has(authorization.projectId)) continue;
    if (authorization.projectId !== request.clientProjectId && authorization.orgId !== request.clientOrgId) continue;
    const roles = authorization.roles.filter((role) => filter === undefined || filter.has(role));
    if (roles.length === 0) continue;
    const value = Object.fromEntries(roles.map((role) => [role, { [authorization.orgId]: authorization.orgDomain }]));
    claims[`${prefix}:${authorization.projectId}:roles`] = value;
    if (authorization.projectId === request.clientProjectId) claims[`${prefix}:roles`] = value;
  }
  return claims;
}

/** Userinfo and introspection: the role claims of an access token's user, for the token's client. */
export async function tokenRoleClaims(
  gh: Gatehouse,
  user: User,
  token: { clientId: string; scopes: readonly string[]; audience: readonly string[] },
): Promise<Record<string, unknown>> {
  if (user.authorizations.length === 0) return {};
  const app = await gh.directory.application(gh.instanceId, token.clientId);
  const clientOrgId = app?.orgId ?? (await clientOrgOf(gh, token.clientId));
  return roleClaims(gh, 'userinfo', { user, scopes: token.scopes, clientProjectId: app?.projectId, audience: token.audience, clientOrgId });
}
