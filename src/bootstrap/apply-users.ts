/**
 * Human and machine users of one organization, with their roles and (machine) public keys.
 * Human users: only the fields the file names are enforced (users change their own data too).
 * Machine users: the file owns them, so left-out fields take their defaults.
 */
import type { Insertable, Updateable } from 'kysely';
import { newId } from '../domain/kernel/ids.ts';
import type { UserRow, UsersTable } from '../store/schema.ts';
import {
  findMachineKey,
  findMachineNamesake,
  findOrgUserByName,
  findUserById,
  insertMachineKey,
  insertUser,
  listUserRoles,
  replaceUserRoles,
  updateMachineKey,
  updateUser,
} from '../store/users.ts';
import {
  changedColumns,
  claim,
  conflict,
  emit,
  match,
  record,
  sameRoles,
  sameValue,
  secretHash,
  syncKeys,
  type ApplyContext,
  type KeyTable,
  type RoleRow,
} from './apply-support.ts';
import { ORG_ROLES, type HumanSpec, type MachineSpec, type Role } from './document.ts';

type UserChanges = Updateable<UsersTable>;

async function findUser(ctx: ApplyContext, orgId: string, spec: HumanSpec | MachineSpec, kind: 'human' | 'machine'): Promise<UserRow | undefined> {
  const row = await match(
    ctx,
    spec.path,
    spec.id,
    (id) => findUserById(ctx.trx, id),
    () => findOrgUserByName(ctx.trx, orgId, spec.userName),
    `user name "${spec.userName}" (in this organization)`,
  );
  if (!row) return undefined;
  if (row.org_id !== orgId) conflict(ctx, `${spec.path}.id`, `user ${row.id} belongs to another organization (${row.org_id})`);
  if (row.kind !== kind) conflict(ctx, spec.path, `user "${row.user_name}" (${row.id}) is a ${row.kind} user, not a ${kind} user`);
  return row;
}

/**
 * Makes the user's instance-wide roles and its roles in its own organization exactly `roles` (org
 * roles scoped to the org); true when anything changed. Roles in other organizations are the
 * management API's (AddOrganization admins) and are kept.
 */
async function syncRoles(ctx: ApplyContext, userId: string, orgId: string, roles: Role[]): Promise<boolean> {
  const desired: RoleRow[] = roles.map((role) => ({ role, scope_org_id: ORG_ROLES.has(role) ? orgId : '' }));
  const current = await listUserRoles(ctx.trx, userId);
  const owned = (row: RoleRow) => row.scope_org_id === '' || row.scope_org_id === orgId;
  if (sameRoles(current.filter(owned), desired)) return false;
  await replaceUserRoles(ctx.trx, userId, [...current.filter((row) => !owned(row)), ...desired]);
  return true;
}

function newUser(ctx: ApplyContext, orgId: string, id: string, kind: 'human' | 'machine', userName: string): Insertable<UsersTable> {
  return {
    id, instance_id: ctx.instanceId, org_id: orgId, kind, user_name: userName, password_hash: null, email: null, phone: null,
    given_name: null, family_name: null, nickname: null, display_name: null, preferred_language: null, gender: null,
    address: null, secret_hash: null,
  };
}

/** The columns a human spec sets: only what the file names. */
function humanColumns(spec: HumanSpec): UserChanges {
  const columns: UserChanges = {};
  const set = <K extends keyof UserChanges>(key: K, value: UserChanges[K] | undefined) => {
    if (value !== undefined) columns[key] = value;
  };
  set('user_name', spec.userName);
  set('email', spec.email);
  set('email_verified', spec.emailVerified);
  set('phone', spec.phone);
  set('phone_verified', spec.phoneVerified);
  set('given_name', spec.givenName);
  set('family_name', spec.familyName);
  set('nickname', spec.nickname);
  set('display_name', spec.displayName);
  set('preferred_language', spec.preferredLanguage);
  set('gender', spec.gender);
  set('state', spec.state);
  return columns;
}

