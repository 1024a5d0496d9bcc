/**
 * Applies a validated bootstrap file in one transaction, all or nothing (SPEC §9). Objects are
 * matched by `id` when given, else by natural key (org name; user and project name within the org;
 * client id). Only what differs is written, and each created or changed object appends one event,
 * so re-applying an unchanged file writes nothing and appends nothing.
 */
import type { FeatureName } from '../domain/instance/features.ts';
import { newId } from '../domain/kernel/ids.ts';
import type { DB } from '../store/database.ts';
import { findFirstInstance, insertInstance, listInstanceFeatures, lockInstanceSetup, updateInstance, upsertInstanceFeature } from '../store/instances.ts';
import { findOrg, findOrgByName, findOtherOrgWithDomain, insertOrg, updateOrg } from '../store/orgs.ts';
import { applyAuthorizations } from './apply-authorizations.ts';
import { applyProject } from './apply-projects.ts';
import { changedColumns, conflict, emit, match, record, type ApplyContext, type ObjectKind, type ObjectResult } from './apply-support.ts';
import { applyHuman, applyMachine } from './apply-users.ts';
import type { AuthorizationSpec, BootstrapDocument, BootstrapFile, OrgSpec } from './document.ts';
import { readBootstrapFile } from './schema.ts';

export type { ObjectKind, ObjectResult } from './apply-support.ts';

export interface Counts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface BootstrapSummary extends Counts {
  instanceId: string;
  byKind: Record<ObjectKind, Counts>;
  /** One entry per object of the file (and the instance), in the order applied. */
  objects: ObjectResult[];
}

async function applyOrg(ctx: ApplyContext, spec: OrgSpec, preferredId: string | undefined): Promise<string> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findOrg(ctx.trx, id),
    () => findOrgByName(ctx.trx, ctx.instanceId, spec.name),
    `organization name "${spec.name}"`,
  );
  const domainOwner = await findOtherOrgWithDomain(ctx.trx, ctx.instanceId, spec.domain, row?.id);
  if (domainOwner) conflict(ctx, `${spec.path}.domain`, `domain "${spec.domain}" is the primary domain of organization "${domainOwner.name}" (${domainOwner.id})`);
  let orgId: string;
  // SPEC 10.12: null leaves registration at its default (the default organization only).
  const allowRegister = spec.allowRegister ?? null;
  if (!row) {
    orgId = spec.id ?? preferredId ?? newId();
    await insertOrg(ctx.trx, { id: orgId, instance_id: ctx.instanceId, name: spec.name, primary_domain: spec.domain, allow_register: allowRegister });
    await emit(ctx, 'org', orgId, orgId, 'org.added', { name: spec.name, domain: spec.domain, ...(allowRegister === null ? {} : { allowRegister }) });
    record(ctx, 'org', spec.path, orgId, 'created');
  } else {
    orgId = row.id;
    const changes = changedColumns(row, { name: spec.name, primary_domain: spec.domain, allow_register: allowRegister });
    const changed = Object.keys(changes);
    if (changed.length > 0) {
      await updateOrg(ctx.trx, orgId, changes);
      await emit(ctx, 'org', orgId, orgId, 'org.changed', { changed });
    }
    record(ctx, 'org', spec.path, orgId, changed.length > 0 ? 'updated' : 'unchanged');
  }
  const granted: Array<[string, AuthorizationSpec[]]> = [];
  for (const user of spec.users) granted.push([await applyHuman(ctx, orgId, user), user.authorizations]);
  for (const machine of spec.machines) granted.push([await applyMachine(ctx, orgId, machine), machine.authorizations]);
  for (const project of spec.projects) await applyProject(ctx, orgId, project);
  for (const [userId, authorizations] of granted) await applyAuthorizations(ctx, orgId, userId, authorizations);
  return orgId;
}

