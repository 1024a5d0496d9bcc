/**
 * Applies a validated bootstrap file in one transaction, all or nothing (SPEC §9). Objects are
 * matched by `id` when given, else by natural key (org name; user and project name within the org;
 * client id). Only what differs is written, and each created or changed object appends one event,
 * so re-applying an unchanged file writes nothing and appends nothing.
 */
import { declareFeatures } from '../domain/instance/features.ts';
import { addInstance, changeInstance, holdSetupLock } from '../domain/instance/instance-admin.ts';
import { newId } from '../domain/kernel/ids.ts';
import type { DB } from '../store/database.ts';
import { findFirstInstance } from '../store/instances.ts';
import { findOrg, findOrgByName, findOtherOrgWithDomain, insertOrg, updateOrg } from '../store/orgs.ts';
import { applyAuthorizations } from './apply-authorizations.ts';
import { applyProject } from './apply-projects.ts';
import { BOOTSTRAP, changedColumns, conflict, emit, match, record, type ApplyContext, type ObjectKind, type ObjectResult } from './apply-support.ts';
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

/** The work of `applyBootstrap` inside a transaction that already holds the set-up lock. */
export async function applyInTransaction(trx: DB, bootstrap: BootstrapFile): Promise<BootstrapSummary> {
  const document: BootstrapDocument = bootstrap.document;
  const existing = await findFirstInstance(trx);
  const firstOrg = document.orgs[0];
  const ctx: ApplyContext = { trx, file: bootstrap.file, instanceId: existing?.id ?? newId(), results: [] };
  // A new instance's default org is the file's first org, whose id is chosen up front.
  const firstOrgId = existing ? undefined : firstOrg ? (firstOrg.id ?? newId()) : undefined;
  if (!existing) {
    const enableImpersonation = document.security.enableImpersonation ?? false;
    await addInstance(trx, { id: ctx.instanceId, name: 'Gatehouse', defaultOrgId: firstOrgId ?? null, enableImpersonation }, BOOTSTRAP);
    record(ctx, 'instance', '', ctx.instanceId, 'created');
  }
  const featuresChanged = await declareFeatures(trx, ctx.instanceId, document.features, BOOTSTRAP);
  const orgIds: string[] = [];
  for (const [index, org] of document.orgs.entries()) orgIds.push(await applyOrg(ctx, org, index === 0 ? firstOrgId : undefined));

  if (existing) {
    // An instance without a default organization gets the file's first one.
    const defaultOrgId = existing.default_org_id === null ? orgIds[0] : undefined;
    const changed = await changeInstance(trx, existing, { enableImpersonation: document.security.enableImpersonation, defaultOrgId }, BOOTSTRAP);
    record(ctx, 'instance', '', existing.id, changed || featuresChanged ? 'updated' : 'unchanged');
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
    await holdSetupLock(trx);
    return applyInTransaction(trx, bootstrap);
  });
}

/** Reads, validates (before touching the database) and applies a bootstrap file. */
export async function applyBootstrapFile(db: DB, path: string): Promise<BootstrapSummary> {
  return applyBootstrap(db, await readBootstrapFile(path));
}

