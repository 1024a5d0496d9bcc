/**
 * Projects of one organization, their roles and their applications, reconciled through the projects
 * wing (domain/projects/): each object of the file is found, then added or changed where it differs.
 * The file owns applications: every setting left out takes its default, and an application found by
 * client id moves to the project naming it. Roles and keys the file does not list are kept.
 */
import { Refusal } from '../domain/kernel/refusals.ts';
import { addApp, changeApp, type AppSettings } from '../domain/projects/app-admin.ts';
import { addProject, addProjectRole, changeProject, changeProjectRole } from '../domain/projects/project-admin.ts';
import { AppKeyTaken, AppNameTaken, ValueTaken } from '../domain/projects/refusals.ts';
import { findApp, findApplicationByClientId } from '../store/apps.ts';
import { findProjectRole } from '../store/project-roles.ts';
import { findProject, findProjectByName, type ProjectRow } from '../store/projects.ts';
import { conflict, match, record, refusedAt, secretHash, takenMessage, writer, type ApplyContext } from './apply-support.ts';
import type { AppSpec, ProjectRoleSpec, ProjectSpec } from './document.ts';

function settingsOf(spec: AppSpec): AppSettings {
  return {
    kind: spec.type,
    auth_method: spec.authMethod,
    redirect_uris: spec.redirectUris,
    post_logout_redirect_uris: spec.postLogoutRedirectUris,
    response_types: spec.responseTypes,
    grant_types: spec.grantTypes,
    oidc_app_type: spec.appType,
    access_token_type: spec.accessTokenType,
    id_token_userinfo_assertion: spec.idTokenUserinfoAssertion,
    id_token_role_assertion: spec.idTokenRoleAssertion,
    access_token_role_assertion: spec.accessTokenRoleAssertion,
    dev_mode: spec.devMode,
  };
}

type Conflict = { path: string; message?: string } | undefined;

/**
 * A refusal of the wing at the document's field under `path` (`fields` renames the wing's fields to
 * the file's), in the wing's words without the field it put in front.
 */
function atField(path: string, refusal: Error, fields: Record<string, string> = {}): Conflict {
  if (!(refusal instanceof Refusal) || refusal.field === undefined) return undefined;
  const message = refusal instanceof ValueTaken ? takenMessage(refusal.value) : refusal.message.slice(refusal.field.length + 2);
  return { path: `${path}.${fields[refusal.field] ?? refusal.field}`, message };
}

/** Where in an application of the file a refusal of the wing belongs, in the words the file has always used. */
function appConflict(spec: AppSpec) {
  return (refusal: Error): Conflict => {
    if (refusal instanceof ValueTaken) {
      // The application id and the client id are claimed together: the value says which one is taken.
      const ofClientId = refusal.value === spec.clientId && refusal.value.toLowerCase() !== spec.id?.toLowerCase();
      return { path: `${spec.path}.${ofClientId ? 'clientId' : 'id'}`, message: takenMessage(refusal.value) };
    }
    if (refusal instanceof AppNameTaken) {
      const holder = refusal.holderId === undefined ? '' : ` by application ${refusal.holderId}`;
      return { path: `${spec.path}.name`, message: `application name "${spec.name}" is taken in this project${holder}` };
    }
    if (refusal instanceof AppKeyTaken) {
      const message = `keyId ${refusal.keyId} already belongs to another application (${refusal.holderId})`;
      return { path: `${spec.path}.${refusal.field}`, message };
    }
    return atField(spec.path, refusal);
  };
}

async function applyApp(ctx: ApplyContext, project: Pick<ProjectRow, 'id' | 'org_id' | 'name'>, spec: AppSpec): Promise<void> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findApp(ctx.trx, id),
    () => findApplicationByClientId(ctx.trx, ctx.instanceId, spec.clientId),
    `clientId "${spec.clientId}"`,
  );
  // Re-hashed only when the file's secret no longer verifies, so an unchanged file changes nothing.
  const secret = await secretHash(row?.secret_hash, spec.clientSecret);
  const publicKeys = spec.publicKeys.map((key) => ({ keyId: key.keyId, publicKey: key.pem, expiresAt: key.expiresAt }));
  const wanted = { name: spec.name, clientId: spec.clientId, settings: settingsOf(spec), secretHash: secret.hash, publicKeys };
  if (!row) {
    const created = await refusedAt(ctx, spec.path, () => addApp(ctx.trx, writer(ctx), project, { ...wanted, id: spec.id }), appConflict(spec));
    record(ctx, 'app', spec.path, created.id, 'created');
    return;
  }
  const { changed } = await refusedAt(ctx, spec.path, () => changeApp(ctx.trx, writer(ctx), row, { ...wanted, project }), appConflict(spec));
  record(ctx, 'app', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
}

/** Adds the roles the file names and updates their names and groups; other roles are kept. True when any changed. */
async function applyProjectRoles(ctx: ApplyContext, project: Pick<ProjectRow, 'id' | 'org_id'>, roles: ProjectRoleSpec[]): Promise<boolean> {
  let changed = false;
  for (const role of roles) {
    const row = await findProjectRole(ctx.trx, project.id, role.key);
    const settings = { displayName: role.displayName, group: role.group };
    const at = (refusal: Error) => atField(role.path, refusal, { roleKey: 'key' });
    if (!row) {
      await refusedAt(ctx, role.path, () => addProjectRole(ctx.trx, writer(ctx), project, role.key, settings), at);
      changed = true;
    } else if ((await refusedAt(ctx, role.path, () => changeProjectRole(ctx.trx, writer(ctx), project, row, settings), at)).changed.length > 0) {
      changed = true;
    }
  }
  return changed;
}

export async function applyProject(ctx: ApplyContext, orgId: string, spec: ProjectSpec): Promise<void> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findProject(ctx.trx, id),
    () => findProjectByName(ctx.trx, orgId, spec.name),
    `project name "${spec.name}" (in this organization)`,
  );
  const settings = {
    name: spec.name,
    roleAssertion: spec.roleAssertion,
    authorizationRequired: spec.authorizationRequired,
    projectAccessRequired: spec.projectAccessRequired,
  };
  const at = (refusal: Error) => atField(spec.path, refusal);
  let project: Pick<ProjectRow, 'id' | 'org_id' | 'name'>;
  if (!row) {
    const created = await refusedAt(ctx, spec.path, () => addProject(ctx.trx, writer(ctx), { ...settings, id: spec.id, orgId }), at);
    project = { id: created.id, org_id: orgId, name: spec.name };
    await applyProjectRoles(ctx, project, spec.roles);
    record(ctx, 'project', spec.path, project.id, 'created');
  } else {
    if (row.org_id !== orgId) conflict(ctx, `${spec.path}.id`, `project ${row.id} belongs to another organization (${row.org_id})`);
    project = { id: row.id, org_id: orgId, name: spec.name };
    const { changed } = await refusedAt(ctx, spec.path, () => changeProject(ctx.trx, writer(ctx), row, settings), at);
    if (await applyProjectRoles(ctx, project, spec.roles)) changed.push('roles');
    record(ctx, 'project', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
  }
  for (const app of spec.apps) await applyApp(ctx, project, app);
}
