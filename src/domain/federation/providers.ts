/**
 * External identity providers (docs/federation.md): the one writer of `identity_providers` and
 * `login_policy_idps`, for the admin and management APIs and the bootstrap file alike.
 *
 * - A provider belongs to the instance (`orgId` absent) or to one organization. An organization
 *   sees and uses its own providers and the instance's; it never finds another organization's, so
 *   a call naming one is NotFound, as if it did not exist.
 * - Kinds: generic OpenID Connect ('oidc': an issuer, discovery at use) and generic OAuth 2.0
 *   ('oauth': three endpoints and the `idAttribute` of the user endpoint's answer). Field limits are
 *   ZITADEL's (admin.proto's validate rules on AddGenericOIDCProviderRequest and
 *   AddGenericOAuthProviderRequest).
 * - The client secret is sealed with the master key before it is stored, and no read returns it:
 *   `Provider` carries only the sealed form, for `upstreamConfigOf`.
 * - URLs must be ones Gatehouse would fetch (outbound.ts `outboundUrlProblem`): https (or http with
 *   GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS), no credentials, no private or loopback address. A host
 *   that does not resolve is accepted here, as ZITADEL accepts it: DNS may not answer where the
 *   configuration is written, and every request checks the address again.
 * - A login policy offers a provider only when it is listed (`login_policy_idps`); removing a
 *   provider removes it from every list. An organization lists providers only on a login policy of
 *   its own (NotFound before AddCustomLoginPolicy, as ZITADEL).
 */
