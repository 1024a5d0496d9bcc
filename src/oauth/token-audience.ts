/**
 * Whether a token is meant for an application: its audience names the application's client id, or
 * the application's project id while the token's own client belongs to that project's organization.
 *
 * Project ids in a token's audience come from the client's own project and from project audience
 * scopes, which are only granted for projects of the client's organization. Checking the client's
 * organization again where the audience is read keeps a project id from counting on the strength of
 * the string alone (defence in depth beside the namespace of identifiers, domain/identifiers.ts).
 */
import type { Gatehouse } from '../context.ts';

/** The organization of a token's client: an application, or a machine user (client_credentials by name, the JWT profile grant by id). */
export function clientOrgOf(gh: Gatehouse, clientId: string): Promise<string | undefined> {
  return gh.directory.clientOrg(gh.instanceId, clientId);
}

/** Whether the token is meant for `app`: at once when the client id decides, after a cached lookup for a project id. */
export function meantFor(
  gh: Gatehouse,
  token: { clientId: string; audience: readonly string[] },
  app: { clientId: string; projectId: string; orgId: string },
): boolean | Promise<boolean> {
  if (token.audience.includes(app.clientId)) return true;
  if (!token.audience.includes(app.projectId)) return false;
  return clientOrgOf(gh, token.clientId).then((org) => org === app.orgId);
}
