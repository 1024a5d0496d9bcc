/**
 * Projects of one organization, their roles and their applications. Projects and roles are
 * reconciled through the projects wing (domain/projects/): each one of the file is found, then added
 * or changed where it differs; roles the file does not list are kept. The file owns applications:
 * every setting left out takes its default, and an application found by client id moves to the
 * project naming it.
 */
import type { Refusal } from '../domain/kernel/refusals.ts';
import { newId } from '../domain/kernel/ids.ts';
import { addProject, addProjectRole, changeProject, changeProjectRole } from '../domain/projects/project-admin.ts';
import { findApp, findApplicationByClientId, findAppKey, findOtherAppNamed, insertApp, insertAppKey, updateApp, updateAppKey } from '../store/apps.ts';
import { findProjectRole } from '../store/project-roles.ts';
import { findProject, findProjectByName, type ProjectRow } from '../store/projects.ts';
import { changedColumns, claim, conflict, emit, match, record, secretHash, syncKeys, type ApplyContext, type KeyTable } from './apply-support.ts';
import { fileActor, reported } from './apply-wings.ts';
import type { AppSpec, ProjectRoleSpec, ProjectSpec } from './document.ts';

function appKeys(ctx: ApplyContext, appId: string): KeyTable {
  return {
    find: (keyId) => findAppKey(ctx.trx, keyId),
    insert: (key) => insertAppKey(ctx.trx, { id: key.keyId, app_id: appId, public_key: key.pem, expires_at: key.expiresAt }),
    update: (key) => updateAppKey(ctx.trx, key.keyId, { public_key: key.pem, expires_at: key.expiresAt }),
  };
}

async function applyApp(ctx: ApplyContext, orgId: string, projectId: string, spec: AppSpec): Promise<void> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findApp(ctx.trx, id),
    () => findApplicationByClientId(ctx.trx, ctx.instanceId, spec.clientId),
    `clientId "${spec.clientId}"`,
  );
  const namesake = await findOtherAppNamed(ctx.trx, projectId, spec.name, row?.id);
  if (namesake) conflict(ctx, `${spec.path}.name`, `application name "${spec.name}" is taken in this project by application ${namesake.id}`);
  const secret = await secretHash(row?.secret_hash, spec.clientSecret);
  const columns = {
    org_id: orgId,
    project_id: projectId,
    name: spec.name,
    kind: spec.type,
    client_id: spec.clientId,
    auth_method: spec.authMethod,
    oidc_app_type: spec.appType,
    redirect_uris: spec.redirectUris,
    post_logout_redirect_uris: spec.postLogoutRedirectUris,
    response_types: spec.responseTypes,
    grant_types: spec.grantTypes,
    access_token_type: spec.accessTokenType,
    id_token_userinfo_assertion: spec.idTokenUserinfoAssertion,
    id_token_role_assertion: spec.idTokenRoleAssertion,
    access_token_role_assertion: spec.accessTokenRoleAssertion,
    dev_mode: spec.devMode,
  };
  if (!row) {
    const id = spec.id ?? newId();
    await claim(ctx, `${spec.path}.id`, { type: 'app', id }, [id], true);
    await claim(ctx, `${spec.path}.clientId`, { type: 'app', id }, [spec.clientId], false);
    await insertApp(ctx.trx, { ...columns, id, instance_id: ctx.instanceId, secret_hash: secret.hash });
    await syncKeys(ctx, id, spec.publicKeys, appKeys(ctx, id), 'application');
    await emit(ctx, 'app', id, orgId, 'app.added', { name: spec.name, clientId: spec.clientId, projectId });
    record(ctx, 'app', spec.path, id, 'created');
    return;
  }
  const changes = changedColumns(row, columns);
  const changed: string[] = Object.keys(changes);
  if (changes.client_id !== undefined) await claim(ctx, `${spec.path}.clientId`, { type: 'app', id: row.id }, [spec.clientId], false);
  const update = { ...changes, ...(secret.changed ? { secret_hash: secret.hash } : {}) };
  if (secret.changed) changed.push('secret');
  if (changed.length > 0) await updateApp(ctx.trx, row.id, update);
  if (await syncKeys(ctx, row.id, spec.publicKeys, appKeys(ctx, row.id), 'application')) changed.push('publicKeys');
  if (changed.length > 0) await emit(ctx, 'app', row.id, orgId, 'app.changed', { changed });
  record(ctx, 'app', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
}

/** Adds the roles the file names and updates their names and groups; other roles are kept. True when any changed. */
async function applyProjectRoles(ctx: ApplyContext, project: Pick<ProjectRow, 'id' | 'org_id'>, roles: ProjectRoleSpec[]): Promise<boolean> {
  let changed = false;
  for (const role of roles) {
    const row = await findProjectRole(ctx.trx, project.id, role.key);
    const settings = { displayName: role.displayName, group: role.group };
    const report = (refusal: Refusal) => (refusal.field === 'roleKey' ? { field: 'key' } : undefined);
    if (!row) {
      await reported(ctx, role.path, () => addProjectRole(ctx.trx, fileActor(ctx), project, role.key, settings), report);
      changed = true;
    } else if ((await reported(ctx, role.path, () => changeProjectRole(ctx.trx, fileActor(ctx), project, row, settings), report)).changed.length > 0) {
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
  let project: Pick<ProjectRow, 'id' | 'org_id' | 'name'>;
  if (!row) {
    const created = await reported(ctx, spec.path, () => addProject(ctx.trx, fileActor(ctx), { ...settings, id: spec.id, orgId }));
    project = { id: created.id, org_id: orgId, name: spec.name };
    await applyProjectRoles(ctx, project, spec.roles);
    record(ctx, 'project', spec.path, project.id, 'created');
  } else {
    if (row.org_id !== orgId) conflict(ctx, `${spec.path}.id`, `project ${row.id} belongs to another organization (${row.org_id})`);
    project = { id: row.id, org_id: orgId, name: spec.name };
    const { changed } = await reported(ctx, spec.path, () => changeProject(ctx.trx, fileActor(ctx), row, settings));
    if (await applyProjectRoles(ctx, project, spec.roles)) changed.push('roles');
    record(ctx, 'project', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
  }
  for (const app of spec.apps) await applyApp(ctx, orgId, project.id, app);
}
