/**
 * Applications (OAuth clients and API resource servers) and their keys: the one writer of `apps`
 * and `app_keys`, for the management API (ZITADEL's AppService) and the bootstrap file alike. What
 * settings an application may have is applications.ts.
 *
 * - An application's id and client id are claimed in the instance's namespace of token names
 *   (kernel/identifiers.ts); its name is unique per project, ignoring case.
 * - A method without a client secret keeps none; a secret arrives hashed, since argon2 runs before
 *   the caller's transaction opens, never inside it (so no row stays locked while it runs).
 * - Keys (private_key_jwt) are added and removed one by one through the API; the bootstrap file adds
 *   or updates the keys it lists as part of the application, whose event covers them.
 * - Every change appends one event in the caller's transaction, nothing changed appends none.
 */
import {
  APP_CLIENT_ID_INDEX,
  APP_NAME_INDEX,
  deleteApp,
  deleteAppKey,
  findAppKey,
  findOtherAppNamed,
  insertApp,
  insertAppKey,
  updateApp,
  updateAppKey,
  violatedUniqueIndex,
  type AppKeyRow,
} from '../../store/apps.ts';
import type { DB } from '../../store/database.ts';
import type { ProjectRow } from '../../store/projects.ts';
import type { AppRow, OidcAppType } from '../../store/schema.ts';
import type { AppGrantType } from '../../oidc/grant-types.ts';
import type { AccessTokenType, AuthMethod, ResponseType } from '../../oidc/vocabulary.ts';
import { appendEvent, type ChangeDetails, type EventInput } from '../kernel/events.ts';
import { identifierTaken } from '../kernel/identifiers.ts';
import { newId } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { clientIdFor, usesSecret } from './applications.ts';
import type { Actor } from './project-admin.ts';
import { AppKeyTaken, AppNameTaken, claimValues, ValueTaken } from './refusals.ts';
import { normalizedPem } from '../credentials/public-keys.ts';
import type { AppEvents } from '../kernel/event-types.ts';

/** The columns of an application that its settings fill. */
export interface AppSettings {
  kind: 'oidc' | 'api';
  auth_method: AuthMethod;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  response_types: ResponseType[];
  grant_types: AppGrantType[];
  oidc_app_type: OidcAppType;
  access_token_type: AccessTokenType;
  id_token_userinfo_assertion: boolean;
  id_token_role_assertion: boolean;
  access_token_role_assertion: boolean;
  dev_mode: boolean;
}

const SETTINGS: readonly (keyof AppSettings)[] = [
  'kind', 'auth_method', 'redirect_uris', 'post_logout_redirect_uris', 'response_types', 'grant_types',
  'oidc_app_type', 'access_token_type', 'id_token_userinfo_assertion', 'id_token_role_assertion',
  'access_token_role_assertion', 'dev_mode',
];

/** A public key an application signs its client assertions with. */
export interface AppKeyInput {
  keyId: string;
  /** SPKI PEM. */
  publicKey: string;
  expiresAt: Date | null;
}

const ID_TAKEN = 'APP-IdTaken';

/** The event of a change of application `app` (aggregate `app`, owned by its organization). */
function appEvent<T extends keyof AppEvents>(trx: DB, actor: Actor, app: { id: string; org_id: string }, type: T, payload: AppEvents[T]) {
  const event = { instanceId: actor.instanceId, creator: actor.creator, aggregateId: app.id, resourceOwner: app.org_id };
  return appendEvent(trx, { ...event, type, payload } as EventInput<T>);
}

/** A write that ran into a unique index (a concurrent request won the name or the id), refused as the check is. */
function asRefusal(error: unknown, app: { id: string; client_id: string }): unknown {
  const index = violatedUniqueIndex(error);
  if (index === undefined) return error;
  if (index === APP_NAME_INDEX) return new AppNameTaken(undefined);
  return new ValueTaken(ID_TAKEN, index === APP_CLIENT_ID_INDEX ? app.client_id : app.id);
}

async function checkNameFree(trx: DB, projectId: string, name: string, appId: string | undefined): Promise<void> {
  const namesake = await findOtherAppNamed(trx, projectId, name, appId);
  if (namesake !== undefined) throw new AppNameTaken(namesake.id);
}