/** Sets the features the file names, as setFeatures does; true when any changed. */
async function applyFeatures(ctx: ApplyContext, features: Partial<Record<FeatureName, boolean>>): Promise<boolean> {
  const rows = await listInstanceFeatures(ctx.trx, ctx.instanceId);
  const changes = Object.fromEntries(Object.entries(features).filter(([name, enabled]) => rows.find((row) => row.name === name)?.enabled !== enabled));
  if (Object.keys(changes).length === 0) return false;
  for (const [name, enabled] of Object.entries(changes)) await upsertInstanceFeature(ctx.trx, ctx.instanceId, name, enabled);
  await emit(ctx, 'instance', ctx.instanceId, ctx.instanceId, 'instance.features.set', changes);
  return true;
}

/** The work of `applyBootstrap` inside a transaction that already holds the set-up lock. */
export async function applyInTransaction(trx: DB, bootstrap: BootstrapFile): Promise<BootstrapSummary> {
  const document: BootstrapDocument = bootstrap.document;
  const existing = await findFirstInstance(trx);
  const firstOrg = document.orgs[0];
  const ctx: ApplyContext = { trx, file: bootstrap.file, instanceId: existing?.id ?? newId(), results: [] };
  // A new instance's default org is the file's first org, whose id is chosen up front.
  const firstOrgId = existing ? undefined : firstOrg ? (firstOrg.id ?? newId()) : undefined;
  if (!existing) {
    const values = { id: ctx.instanceId, name: 'Gatehouse', default_org_id: firstOrgId ?? null, enable_impersonation: document.security.enableImpersonation ?? false };
    await insertInstance(trx, values);
    await emit(ctx, 'instance', ctx.instanceId, ctx.instanceId, 'instance.added', { name: values.name, defaultOrgId: values.default_org_id, enableImpersonation: values.enable_impersonation });
    record(ctx, 'instance', '', ctx.instanceId, 'created');
  }
  const featuresChanged = await applyFeatures(ctx, document.features);
  const orgIds: string[] = [];
  for (const [index, org] of document.orgs.entries()) orgIds.push(await applyOrg(ctx, org, index === 0 ? firstOrgId : undefined));

  if (existing) {
    const desired: { enable_impersonation?: boolean; default_org_id?: string } = {};
    if (document.security.enableImpersonation !== undefined) desired.enable_impersonation = document.security.enableImpersonation;
    if (existing.default_org_id === null && orgIds[0] !== undefined) desired.default_org_id = orgIds[0];
    const changes = changedColumns(existing, desired);
    const changed = Object.keys(changes);
    if (changed.length > 0) {
      await updateInstance(trx, existing.id, changes);
      await emit(ctx, 'instance', existing.id, existing.id, 'instance.changed', { changed, ...changes });
    }
    record(ctx, 'instance', '', existing.id, changed.length > 0 || featuresChanged ? 'updated' : 'unchanged');
  }
  return summarize(ctx);
}

function summarize(ctx: ApplyContext): BootstrapSummary {
  const zero = (): Counts => ({ created: 0, updated: 0, unchanged: 0 });
  const kinds: ObjectKind[] = ['instance', 'org', 'user', 'machine', 'project', 'app', 'authorization'];
  const byKind = Object.fromEntries(kinds.map((kind) => [kind, zero()])) as Record<ObjectKind, Counts>;
  const total = zero();
  for (const result of ctx.results) {
    byKind[result.kind][result.action] += 1;
    total[result.action] += 1;
  }
  return { instanceId: ctx.instanceId, ...total, byKind, objects: ctx.results };
}

/** Applies a validated bootstrap in one transaction: all or nothing. Throws BootstrapError on conflicts. */
export async function applyBootstrap(db: DB, bootstrap: BootstrapFile): Promise<BootstrapSummary> {
  return db.transaction().execute(async (trx) => {
    await lockInstanceSetup(trx);
    return applyInTransaction(trx, bootstrap);
  });
}

/** Reads, validates (before touching the database) and applies a bootstrap file. */
export async function applyBootstrapFile(db: DB, path: string): Promise<BootstrapSummary> {
  return applyBootstrap(db, await readBootstrapFile(path));
}

