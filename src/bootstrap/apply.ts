/**
 * Applies a validated bootstrap file in one transaction, all or nothing
 * (docs/bootstrap.md#how-a-file-is-applied): a reconciler. Objects are matched by `id` when given,
 * else by natural key (org name; user and project name within the org; client id), then the wing
 * that owns them adds or changes them; a wing's refusal is a conflict at the object's path. The
 * wings write only what differs, and each created or changed object appends one event, so
 * re-applying an unchanged file writes nothing and appends nothing.
 */
import { declareFeatures } from '../domain/instance/features.ts';
import { addInstance, changeInstance, holdSetupLock } from '../domain/instance/instance-admin.ts';
import { addOrg, changeOrg, OrgDomainTaken } from '../domain/instance/org-admin.ts';
import { newId } from '../domain/kernel/ids.ts';
import type { MasterKey } from '../domain/kernel/crypto.ts';
import type { DB } from '../store/database.ts';
import { findFirstInstance } from '../store/instances.ts';
import { findOrg, findOrgByName } from '../store/orgs.ts';
import { findLoginPolicy } from '../store/policies.ts';
import { applyInstancePolicies, applyOrgPolicies, defaultRegistration } from './apply-policies.ts';
import { applyPolicyProviders, applyProviders } from './apply-idps.ts';
import { applyAuthorizations } from './apply-authorizations.ts';
import { applyProject } from './apply-projects.ts';
import { BOOTSTRAP, match, record, refusedAt, writer, type ApplyContext, type ObjectKind, type ObjectResult, type PendingFile } from './apply-support.ts';
import { writeTokenFile } from './token-files.ts';
import { applyHuman, applyMachine, applyMachinePats } from './apply-users.ts';
import { apiAudienceScope, DEFAULT_SERVICE_NAME } from '../config/index.ts';
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

/**
 * The organization's registration switch (`orgs.allow_register`, docs/security.md 10.12): as the file
 * says (`loginPolicy.allowRegister` or `allowRegister`); with a login policy in the file that does not
 * say, the default rule; else its own login policy's (made through the API), else unset.
 */
async function registrationOf(ctx: ApplyContext, spec: OrgSpec, orgId: string | undefined, isDefaultOrg: boolean): Promise<boolean | null> {
  if (spec.allowRegister !== undefined) return spec.allowRegister;
  if (spec.loginPolicy !== undefined) return defaultRegistration(ctx, isDefaultOrg);
  const own = orgId === undefined ? undefined : await findLoginPolicy(ctx.trx, orgId);
  return own?.allow_register ?? null;
}

/** The organization's providers, its policies, then its policy's list of providers; true when anything changed. */
async function applyOrgProviders(ctx: ApplyContext, orgId: string, spec: OrgSpec, allowRegister: boolean): Promise<boolean> {
  const owner = { instanceId: ctx.instanceId, orgId };
  const providers = await applyProviders(ctx, owner, spec.identityProviders);
  const policies = await applyOrgPolicies(ctx, orgId, spec, allowRegister);
  const list = await applyPolicyProviders(ctx, owner, spec.loginPolicy);
  return providers || policies || list;
}

async function applyOrg(ctx: ApplyContext, spec: OrgSpec, index: number, preferredId: string | undefined, defaultOrgId: string | undefined): Promise<string> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findOrg(ctx.trx, id),
    () => findOrgByName(ctx.trx, ctx.instanceId, spec.name),
    `organization name "${spec.name}"`,
  );
  // The file names the domain; another organization's is a conflict there, naming the holder.
  const domainConflict = (refusal: Error) =>
    refusal instanceof OrgDomainTaken
      ? { path: `${spec.path}.domain`, message: `domain "${spec.domain}" is the primary domain of organization "${refusal.holder.name}" (${refusal.holder.id})` }
      : undefined;
  const orgId = row?.id ?? spec.id ?? preferredId ?? newId();
  // docs/security.md 10.12: left out, registration stays at its default (the default organization only).
  const allowRegister = await registrationOf(ctx, spec, row?.id, defaultOrgId === undefined ? index === 0 : defaultOrgId === orgId);
  const values = { name: spec.name, domain: spec.domain, allowRegister };
  if (!row) {
    await refusedAt(ctx, spec.path, () => addOrg(ctx.trx, writer(ctx), { id: orgId, ...values }), domainConflict);
    await applyOrgProviders(ctx, orgId, spec, allowRegister ?? false);
    record(ctx, 'org', spec.path, orgId, 'created');
  } else {
    const changed = await refusedAt(ctx, spec.path, () => changeOrg(ctx.trx, writer(ctx), row, values), domainConflict);
    const policiesChanged = await applyOrgProviders(ctx, orgId, spec, allowRegister ?? false);
    record(ctx, 'org', spec.path, orgId, changed || policiesChanged ? 'updated' : 'unchanged');
  }
  const granted: Array<[string, AuthorizationSpec[]]> = [];
  for (const user of spec.users) granted.push([await applyHuman(ctx, orgId, user), user.authorizations]);
  for (const machine of spec.machines) {
    const machineId = await applyMachine(ctx, orgId, machine);
    await applyMachinePats(ctx, orgId, machineId, machine.pats, ctx.apiScope);
    granted.push([machineId, machine.authorizations]);
  }
  for (const project of spec.projects) await applyProject(ctx, orgId, project);
  for (const [userId, authorizations] of granted) await applyAuthorizations(ctx, orgId, userId, authorizations);
  return orgId;
}

