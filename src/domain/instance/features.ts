/**
 * Instance features (zitadel.feature.v2). A feature is either set on the instance or inherits the
 * system default; only `oidcTokenExchange` exists so far, off by default
 * (docs/endpoints.md#featureservice).
 */
import { findLastFeatureEvent } from '../../store/events.ts';
import type { DB } from '../../store/database.ts';
import { deleteInstanceFeatures, findInstance, listInstanceFeatures, upsertInstanceFeature } from '../../store/instances.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';

export const FEATURES = {
  oidcTokenExchange: { systemDefault: false },
} as const;

export type FeatureName = keyof typeof FEATURES;

export interface FeatureState {
  enabled: boolean;
  source: 'system' | 'instance';
}

export function isFeatureName(name: string): name is FeatureName {
  return Object.hasOwn(FEATURES, name);
}

export async function getFeatures(db: DB, instanceId: string): Promise<Record<FeatureName, FeatureState>> {
  const rows = await listInstanceFeatures(db, instanceId);
  const result = {} as Record<FeatureName, FeatureState>;
  for (const name of Object.keys(FEATURES) as FeatureName[]) {
    const row = rows.find((r) => r.name === name);
    result[name] = row ? { enabled: row.enabled, source: 'instance' } : { enabled: FEATURES[name].systemDefault, source: 'system' };
  }
  return result;
}

/** Sets each named feature on the instance and appends one `instance.features.set` naming them, in `trx`. */
async function writeFeatures(trx: DB, instanceId: string, changes: Partial<Record<FeatureName, boolean>>, creator: string | undefined): Promise<ChangeDetails> {
  for (const [name, enabled] of Object.entries(changes)) {
    if (enabled === undefined) continue;
    await upsertInstanceFeature(trx, instanceId, name, enabled);
  }
  return appendEvent(trx, {
    instanceId,
    aggregateId: instanceId,
    resourceOwner: instanceId,
    type: 'instance.features.set',
    creator,
    payload: changes,
  });
}

export async function setFeatures(
  db: DB,
  instanceId: string,
  changes: Partial<Record<FeatureName, boolean>>,
  creator?: string,
): Promise<ChangeDetails> {
  return db.transaction().execute((trx) => writeFeatures(trx, instanceId, changes, creator));
}

/**
 * Makes the features `desired` names as it says, in the caller's transaction, writing (and naming in
 * the event) only those that differ from what the instance has set: a declared state applied again
 * appends nothing. True when any changed.
 */
export async function declareFeatures(trx: DB, instanceId: string, desired: Partial<Record<FeatureName, boolean>>, creator: string): Promise<boolean> {
  const rows = await listInstanceFeatures(trx, instanceId);
  const changes = Object.fromEntries(Object.entries(desired).filter(([name, enabled]) => rows.find((row) => row.name === name)?.enabled !== enabled));
  if (Object.keys(changes).length === 0) return false;
  await writeFeatures(trx, instanceId, changes, creator);
  return true;
}

export async function resetFeatures(db: DB, instanceId: string, creator?: string): Promise<ChangeDetails> {
  return db.transaction().execute(async (trx) => {
    await deleteInstanceFeatures(trx, instanceId);
    return appendEvent(trx, {
      instanceId,
      aggregateId: instanceId,
      resourceOwner: instanceId,
      type: 'instance.features.reset',
      creator,
    });
  });
}

/**
 * Details of a read: the last feature change of the instance (as ZITADEL reports the last event its
 * projection reduced). Before any change, sequence 0 and the instance's creation time; undefined
 * when the instance does not exist.
 */
export async function featureDetails(db: DB, instanceId: string): Promise<ChangeDetails | undefined> {
  const last = await findLastFeatureEvent(db, instanceId);
  if (last) return { sequence: last.sequence, changeDate: last.created_at, resourceOwner: last.resource_owner };
  const instance = await findInstance(db, instanceId);
  return instance ? { sequence: '0', changeDate: instance.created_at, resourceOwner: instanceId } : undefined;
}