/** Refused when a chosen application id is taken: a check before slow work (hashing a secret); addApp's claim decides. */
export async function checkAppIdFree(db: DB, instanceId: string, appId: string): Promise<void> {
  if (await identifierTaken(db, instanceId, appId)) throw new ValueTaken(ID_TAKEN, appId);
}

/** Refused unless the application authenticates with a client secret. */
export function requireSecretMethod(app: Pick<AppRow, 'auth_method'>): void {
  if (!usesSecret(app.auth_method)) {
    const message = `the application authenticates with ${app.auth_method}, which uses no client secret`;
    throw new Refusal('conflict', 'APP-NoSecret', message);
  }
}

/** Refused unless the application authenticates with keys (private_key_jwt). */
export function requireKeyMethod(app: Pick<AppRow, 'auth_method'>): void {
  if (app.auth_method !== 'private_key_jwt') {
    const message = `the application authenticates with ${app.auth_method}; keys are for private_key_jwt`;
    throw new Refusal('conflict', 'APP-NoKeys', message);
  }
}

function samePem(stored: string, given: string): boolean {
  return normalizedPem(stored) === normalizedPem(given);
}

function sameTime(a: Date | null, b: Date | null): boolean {
  return (a?.getTime() ?? null) === (b?.getTime() ?? null);
}

/** Adds or updates the keys by key id (keys not listed stay: the CLI makes some); true when any changed. */
async function putKeys(trx: DB, appId: string, keys: readonly AppKeyInput[]): Promise<boolean> {
  let changed = false;
  for (const [index, key] of keys.entries()) {
    const row = await findAppKey(trx, key.keyId);
    if (row === undefined) {
      await insertAppKey(trx, { id: key.keyId, app_id: appId, public_key: key.publicKey, expires_at: key.expiresAt });
      changed = true;
    } else if (row.owner !== appId) {
      throw new AppKeyTaken(index, key.keyId, row.owner);
    } else if (!samePem(row.public_key, key.publicKey) || !sameTime(row.expires_at, key.expiresAt)) {
      await updateAppKey(trx, key.keyId, { public_key: key.publicKey, expires_at: key.expiresAt });
      changed = true;
    }
  }
  return changed;
}

export interface NewApp {
  /** The caller's choice of id; a new one when left out. */
  id?: string | undefined;
  name: string;
  /** Left out: generated from the id and the project's name (applications.ts clientIdFor). */
  clientId?: string | undefined;
  settings: AppSettings;
  /** The secret's hash; ignored for a method without a secret. */
  secretHash: string | null;
  publicKeys?: readonly AppKeyInput[] | undefined;
}

/** Creates an application in a project; `app.added` names it, its client id, project and kind. */
export async function addApp(
  trx: DB,
  actor: Actor,
  project: Pick<ProjectRow, 'id' | 'org_id' | 'name'>,
  input: NewApp,
): Promise<{ id: string; clientId: string; details: ChangeDetails }> {
  await checkNameFree(trx, project.id, input.name, undefined);
  const id = input.id ?? newId();
  const clientId = input.clientId ?? clientIdFor(id, project.name);
  await claimValues(trx, actor.instanceId, { type: 'app', id }, [id, clientId], ID_TAKEN);
  const secretHash = usesSecret(input.settings.auth_method) ? input.secretHash : null;
  const row = {
    ...input.settings,
    id,
    instance_id: actor.instanceId,
    org_id: project.org_id,
    project_id: project.id,
    name: input.name,
    client_id: clientId,
    secret_hash: secretHash,
  };
  await insertApp(trx, row).catch((error: unknown) => {
    throw asRefusal(error, row);
  });
  await putKeys(trx, id, input.publicKeys ?? []);
  const payload = { name: input.name, clientId, projectId: project.id, kind: input.settings.kind };
  const details = await appEvent(trx, actor, row, 'app.added', payload);
  return { id, clientId, details };
}

