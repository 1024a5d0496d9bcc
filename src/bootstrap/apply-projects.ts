/**
 * Projects of one organization and their applications. The file owns applications: every setting
 * left out takes its default, and an application found by client id moves to the project naming it.
 */
import { newId } from '../domain/kernel/ids.ts';
import { findApp, findApplicationByClientId, findAppKey, findOtherAppNamed, insertApp, insertAppKey, updateApp, updateAppKey } from '../store/apps.ts';
import { findProjectRole, insertProjectRole, updateProjectRole } from '../store/project-roles.ts';
import { findProject, findProjectByName, insertProject, updateProject } from '../store/projects.ts';
import {
  changedColumns,
  claim,
  conflict,
  emit,
  match,
  record,
  secretHash,
  syncKeys,
  type ApplyContext,
  type KeyTable,
} from './apply-support.ts';
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
async function syncProjectRoles(ctx: ApplyContext, orgId: string, projectId: string, roles: ProjectRoleSpec[]): Promise<boolean> {
  let changed = false;
  for (const role of roles) {
    const row = await findProjectRole(ctx.trx, projectId, role.key);
    if (!row) {
      await insertProjectRole(ctx.trx, { project_id: projectId, role_key: role.key, display_name: role.displayName, role_group: role.group });
      await emit(ctx, 'project', projectId, orgId, 'project.role.added', { key: role.key, displayName: role.displayName, group: role.group });
      changed = true;
      continue;
    }
    const changes = changedColumns(row, { display_name: role.displayName, role_group: role.group });
    if (Object.keys(changes).length === 0) continue;
    await updateProjectRole(ctx.trx, projectId, role.key, changes);
    await emit(ctx, 'project', projectId, orgId, 'project.role.changed', { key: role.key, changed: Object.keys(changes) });
    changed = true;
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
  const columns = {
    name: spec.name,
    role_assertion: spec.roleAssertion,
    authorization_required: spec.authorizationRequired,
    project_access_required: spec.projectAccessRequired,
  };
  let projectId: string;
  if (!row) {
    projectId = spec.id ?? newId();
    await claim(ctx, `${spec.path}.id`, { type: 'project', id: projectId }, [projectId], true);
    await insertProject(ctx.trx, { id: projectId, instance_id: ctx.instanceId, org_id: orgId, ...columns });
    await emit(ctx, 'project', projectId, orgId, 'project.added', { name: spec.name });
    await syncProjectRoles(ctx, orgId, projectId, spec.roles);
    record(ctx, 'project', spec.path, projectId, 'created');
  } else {
    if (row.org_id !== orgId) conflict(ctx, `${spec.path}.id`, `project ${row.id} belongs to another organization (${row.org_id})`);
    projectId = row.id;
    const changes = changedColumns(row, columns);
    const changed = Object.keys(changes);
    if (changed.length > 0) {
      await updateProject(ctx.trx, row.id, changes);
      await emit(ctx, 'project', row.id, orgId, 'project.changed', { changed });
    }
    if (await syncProjectRoles(ctx, orgId, projectId, spec.roles)) changed.push('roles');
    record(ctx, 'project', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
  }
  for (const app of spec.apps) await applyApp(ctx, orgId, projectId, app);
}
