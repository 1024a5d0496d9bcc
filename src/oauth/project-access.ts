/**
 * Who may sign in to a project's applications (docs/management-api.md#roles): with project access
 * required, only users of the project's organization; with authorization required, only users
 * holding at least one of the project's roles. Checked when a sign-in is about to be answered, so
 * that a session cookie from another application does not pass by it.
 */
import type { Gatehouse } from '../context.ts';
import type { Application, User } from '../domain/instance/directory.ts';

/** Why the user may not sign in to the application, or undefined when it may. */
export async function projectAccessRefusal(gh: Gatehouse, app: Application, user: User): Promise<string | undefined> {
  const project = await gh.directory.project(gh.instanceId, app.projectId);
  if (project === undefined) return undefined;
  if (project.projectAccessRequired && user.orgId !== project.orgId) return "the user's organization has no access to the application's project";
  if (project.authorizationRequired && !user.authorizations.some((a) => a.projectId === project.id && a.roles.length > 0)) {
    return 'the user has no role in the application\'s project';
  }
  return undefined;
}