export interface AppChange {
  /** The project to be in (the bootstrap file moves an application found by client id to the project naming it). */
  project?: Pick<ProjectRow, 'id' | 'org_id'> | undefined;
  name?: string | undefined;
  clientId?: string | undefined;
  settings?: AppSettings | undefined;
  /** The new secret's hash, null for none; left out keeps the secret (a method without one keeps none). */
  secretHash?: string | null | undefined;
  /** Keys to add or update by key id (the bootstrap file). */
  publicKeys?: readonly AppKeyInput[] | undefined;
}

/**
 * Changes what differs; `app.changed` lists the changed columns, `secret` for the client secret and
 * `publicKeys` for keys. Returns them, and the event's details (undefined when nothing changed).
 */
export async function changeApp(
  trx: DB,
  actor: Actor,
  app: AppRow,
  change: AppChange,
): Promise<{ changed: string[]; details: ChangeDetails | undefined }> {
  const project = change.project ?? { id: app.project_id, org_id: app.org_id };
  const changes: Record<string, unknown> = {};
  const put = (column: keyof AppRow, value: unknown) => {
    if (value !== undefined && JSON.stringify(app[column]) !== JSON.stringify(value)) changes[column] = value;
  };
  put('org_id', project.org_id);
  put('project_id', project.id);
  put('name', change.name);
  if ('name' in changes || 'project_id' in changes) await checkNameFree(trx, project.id, change.name ?? app.name, app.id);
  put('client_id', change.clientId);
  if ('client_id' in changes) await claimValues(trx, actor.instanceId, { type: 'app', id: app.id }, [change.clientId!], ID_TAKEN, false);
  for (const column of SETTINGS) put(column, change.settings?.[column]);
  const keepsSecret = usesSecret(change.settings?.auth_method ?? app.auth_method);
  const secretHash = !keepsSecret ? null : change.secretHash === undefined ? app.secret_hash : change.secretHash;
  const changed = Object.keys(changes);
  if (secretHash !== app.secret_hash) {
    changes['secret_hash'] = secretHash;
    changed.push('secret');
  }
  if (changed.length > 0) {
    await updateApp(trx, app.id, changes).catch((error: unknown) => {
      throw asRefusal(error, { id: app.id, client_id: change.clientId ?? app.client_id });
    });
  }
  if (await putKeys(trx, app.id, change.publicKeys ?? [])) changed.push('publicKeys');
  if (changed.length === 0) return { changed, details: undefined };
  const details = await appEvent(trx, actor, { id: app.id, org_id: project.org_id }, 'app.changed', { changed });
  return { changed, details };
}

/** Deletes an application and its keys; `app.removed` names it, its client id and project. */
export async function removeApp(trx: DB, actor: Actor, app: AppRow): Promise<ChangeDetails> {
  await deleteApp(trx, app.id);
  const payload = { name: app.name, clientId: app.client_id, projectId: app.project_id };
  return appEvent(trx, actor, app, 'app.removed', payload);
}

/** Replaces the client secret by the one `secretHash` hashes; `app.secret.changed` carries nothing of it. */
export async function changeAppSecret(trx: DB, actor: Actor, app: AppRow, secretHash: string): Promise<ChangeDetails> {
  requireSecretMethod(app);
  await updateApp(trx, app.id, { secret_hash: secretHash });
  return appEvent(trx, actor, app, 'app.secret.changed', {});
}

/** Adds a key to an application that authenticates with keys; `app.key.added` names it and its expiry. */
export async function addAppKey(trx: DB, actor: Actor, app: AppRow, key: AppKeyInput): Promise<ChangeDetails> {
  requireKeyMethod(app);
  await insertAppKey(trx, { id: key.keyId, app_id: app.id, public_key: key.publicKey, expires_at: key.expiresAt });
  const payload = { keyId: key.keyId, expiresAt: key.expiresAt?.toISOString() ?? null };
  return appEvent(trx, actor, app, 'app.key.added', payload);
}

/** Removes a key: it no longer authenticates from the next request on; `app.key.removed` names it. */
export async function removeAppKey(trx: DB, actor: Actor, key: Pick<AppKeyRow, 'id' | 'app_id' | 'org_id'>) {
  await deleteAppKey(trx, key.id);
  return appEvent(trx, actor, { id: key.app_id, org_id: key.org_id }, 'app.key.removed', { keyId: key.id });
}