/** The work of `applyBootstrap` inside a transaction that already holds the set-up lock. */
/** What applying needs besides the file: the server's service name, and where files wait for the commit. */
export interface ApplyOptions {
  /** GATEHOUSE_SERVICE_NAME (config/index.ts), for the personal access tokens' API scope. */
  serviceName?: string;
  /** The master key, which seals identity providers' client secrets; a file with providers needs it. */
  masterKey?: MasterKey | undefined;
  /** GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: which provider URLs are accepted (docs/federation.md). */
  idpAllowPrivateNetworks?: boolean;
}

export async function applyInTransaction(trx: DB, bootstrap: BootstrapFile, options: ApplyOptions = {}, files: PendingFile[] = []): Promise<BootstrapSummary> {
  const document: BootstrapDocument = bootstrap.document;
  const existing = await findFirstInstance(trx);
  const firstOrg = document.orgs[0];
  const apiScope = apiAudienceScope(options.serviceName ?? DEFAULT_SERVICE_NAME);
  const idp = options.masterKey === undefined ? undefined : { masterKey: options.masterKey, allowPrivateNetworks: options.idpAllowPrivateNetworks ?? false };
  const ctx: ApplyContext = { trx, file: bootstrap.file, instanceId: existing?.id ?? newId(), results: [], files, apiScope, idp };
  // A new instance's default org is the file's first org, whose id is chosen up front.
  const firstOrgId = existing ? undefined : firstOrg ? (firstOrg.id ?? newId()) : undefined;
  if (!existing) {
    const enableImpersonation = document.security.enableImpersonation ?? false;
    await addInstance(trx, { id: ctx.instanceId, name: 'Gatehouse', defaultOrgId: firstOrgId ?? null, enableImpersonation }, BOOTSTRAP);
    record(ctx, 'instance', '', ctx.instanceId, 'created');
  }
  const featuresChanged = await declareFeatures(trx, ctx.instanceId, document.features, BOOTSTRAP);
  // Before the organizations: theirs start from the instance's.
  const instanceOwner = { instanceId: ctx.instanceId };
  // The instance's providers before the policies that name them, and before the organizations' policies.
  const providersChanged = await applyProviders(ctx, instanceOwner, document.identityProviders);
  const instancePoliciesChanged = await applyInstancePolicies(ctx, document);
  const instanceListChanged = await applyPolicyProviders(ctx, instanceOwner, document.loginPolicy);
  const policiesChanged = instancePoliciesChanged || instanceListChanged || providersChanged;
  const orgIds: string[] = [];
  // The default organization: the existing one, else (new, or an instance without one) the file's first.
  const defaultOrgId = existing?.default_org_id ?? undefined;
  for (const [index, org] of document.orgs.entries()) orgIds.push(await applyOrg(ctx, org, index, index === 0 ? firstOrgId : undefined, defaultOrgId));

  if (existing) {
    // An instance without a default organization gets the file's first one.
    const defaultOrgId = existing.default_org_id === null ? orgIds[0] : undefined;
    const changed = await changeInstance(trx, existing, { enableImpersonation: document.security.enableImpersonation, defaultOrgId }, BOOTSTRAP);
    record(ctx, 'instance', '', existing.id, changed || featuresChanged || policiesChanged ? 'updated' : 'unchanged');
  }
  return summarize(ctx);
}

function summarize(ctx: ApplyContext): BootstrapSummary {
  const zero = (): Counts => ({ created: 0, updated: 0, unchanged: 0 });
  const kinds: ObjectKind[] = ['instance', 'org', 'user', 'machine', 'pat', 'project', 'app', 'authorization', 'idp'];
  const byKind = Object.fromEntries(kinds.map((kind) => [kind, zero()])) as Record<ObjectKind, Counts>;
  const total = zero();
  for (const result of ctx.results) {
    byKind[result.kind][result.action] += 1;
    total[result.action] += 1;
  }
  return { instanceId: ctx.instanceId, ...total, byKind, objects: ctx.results };
}

/** Applies a validated bootstrap in one transaction: all or nothing. Throws BootstrapError on conflicts. */
export async function applyBootstrap(db: DB, bootstrap: BootstrapFile, options: ApplyOptions = {}): Promise<BootstrapSummary> {
  const files: PendingFile[] = [];
  const summary = await db.transaction().execute(async (trx) => {
    await holdSetupLock(trx);
    return applyInTransaction(trx, bootstrap, options, files);
  });
  // Only what committed is written: a token in a file is one the database knows.
  for (const file of files) writeTokenFile(file.path, file.content);
  return summary;
}

/** Reads, validates (before touching the database) and applies a bootstrap file. */
export async function applyBootstrapFile(db: DB, path: string, options: ApplyOptions = {}): Promise<BootstrapSummary> {
  return applyBootstrap(db, await readBootstrapFile(path), options);
}