import type { DB } from '../../store/database.ts';
import {
  deleteIdentityProvider, deletePolicyIdp, deletePolicyIdps, findIdentityProvider, insertIdentityProvider, insertPolicyIdp, listIdentityProviders, listPolicyIdps,
  listPolicyProviders, updateIdentityProvider, type IdentityProviderRow, type PolicyIdpRow,
} from '../../store/identity-providers.ts';
import { findLoginPolicy } from '../../store/policies.ts';
import type { AutoLinkingName, IdpKind, IdpState } from '../../store/schema.ts';
import type { MasterKey } from '../kernel/crypto.ts';
import { appendEvent, latestSequence, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { effectiveLoginPolicy } from '../instance/policies.ts';
import { outboundUrlProblem } from './outbound.ts';
import type { UpstreamConfig } from './upstream.ts';

/** Whose providers: the instance's (no `orgId`) or an organization's. */
export interface IdpOwner {
  instanceId: string;
  orgId?: string | undefined;
}

/** Who writes: the events' creator (principal.ts `creatorOf`, or 'bootstrap'). */
export interface IdpWriter {
  instanceId: string;
  creator: string;
}

/** What checking and sealing a provider's configuration needs. */
export interface IdpContext {
  /** GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  masterKey: Pick<MasterKey, 'encrypt' | 'decrypt'>;
}

export type ProviderKind = IdpKind;
export type AutoLinking = AutoLinkingName;

/** What a provider lets users do (zitadel.idp.v1.Options). */
export interface ProviderOptions {
  isLinkingAllowed: boolean;
  isCreationAllowed: boolean;
  isAutoCreation: boolean;
  isAutoUpdate: boolean;
  autoLinking: AutoLinking;
}

export const NO_OPTIONS: ProviderOptions = { isLinkingAllowed: false, isCreationAllowed: false, isAutoCreation: false, isAutoUpdate: false, autoLinking: 'none' };

interface CommonInput {
  name: string;
  clientId: string;
  /** Required on add; on change, empty or absent keeps the stored one. */
  clientSecret?: string | undefined;
  scopes: string[];
  usePkce: boolean;
  options: ProviderOptions;
}

export interface OidcInput extends CommonInput {
  kind: 'oidc';
  issuer: string;
  isIdTokenMapping: boolean;
}

export interface OAuthInput extends CommonInput {
  kind: 'oauth';
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userEndpoint: string;
  idAttribute: string;
}

export type ProviderInput = OidcInput | OAuthInput;

/** A provider as reads return it: the secret only sealed. */
export interface Provider {
  id: string;
  instanceId: string;
  /** Null for the instance's providers. */
  orgId: string | null;
  kind: ProviderKind;
  name: string;
  state: IdpState;
  clientId: string;
  /** Sealed with the master key; never leaves the server. */
  sealedSecret: string;
  scopes: string[];
  /** OpenID Connect. */
  issuer: string;
  isIdTokenMapping: boolean;
  /** OAuth 2.0. */
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userEndpoint: string;
  idAttribute: string;
  usePkce: boolean;
  options: ProviderOptions;
  createdAt: Date;
  changedAt: Date;
}

const INVALID = 'IDP-Invalid';
const MAX_FIELD = 200;
const MAX_SECRET = 1000;
const MAX_SCOPES = 20;
const MAX_SCOPE = 100;

// ---- checks ----

function checkText(value: string, field: string, max = MAX_FIELD): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new Refusal('invalid', INVALID, 'must not be empty', { field });
  if (trimmed.length > max) throw new Refusal('invalid', INVALID, `must be at most ${max} characters`, { field });
  return trimmed;
}

async function checkUrl(value: string, field: string, ctx: IdpContext): Promise<string> {
  const url = checkText(value, field);
  const problem = await outboundUrlProblem(url, { allowPrivateNetworks: ctx.allowPrivateNetworks });
  // An unresolvable host is checked again when Gatehouse first asks the provider (see above).
  if (problem !== undefined && !problem.startsWith('host not found')) throw new Refusal('invalid', INVALID, problem, { field });
  return url;
}

function checkScopes(scopes: string[], field: string): string[] {
  if (scopes.length > MAX_SCOPES) throw new Refusal('invalid', INVALID, `must have at most ${MAX_SCOPES} items`, { field });
  return scopes.map((scope, i) => {
    if (scope.length === 0 || scope.length > MAX_SCOPE) throw new Refusal('invalid', INVALID, `must be 1 to ${MAX_SCOPE} characters`, { field: `${field}[${i}]` });
    if (/\s/.test(scope)) throw new Refusal('invalid', INVALID, 'must not contain spaces', { field: `${field}[${i}]` });
    return scope;
  });
}

/** The input, checked and trimmed; `secretRequired` on add. Fields are named as in the requests. */
async function checkInput(input: ProviderInput, ctx: IdpContext, secretRequired: boolean, prefix: string): Promise<ProviderInput> {
  const name = checkText(input.name, `${prefix}name`);
  const clientId = checkText(input.clientId, `${prefix}clientId`);
  let clientSecret: string | undefined;
  if (secretRequired || (input.clientSecret !== undefined && input.clientSecret !== '')) {
    clientSecret = checkText(input.clientSecret ?? '', `${prefix}clientSecret`, MAX_SECRET);
  }
  const scopes = checkScopes(input.scopes, `${prefix}scopes`);
  const common = { name, clientId, clientSecret, scopes, usePkce: input.usePkce, options: input.options };
  if (input.kind === 'oidc') {
    return { ...common, kind: 'oidc', issuer: await checkUrl(input.issuer, `${prefix}issuer`, ctx), isIdTokenMapping: input.isIdTokenMapping };
  }
  return {
    ...common,
    kind: 'oauth',
    authorizationEndpoint: await checkUrl(input.authorizationEndpoint, `${prefix}authorizationEndpoint`, ctx),
    tokenEndpoint: await checkUrl(input.tokenEndpoint, `${prefix}tokenEndpoint`, ctx),
    userEndpoint: await checkUrl(input.userEndpoint, `${prefix}userEndpoint`, ctx),
    idAttribute: checkText(input.idAttribute, `${prefix}idAttribute`),
  };
}

// ---- rows ----

export function providerOf(row: IdentityProviderRow): Provider {
  return {
    id: row.id,
    instanceId: row.instance_id,
    orgId: row.org_id,
    kind: row.kind,
    name: row.name,
    state: row.state,
    clientId: row.client_id,
    sealedSecret: row.client_secret,
    scopes: row.scopes,
    issuer: row.issuer ?? '',
    isIdTokenMapping: row.id_token_mapping,
    authorizationEndpoint: row.authorization_endpoint ?? '',
    tokenEndpoint: row.token_endpoint ?? '',
    userEndpoint: row.user_endpoint ?? '',
    idAttribute: row.id_attribute ?? '',
    usePkce: row.use_pkce,
    options: {
      isLinkingAllowed: row.is_linking_allowed,
      isCreationAllowed: row.is_creation_allowed,
      isAutoCreation: row.is_auto_creation,
      isAutoUpdate: row.is_auto_update,
      autoLinking: row.auto_linking,
    },
    createdAt: row.created_at,
    changedAt: row.changed_at,
  };
}

/** The columns of a checked input, but the secret. */
function columnsOf(input: ProviderInput) {
  return {
    name: input.name,
    client_id: input.clientId,
    scopes: input.scopes,
    use_pkce: input.usePkce,
    issuer: input.kind === 'oidc' ? input.issuer : null,
    id_token_mapping: input.kind === 'oidc' ? input.isIdTokenMapping : false,
    authorization_endpoint: input.kind === 'oauth' ? input.authorizationEndpoint : null,
    token_endpoint: input.kind === 'oauth' ? input.tokenEndpoint : null,
    user_endpoint: input.kind === 'oauth' ? input.userEndpoint : null,
    id_attribute: input.kind === 'oauth' ? input.idAttribute : null,
    is_linking_allowed: input.options.isLinkingAllowed,
    is_creation_allowed: input.options.isCreationAllowed,
    is_auto_creation: input.options.isAutoCreation,
    is_auto_update: input.options.isAutoUpdate,
    auto_linking: input.options.autoLinking,
  };
}

/** The names of the request fields a column stands for, for the `changed` of an event. */
const FIELD_OF_COLUMN: Record<keyof ReturnType<typeof columnsOf>, string> = {
  name: 'name',
  client_id: 'clientId',
  scopes: 'scopes',
  use_pkce: 'usePkce',
  issuer: 'issuer',
  id_token_mapping: 'isIdTokenMapping',
  authorization_endpoint: 'authorizationEndpoint',
  token_endpoint: 'tokenEndpoint',
  user_endpoint: 'userEndpoint',
  id_attribute: 'idAttribute',
  is_linking_allowed: 'isLinkingAllowed',
  is_creation_allowed: 'isCreationAllowed',
  is_auto_creation: 'isAutoCreation',
  is_auto_update: 'isAutoUpdate',
  auto_linking: 'autoLinking',
};

function ownerIdOf(owner: IdpOwner): string {
  return owner.orgId ?? owner.instanceId;
}

function notFound(): Refusal {
  return new Refusal('not_found', 'IDP-NotFound', 'identity provider not found');
}

type IdpEvent = 'idp.added' | 'idp.changed' | 'idp.removed' | 'policy.login.idp.added' | 'policy.login.idp.removed';

function append(trx: DB, writer: IdpWriter, owner: IdpOwner, event: IdpEvent, idpId: string, extra: { kind?: string; name?: string; changed?: string[] } = {}): Promise<ChangeDetails> {
  const ownerId = ownerIdOf(owner);
  const base = { instanceId: writer.instanceId, aggregateId: ownerId, resourceOwner: ownerId, creator: writer.creator };
  const level = owner.orgId === undefined ? 'instance' : 'org';
  switch (event) {
    case 'idp.added': return appendEvent(trx, { ...base, type: `${level}.idp.added`, payload: { idpId, kind: extra.kind ?? '', name: extra.name ?? '' } });
    case 'idp.changed': return appendEvent(trx, { ...base, type: `${level}.idp.changed`, payload: { idpId, changed: extra.changed ?? [] } });
    case 'idp.removed': return appendEvent(trx, { ...base, type: `${level}.idp.removed`, payload: { idpId } });
    case 'policy.login.idp.added': return appendEvent(trx, { ...base, type: `${level}.policy.login.idp.added`, payload: { idpId } });
    case 'policy.login.idp.removed': return appendEvent(trx, { ...base, type: `${level}.policy.login.idp.removed`, payload: { idpId } });
  }
}

// ---- reads ----

/** A provider of exactly this owner (an organization's own, or the instance's), else NotFound. */
export async function ownProvider(db: DB, owner: IdpOwner, id: string): Promise<Provider> {
  const row = id === '' ? undefined : await findIdentityProvider(db, owner.instanceId, id);
  if (row === undefined || row.org_id !== (owner.orgId ?? null)) throw notFound();
  return providerOf(row);
}

/** A provider of the instance by id, whoever owns it (the caller checks who may see it), else NotFound. */
export async function anyProvider(db: DB, instanceId: string, id: string): Promise<Provider> {
  const row = id === '' ? undefined : await findIdentityProvider(db, instanceId, id);
  if (row === undefined) throw notFound();
  return providerOf(row);
}

/** A provider an organization may use: its own or the instance's (for the instance: its own), else NotFound. */
export async function usableProvider(db: DB, owner: IdpOwner, id: string): Promise<Provider> {
  const row = id === '' ? undefined : await findIdentityProvider(db, owner.instanceId, id);
  if (row === undefined || (row.org_id !== null && row.org_id !== (owner.orgId ?? null))) throw notFound();
  return providerOf(row);
}

/** The owner's providers; for an organization with `withInstance`, the instance's too. By name. */
export async function listProviders(db: DB, owner: IdpOwner, withInstance: boolean): Promise<Provider[]> {
  return (await listIdentityProviders(db, owner.instanceId, owner.orgId, withInstance)).map(providerOf);
}

/** A provider a login policy lists. */
export interface PolicyIdp {
  idpId: string;
  name: string;
  kind: ProviderKind;
  /** Null for the instance's providers. */
  orgId: string | null;
}

function policyIdpOf(row: PolicyIdpRow): PolicyIdp {
  return { idpId: row.idp_id, name: row.name, kind: row.kind, orgId: row.org_id };
}

/**
 * The providers the login policy in force lists: an organization's own policy's, else the
 * instance's (as the policy's other fields fall back).
 */
export async function loginPolicyProviders(db: DB, owner: IdpOwner): Promise<PolicyIdp[]> {
  const ownerId = owner.orgId !== undefined && (await findLoginPolicy(db, owner.orgId)) !== undefined ? owner.orgId : owner.instanceId;
  return (await listPolicyIdps(db, owner.instanceId, ownerId)).map(policyIdpOf);
}

/**
 * The providers an organization's users are offered at sign-in (the instance's defaults without
 * `orgId`): those the effective login policy lists, when it allows external sign-in; else none.
 */
export async function activeProviders(db: DB, instanceId: string, orgId: string | undefined): Promise<Provider[]> {
  const policy = await effectiveLoginPolicy(db, { instanceId, orgId });
  if (!policy.allowExternalIdp) return [];
  const ownerId = policy.source === 'org' && orgId !== undefined ? orgId : instanceId;
  return (await listPolicyProviders(db, instanceId, ownerId)).filter((row) => row.state === 'active').map(providerOf);
}

/** What signing in at the provider needs (upstream.ts), the secret unsealed: never for an answer. */
export function upstreamConfigOf(provider: Provider, masterKey: Pick<MasterKey, 'decrypt'>): UpstreamConfig {
  const common = { id: provider.id, name: provider.name, clientId: provider.clientId, clientSecret: masterKey.decrypt(provider.sealedSecret), scopes: provider.scopes, usePkce: provider.usePkce };
  if (provider.kind === 'oidc') return { ...common, kind: 'oidc', issuer: provider.issuer, idTokenMapping: provider.isIdTokenMapping };
  return {
    ...common,
    kind: 'oauth',
    authorizationEndpoint: provider.authorizationEndpoint,
    tokenEndpoint: provider.tokenEndpoint,
    userEndpoint: provider.userEndpoint,
    idAttribute: provider.idAttribute,
  };
}

/** The details of the last change, for a call that changes nothing (ZITADEL answers those with the current details). */
async function unchanged(db: DB, owner: IdpOwner, provider: Provider): Promise<ChangeDetails> {
  return { sequence: await latestSequence(db), changeDate: provider.changedAt, resourceOwner: ownerIdOf(owner) };
}

// ---- writes ----

/** Adds a provider; the secret is required, and sealed. */
export async function addProvider(trx: DB, writer: IdpWriter, owner: IdpOwner, input: ProviderInput, ctx: IdpContext, fieldPrefix = ''): Promise<{ id: string; details: ChangeDetails }> {
  const checked = await checkInput(input, ctx, true, fieldPrefix);
  const id = newId();
  const now = new Date();
  await insertIdentityProvider(trx, {
    id,
    instance_id: owner.instanceId,
    org_id: owner.orgId ?? null,
    kind: checked.kind,
    client_secret: ctx.masterKey.encrypt(checked.clientSecret ?? ''),
    ...columnsOf(checked),
    created_at: now,
    changed_at: now,
  });
  const details = await append(trx, writer, owner, 'idp.added', id, { kind: checked.kind, name: checked.name });
  return { id, details };
}

/**
 * Changes a provider of this owner and kind (another kind's id is NotFound, as ZITADEL); the secret
 * only when given. A change that changes nothing appends no event and answers the current details.
 */
export async function changeProvider(trx: DB, writer: IdpWriter, owner: IdpOwner, id: string, input: ProviderInput, ctx: IdpContext, fieldPrefix = ''): Promise<ChangeDetails> {
  return (await change(trx, writer, owner, id, input, ctx, fieldPrefix)).details;
}

async function change(
  trx: DB,
  writer: IdpWriter,
  owner: IdpOwner,
  id: string,
  input: ProviderInput,
  ctx: IdpContext,
  fieldPrefix: string,
): Promise<{ details: ChangeDetails; changed: boolean }> {
  const current = await ownProvider(trx, owner, id);
  if (current.kind !== input.kind) throw notFound();
  const checked = await checkInput(input, ctx, false, fieldPrefix);
  const next = columnsOf(checked);
  const row = (await findIdentityProvider(trx, owner.instanceId, id))!;
  const changed = (Object.keys(next) as (keyof typeof next)[])
    .filter((column) => JSON.stringify(next[column]) !== JSON.stringify(row[column]))
    .map((column) => FIELD_OF_COLUMN[column]);
  const secretChanged = checked.clientSecret !== undefined && ctx.masterKey.decrypt(row.client_secret) !== checked.clientSecret;
  if (secretChanged) changed.push('clientSecret');
  if (changed.length === 0) return { details: await unchanged(trx, owner, current), changed: false };
  await updateIdentityProvider(trx, id, {
    ...next,
    ...(secretChanged ? { client_secret: ctx.masterKey.encrypt(checked.clientSecret!) } : {}),
    changed_at: new Date(),
  });
  return { details: await append(trx, writer, owner, 'idp.changed', id, { changed }), changed: true };
}

/** Removes a provider of this owner, and with it from every login policy and every user's links. */
export async function removeProvider(trx: DB, writer: IdpWriter, owner: IdpOwner, id: string): Promise<ChangeDetails> {
  await ownProvider(trx, owner, id);
  await deleteIdentityProvider(trx, id);
  return append(trx, writer, owner, 'idp.removed', id);
}

/**
 * Lists a provider on the owner's login policy: for an organization, its own provider or the
 * instance's, on its own policy (NotFound without one); AlreadyExists when listed.
 */
export async function addProviderToLoginPolicy(trx: DB, writer: IdpWriter, owner: IdpOwner, idpId: string, field = 'idpId'): Promise<ChangeDetails> {
  if (owner.orgId !== undefined && (await findLoginPolicy(trx, owner.orgId)) === undefined) {
    throw new Refusal('not_found', 'POLICY-LoginNotFound', 'the organization has no login policy of its own (AddCustomLoginPolicy first)');
  }
  let provider: Provider;
  try {
    provider = await usableProvider(trx, owner, idpId);
  } catch (error) {
    if (error instanceof Refusal) throw new Refusal('not_found', 'IDP-NotFound', 'identity provider not found', { field });
    throw error;
  }
  const added = await insertPolicyIdp(trx, { owner_id: ownerIdOf(owner), instance_id: owner.instanceId, org_id: owner.orgId ?? null, idp_id: provider.id });
  if (!added) throw new Refusal('exists', 'POLICY-IdpExists', 'the login policy lists this identity provider already');
  return append(trx, writer, owner, 'policy.login.idp.added', provider.id);
}

/** Takes a provider off the owner's login policy; NotFound when it is not listed. */
export async function removeProviderFromLoginPolicy(trx: DB, writer: IdpWriter, owner: IdpOwner, idpId: string): Promise<ChangeDetails> {
  if (idpId === '' || !(await deletePolicyIdp(trx, ownerIdOf(owner), idpId))) {
    throw new Refusal('not_found', 'POLICY-IdpNotFound', 'the login policy does not list this identity provider');
  }
  return append(trx, writer, owner, 'policy.login.idp.removed', idpId);
}

/** Empties an organization's list, when its own login policy is removed (the instance's applies again). */
export async function clearLoginPolicyProviders(trx: DB, orgId: string): Promise<void> {
  await deletePolicyIdps(trx, orgId);
}

// ---- declared (the bootstrap file) ----

/**
 * Makes the owner's provider of this name as declared: added when there is none (the secret is
 * required then), changed when it differs (the secret compared unsealed, and kept when none is
 * given). A provider of this name of the other kind is refused: the file cannot turn one kind into
 * the other.
 */
export async function declareProvider(
  trx: DB,
  writer: IdpWriter,
  owner: IdpOwner,
  input: ProviderInput,
  ctx: IdpContext,
): Promise<{ id: string; action: 'created' | 'updated' | 'unchanged' }> {
  const name = input.name.trim();
  const existing = (await listIdentityProviders(trx, owner.instanceId, owner.orgId, false)).find((row) => row.name === name);
  if (existing === undefined) {
    const added = await addProvider(trx, writer, owner, input, ctx);
    return { id: added.id, action: 'created' };
  }
  if (existing.kind !== input.kind) {
    throw new Refusal('conflict', 'IDP-KindFixed', `a provider named "${name}" exists with kind ${existing.kind}: remove it first`, { field: 'kind' });
  }
  const { changed } = await change(trx, writer, owner, existing.id, input, ctx, '');
  return { id: existing.id, action: changed ? 'updated' : 'unchanged' };
}

/**
 * Makes the owner's login policy list exactly these providers (ids): the missing added, the others
 * taken off. True when anything changed.
 */
export async function declareLoginPolicyProviders(trx: DB, writer: IdpWriter, owner: IdpOwner, idpIds: string[]): Promise<boolean> {
  const current = (await listPolicyIdps(trx, owner.instanceId, ownerIdOf(owner))).map((row) => row.idp_id);
  let changed = false;
  for (const id of idpIds.filter((id) => !current.includes(id))) {
    await addProviderToLoginPolicy(trx, writer, owner, id);
    changed = true;
  }
  for (const id of current.filter((id) => !idpIds.includes(id))) {
    await removeProviderFromLoginPolicy(trx, writer, owner, id);
    changed = true;
  }
  return changed;
}

/**
 * The id of the provider a login policy names by name or id: the owner's own, or (for an
 * organization) the instance's, the own first; NotFound when none.
 */
export async function providerIdByReference(db: DB, owner: IdpOwner, reference: string): Promise<string> {
  const candidates = await listIdentityProviders(db, owner.instanceId, owner.orgId, true);
  const own = (row: IdentityProviderRow) => row.org_id === (owner.orgId ?? null);
  const found = candidates.find((row) => row.id === reference) ?? candidates.find((row) => own(row) && row.name === reference) ?? candidates.find((row) => row.name === reference);
  if (found === undefined) throw new Refusal('not_found', 'IDP-NotFound', `no identity provider named "${reference}" (the ${owner.orgId === undefined ? "instance's" : "organization's or the instance's"})`);
  return found.id;
}
