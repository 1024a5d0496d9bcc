/**
 * Authorizations the file gives (SPEC §12): for each user and named project, the file owns the set
 * of roles; authorizations for projects the file does not name (made through the API) are kept.
 * Applied after the organization's projects, whose roles they name.
 */
import { newId } from '../domain/kernel/ids.ts';
import { findUserProjectAuthorization, insertAuthorization, setAuthorizationRoles } from '../store/authorizations.ts';
import { undefinedRoleKeys } from '../store/project-roles.ts';
import { findProject, findProjectByName } from '../store/projects.ts';
import { conflict, emit, record, type ApplyContext } from './apply-support.ts';
import type { AuthorizationSpec } from './document.ts';

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  return left.size === new Set(b).size && b.every((item) => left.has(item));
}

export async function applyAuthorizations(ctx: ApplyContext, orgId: string, userId: string, specs: AuthorizationSpec[]): Promise<void> {
  for (const spec of specs) {
    const byId = await findProject(ctx.trx, spec.project);
    const project = byId?.org_id === orgId ? byId : await findProjectByName(ctx.trx, orgId, spec.project);
    if (!project) conflict(ctx, `${spec.path}.project`, `no project "${spec.project}" (id or name) in this organization`);
    const unknown = await undefinedRoleKeys(ctx.trx, project.id, spec.roles);
    if (unknown.length > 0) conflict(ctx, `${spec.path}.roles`, `project "${project.name}" defines no role ${unknown.map((r) => `"${r}"`).join(', ')}`);
    const row = await findUserProjectAuthorization(ctx.trx, userId, project.id);
    if (!row) {
      const id = newId();
      await insertAuthorization(ctx.trx, { id, instance_id: ctx.instanceId, org_id: orgId, user_id: userId, project_id: project.id, roles: spec.roles });
      await emit(ctx, 'authorization', id, orgId, 'authorization.added', { userId, projectId: project.id, roles: spec.roles });
      record(ctx, 'authorization', spec.path, id, 'created');
      continue;
    }
    if (sameSet(row.roles, spec.roles)) {
      record(ctx, 'authorization', spec.path, row.id, 'unchanged');
      continue;
    }
    await setAuthorizationRoles(ctx.trx, row.id, spec.roles);
    await emit(ctx, 'authorization', row.id, orgId, 'authorization.changed', { roles: spec.roles });
    record(ctx, 'authorization', spec.path, row.id, 'updated');
  }
}
