/**
 * Authorizations the file gives, reconciled through the projects wing
 * (domain/projects/authorization-admin.ts): for each user and named project, the file owns the set
 * of roles; authorizations for projects the file does not name (made through the API) are kept.
 * Applied after the organization's projects, whose roles they name.
 */
import { addAuthorization, changeAuthorizationRoles } from '../domain/projects/authorization-admin.ts';
import { UndefinedRoles } from '../domain/projects/refusals.ts';
import { findUserProjectAuthorization } from '../store/authorizations.ts';
import { findProject, findProjectByName } from '../store/projects.ts';
import { conflict, record, refusedAt, writer, type ApplyContext } from './apply-support.ts';
import type { AuthorizationSpec } from './document.ts';

export async function applyAuthorizations(ctx: ApplyContext, orgId: string, userId: string, specs: AuthorizationSpec[]): Promise<void> {
  for (const spec of specs) {
    const byId = await findProject(ctx.trx, spec.project);
    const project = byId?.org_id === orgId ? byId : await findProjectByName(ctx.trx, orgId, spec.project);
    if (!project) conflict(ctx, `${spec.path}.project`, `no project "${spec.project}" (id or name) in this organization`);
    const at = (refusal: Error) =>
      refusal instanceof UndefinedRoles
        ? { path: `${spec.path}.roles`, message: `project "${project.name}" defines no role ${refusal.keys.map((key) => `"${key}"`).join(', ')}` }
        : undefined;
    const row = await findUserProjectAuthorization(ctx.trx, userId, project.id);
    if (!row) {
      const created = await refusedAt(ctx, spec.path, () => addAuthorization(ctx.trx, writer(ctx), project, userId, spec.roles), at);
      record(ctx, 'authorization', spec.path, created.id, 'created');
      continue;
    }
    const changed = await refusedAt(ctx, spec.path, () => changeAuthorizationRoles(ctx.trx, writer(ctx), row, spec.roles), at);
    record(ctx, 'authorization', spec.path, row.id, changed === undefined ? 'unchanged' : 'updated');
  }
}