export async function applyHuman(ctx: ApplyContext, orgId: string, spec: HumanSpec): Promise<string> {
  const row = await findUser(ctx, orgId, spec, 'human');
  const columns = humanColumns(spec);
  const password = spec.password === undefined ? undefined : await secretHash(row?.password_hash, spec.password);
  const address = spec.address === undefined ? undefined : spec.address === null ? null : JSON.stringify(spec.address);
  if (!row) {
    const id = spec.id ?? newId();
    await claim(ctx, `${spec.path}.id`, { type: 'user', id }, [id], true);
    const values = { ...newUser(ctx, orgId, id, 'human', spec.userName), ...columns, password_hash: password?.hash ?? null, address: address ?? null };
    await insertUser(ctx.trx, values);
    if (spec.roles) await syncRoles(ctx, id, orgId, spec.roles);
    await emit(ctx, 'user', id, orgId, 'user.human.added', { userName: spec.userName, roles: spec.roles ?? [] });
    record(ctx, 'user', spec.path, id, 'created');
    return id;
  }
  const changes = changedColumns(row, columns);
  const changed: string[] = Object.keys(changes);
  if (address !== undefined && !sameValue(row.address, spec.address)) {
    changes.address = address;
    changed.push('address');
  }
  if (password?.changed) {
    changes.password_hash = password.hash;
    changed.push('password');
  }
  if (changed.length > 0) await updateUser(ctx.trx, row.id, { ...changes, changed_at: new Date() });
  if (spec.roles && (await syncRoles(ctx, row.id, orgId, spec.roles))) changed.push('roles');
  if (changed.length > 0) await emit(ctx, 'user', row.id, orgId, 'user.human.changed', { changed });
  record(ctx, 'user', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
  return row.id;
}

function machineKeys(ctx: ApplyContext, userId: string): KeyTable {
  return {
    find: (keyId) => findMachineKey(ctx.trx, keyId),
    insert: (key) => insertMachineKey(ctx.trx, { id: key.keyId, user_id: userId, public_key: key.pem, expires_at: key.expiresAt }),
    update: (key) => updateMachineKey(ctx.trx, key.keyId, { public_key: key.pem, expires_at: key.expiresAt }),
  };
}

export async function applyMachine(ctx: ApplyContext, orgId: string, spec: MachineSpec): Promise<string> {
  const row = await findUser(ctx, orgId, spec, 'machine');
  // client_credentials names a machine by its user name alone: unique in the instance.
  const namesake = await findMachineNamesake(ctx.trx, ctx.instanceId, spec.userName, row?.id ?? '');
  if (namesake) conflict(ctx, `${spec.path}.userName`, `machine user name "${spec.userName}" is taken by machine user ${namesake.id} of organization ${namesake.org_id}`);
  // A machine without `secret` in the file keeps the one it has: secrets are also given through the
  // management API (AddSecret), and re-applying the file must not take them away.
  const secret = spec.secret === undefined ? { hash: row?.secret_hash ?? null, changed: false } : await secretHash(row?.secret_hash, spec.secret);
  const columns = { user_name: spec.userName, access_token_type: spec.accessTokenType };
  if (!row) {
    const id = spec.id ?? newId();
    await claim(ctx, `${spec.path}.id`, { type: 'user', id }, [id], true);
    await claim(ctx, `${spec.path}.userName`, { type: 'user', id }, [spec.userName], false);
    await insertUser(ctx.trx, { ...newUser(ctx, orgId, id, 'machine', spec.userName), ...columns, secret_hash: secret.hash });
    await syncRoles(ctx, id, orgId, spec.roles);
    await syncKeys(ctx, id, spec.publicKeys, machineKeys(ctx, id), 'user');
    await emit(ctx, 'user', id, orgId, 'user.machine.added', { userName: spec.userName, roles: spec.roles, keyIds: spec.publicKeys.map((k) => k.keyId) });
    record(ctx, 'machine', spec.path, id, 'created');
    return id;
  }
  const changes: UserChanges = changedColumns(row, columns);
  const changed: string[] = Object.keys(changes);
  if (changes.user_name !== undefined) await claim(ctx, `${spec.path}.userName`, { type: 'user', id: row.id }, [spec.userName], false);
  if (secret.changed) {
    changes.secret_hash = secret.hash;
    changed.push('secret');
  }
  if (changed.length > 0) await updateUser(ctx.trx, row.id, { ...changes, changed_at: new Date() });
  if (await syncRoles(ctx, row.id, orgId, spec.roles)) changed.push('roles');
  if (await syncKeys(ctx, row.id, spec.publicKeys, machineKeys(ctx, row.id), 'user')) changed.push('publicKeys');
  if (changed.length > 0) await emit(ctx, 'user', row.id, orgId, 'user.machine.changed', { changed });
  record(ctx, 'machine', spec.path, row.id, changed.length > 0 ? 'updated' : 'unchanged');
  return row.id;
}
