/**
 * Setting up the instance (the bootstrap file, the first run): the one writer of the `instances`
 * row and of `instance.added` and `instance.changed`. Set-up runs under one lock across processes
 * sharing a database, so that whoever comes second finds what the first created.
 */
import type { DB } from '../../store/database.ts';
import { insertInstance, lockInstanceSetup, updateInstance, type InstanceRow } from '../../store/instances.ts';
import { changedColumns } from '../kernel/changed-fields.ts';
import { appendEvent } from '../kernel/events.ts';
import type { InstanceEvents } from '../kernel/event-types.ts';

/** A new instance. */
export interface NewInstance {
  id: string;
  name: string;
  /** Null until its first organization exists. */
  defaultOrgId: string | null;
  enableImpersonation: boolean;
}

/** What set-up may change on an existing instance; a field left out stays. */
export interface InstanceChanges {
  enableImpersonation?: boolean | undefined;
  defaultOrgId?: string | undefined;
}

/** The payload of `instance.added` (kernel/event-types.ts). */
export type InstanceAdded = InstanceEvents['instance.added'];

/** The payload of `instance.changed` (kernel/event-types.ts). */
export type InstanceChanged = InstanceEvents['instance.changed'];

function instanceEvent(instanceId: string, creator: string, type: 'instance.added' | 'instance.changed', payload: InstanceAdded | InstanceChanged) {
  return { instanceId, aggregateId: instanceId, resourceOwner: instanceId, type, creator, payload: { ...payload } };
}

/** Holds the set-up lock until `trx` ends: set-up of one database happens one process at a time. */
export async function holdSetupLock(trx: DB): Promise<void> {
  await lockInstanceSetup(trx);
}

export async function addInstance(trx: DB, instance: NewInstance, creator: string): Promise<void> {
  const { id, ...payload } = instance;
  await insertInstance(trx, { id, name: instance.name, default_org_id: instance.defaultOrgId, enable_impersonation: instance.enableImpersonation });
  await appendEvent(trx, instanceEvent(id, creator, 'instance.added', payload));
}

/** Writes what differs of `changes`; true when anything changed. */
export async function changeInstance(trx: DB, instance: InstanceRow, changes: InstanceChanges, creator: string): Promise<boolean> {
  const desired: { enable_impersonation?: boolean; default_org_id?: string } = {};
  if (changes.enableImpersonation !== undefined) desired.enable_impersonation = changes.enableImpersonation;
  if (changes.defaultOrgId !== undefined) desired.default_org_id = changes.defaultOrgId;
  const changed = changedColumns(instance, desired);
  const names = Object.keys(changed);
  if (names.length === 0) return false;
  await updateInstance(trx, instance.id, changed);
  await appendEvent(trx, instanceEvent(instance.id, creator, 'instance.changed', { changed: names, ...changed }));
  return true;
}
