/**
 * Adding and changing organizations: the one writer of the `orgs` table and of `org.added` and
 * `org.changed`, for the management API and the bootstrap file alike.
 *
 * - Names are unique in the instance (case-insensitively), and so are primary domains. The API makes
 *   the domain from the name (organizations.ts `primaryDomainFor`); the bootstrap file names it.
 * - `allowRegister` left out (null) keeps self-registration at its default: the instance's default
 *   organization only.
 * - A change writes only what differs, and appends an event only then.
 */
import type { DB } from '../../store/database.ts';
import { findOrg, findOrgByName, findOtherOrgWithDomain, insertOrg, updateOrg } from '../../store/orgs.ts';
import type { OrgRow } from '../../store/schema.ts';
import { changedColumns } from '../kernel/changed-fields.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { idProblem, nameProblem } from '../kernel/names.ts';
import { Refusal } from '../kernel/refusals.ts';
import { primaryDomainFor } from './organizations.ts';
import type { OrgEvents } from '../kernel/event-types.ts';

/** In which instance, and who: what every organization change uses. */
export interface OrgWriter {
  instanceId: string;
  /** The events' creator (principal.ts `creatorOf`, or 'bootstrap'). */
  creator: string;
}

/** An organization as added or declared. */
export interface OrgValues {
  name: string;
  /** Lowercased. */
  domain: string;
  /** Null or left out: registration at its default (the default organization only). */
  allowRegister?: boolean | null | undefined;
}

export interface NewOrg extends OrgValues {
  /** Chosen by the caller, else a new one. */
  id: string;
  /** Where the caller's request names the domain: `name` when it was made from the name; `domain` when left out. */
  domainField?: 'name' | 'domain' | undefined;
}

/** The payload of `org.added` (kernel/event-types.ts). */
export type OrgAdded = OrgEvents['org.added'];

/** The payload of `org.changed` (kernel/event-types.ts). */
export type OrgChanged = OrgEvents['org.changed'];

/** The id the management API has always answered invalid organization input with. */
const INVALID = 'API-InvalidArgument';

/** A primary domain another organization has; `holder` names it for the bootstrap file's operator. */
export class OrgDomainTaken extends Refusal {
  override name = 'OrgDomainTaken';
  readonly domain: string;
  readonly holder: { id: string; name: string };
  constructor(domain: string, holder: { id: string; name: string }, field: string) {
    super('exists', 'ORG-DomainTaken', `the primary domain ${domain} is taken by another organization`, { field });
    this.domain = domain;
    this.holder = holder;
  }
}

/**
 * A new organization asked for through the API: its name and chosen id checked, its primary domain
 * made from its name. Before the transaction.
 */
export function prepareOrg(input: { id: string | undefined; name: string }, externalUrl: string): NewOrg {
  const problem = nameProblem(input.name);
  if (problem !== undefined) throw new Refusal('invalid', INVALID, problem, { field: 'name' });
  if (input.id !== undefined) {
    const idIssue = idProblem(input.id);
    if (idIssue !== undefined) throw new Refusal('invalid', INVALID, idIssue, { field: 'orgId' });
  }
  const domain = primaryDomainFor(input.name, externalUrl);
  if (domain === undefined) throw new Refusal('invalid', INVALID, 'must contain a letter or digit (the primary domain is made from it)', { field: 'name' });
  return { id: input.id ?? newId(), name: input.name, domain, domainField: 'name' };
}

function orgEvent(writer: OrgWriter, orgId: string, type: 'org.added' | 'org.changed', payload: OrgAdded | OrgChanged) {
  return { instanceId: writer.instanceId, aggregateId: orgId, resourceOwner: orgId, type, creator: writer.creator, payload: { ...payload } };
}

async function checkDomainFree(trx: DB, writer: OrgWriter, domain: string, exceptOrgId: string | undefined, field: string): Promise<void> {
  const holder = await findOtherOrgWithDomain(trx, writer.instanceId, domain, exceptOrgId);
  if (holder !== undefined) throw new OrgDomainTaken(domain, holder, field);
}

/** Adds the organization; its id, name and primary domain must be free in the instance. */
export async function addOrg(trx: DB, writer: OrgWriter, org: NewOrg, now = new Date()): Promise<ChangeDetails> {
  if ((await findOrg(trx, org.id)) !== undefined) throw new Refusal('exists', 'ORG-IdTaken', 'an organization has this id', { field: 'orgId' });
  if ((await findOrgByName(trx, writer.instanceId, org.name)) !== undefined) throw new Refusal('exists', 'ORG-NameTaken', 'an organization has this name', { field: 'name' });
  await checkDomainFree(trx, writer, org.domain, undefined, org.domainField ?? 'domain');
  const allowRegister = org.allowRegister ?? null;
  await insertOrg(trx, {
    id: org.id, instance_id: writer.instanceId, name: org.name, primary_domain: org.domain, allow_register: allowRegister, created_at: now, changed_at: now,
  });
  const payload: OrgAdded = { name: org.name, domain: org.domain, ...(allowRegister === null ? {} : { allowRegister }) };
  return appendEvent(trx, orgEvent(writer, org.id, 'org.added', payload));
}

/** Makes the organization `org` as `values` says; true when anything changed. */
export async function changeOrg(trx: DB, writer: OrgWriter, org: OrgRow, values: OrgValues): Promise<boolean> {
  const holder = await findOrgByName(trx, writer.instanceId, values.name);
  if (holder !== undefined && holder.id !== org.id) throw new Refusal('exists', 'ORG-NameTaken', 'an organization has this name', { field: 'name' });
  await checkDomainFree(trx, writer, values.domain, org.id, 'domain');
  const changes = changedColumns(org, { name: values.name, primary_domain: values.domain, allow_register: values.allowRegister ?? null });
  const changed = Object.keys(changes) as OrgChanged['changed'];
  if (changed.length === 0) return false;
  await updateOrg(trx, org.id, changes);
  await appendEvent(trx, orgEvent(writer, org.id, 'org.changed', { changed }));
  return true;
}
