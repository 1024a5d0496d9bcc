/**
 * Users as the bootstrap file declares them (docs/bootstrap.md#users): added when missing, changed
 * where they differ from the file, left alone (no write, no event) when they do not.
 *
 * - Humans change their own data too (email, phone, password), so only the fields the file names
 *   are enforced; `null` clears one.
 * - Machine users belong to the file: a field left out takes its default. Keys the file does not
 *   list (made by the CLI or the API) and a secret it does not name (given through the API) stay.
 * - A user's instance-wide roles and its roles in its own organization are the file's when it names
 *   them (roles.ts `declareOwnRoles`).
 *
 * Secrets come already decided (`KeptSecret`): the caller re-hashes one only when it no longer
 * verifies, so that applying an unchanged file changes nothing.
 */
import type { DB } from '../../store/database.ts';
import type { Address, UserRow, UserState } from '../../store/schema.ts';
import { findMachineNamesake, updateUser } from '../../store/users.ts';
import type { AccessTokenType } from '../../oidc/vocabulary.ts';
import { declareMachineKeys, type GivenMachineKey } from '../credentials/machine-credentials.ts';
import { changedColumns, sameValue } from '../kernel/changed-fields.ts';
import { appendEvent } from '../kernel/events.ts';
import { declareOwnRoles } from './roles.ts';
import { claimMachineName, storeNewHuman, storeNewMachine, userEvent, type UserWriter } from './user-admin.ts';
import { UserExists, type Gender, type UserColumns } from './user-rules.ts';

/** A secret's hash as it is to be stored (null: none), and whether that differs from the stored one. */
export interface KeptSecret {
  hash: string | null;
  changed: boolean;
}

/** A human user of the file; a field left undefined is left as it is. */
export interface DeclaredHuman {
  userName: string;
  email?: string | null | undefined;
  emailVerified?: boolean | undefined;
  phone?: string | null | undefined;
  phoneVerified?: boolean | undefined;
  givenName?: string | null | undefined;
  familyName?: string | null | undefined;
  nickname?: string | null | undefined;
  displayName?: string | null | undefined;
  preferredLanguage?: string | null | undefined;
  gender?: Gender | null | undefined;
  address?: Address | null | undefined;
  state?: Extract<UserState, 'active' | 'inactive'> | undefined;
  password?: KeptSecret | undefined;
  /** The complete set of its instance-wide and own-organization roles, when given. */
  roles?: readonly string[] | undefined;
}

/** A machine user of the file. */
export interface DeclaredMachine {
  userName: string;
  accessTokenType: AccessTokenType;
  secret: KeptSecret;
  roles: readonly string[];
  /** Added, or updated by keyId. */
  publicKeys: readonly GivenMachineKey[];
}

/**
 * A machine user name another machine of the instance has. It names the holder: the bootstrap file's
 * operator sees every organization anyway, and is told which machine to rename.
 */
export class MachineNameTaken extends UserExists {
  override name = 'MachineNameTaken';
  constructor(userName: string, holder: { id: string; org_id: string }) {
    super('username', `machine user name "${userName}" is taken by machine user ${holder.id} of organization ${holder.org_id}`);
  }
}

/** The columns of the fields the file names. */
function humanColumns(human: DeclaredHuman): UserColumns {
  const columns: UserColumns = {};
  const set = <K extends keyof UserColumns>(key: K, value: UserColumns[K] | undefined) => {
    if (value !== undefined) columns[key] = value;
  };
  set('user_name', human.userName);
  set('email', human.email);
  set('email_verified', human.emailVerified);
  set('phone', human.phone);
  set('phone_verified', human.phoneVerified);
  set('given_name', human.givenName);
  set('family_name', human.familyName);
  set('nickname', human.nickname);
  set('display_name', human.displayName);
  set('preferred_language', human.preferredLanguage);
  set('gender', human.gender);
  set('state', human.state);
  return columns;
}

/** The address column's value (JSON), undefined when the file leaves the address out. */
function addressColumn(address: Address | null | undefined): string | null | undefined {
  return address === undefined ? undefined : address === null ? null : JSON.stringify(address);
}

/** client_credentials names a machine by its user name alone: unique among the instance's machines. */
async function checkMachineName(trx: DB, writer: UserWriter, userName: string, exceptId: string): Promise<void> {
  const namesake = await findMachineNamesake(trx, writer.instanceId, userName, exceptId);
  if (namesake !== undefined) throw new MachineNameTaken(userName, namesake);
}

export async function addDeclaredHuman(trx: DB, writer: UserWriter, orgId: string, id: string, human: DeclaredHuman): Promise<void> {
  const columns: UserColumns = { ...humanColumns(human), password_hash: human.password?.hash ?? null, address: addressColumn(human.address) ?? null };
  await storeNewHuman(trx, writer, orgId, { id, userName: human.userName, columns }, { roles: [...(human.roles ?? [])] });
  if (human.roles !== undefined) await declareOwnRoles(trx, id, orgId, human.roles);
}

/** Makes the human `row` as the file says; true when anything changed (then one `user.human.changed`). */
export async function changeDeclaredHuman(trx: DB, writer: UserWriter, row: UserRow, human: DeclaredHuman): Promise<boolean> {
  const changes: UserColumns = changedColumns(row, humanColumns(human));
  const changed: string[] = Object.keys(changes);
  const address = addressColumn(human.address);
  if (address !== undefined && !sameValue(row.address, human.address)) {
    changes.address = address;
    changed.push('address');
  }
  if (human.password?.changed === true) {
    changes.password_hash = human.password.hash;
    changed.push('password');
  }
  if (changed.length > 0) await updateUser(trx, row.id, { ...changes, changed_at: new Date() });
  if (human.roles !== undefined && (await declareOwnRoles(trx, row.id, row.org_id, human.roles))) changed.push('roles');
  if (changed.length === 0) return false;
  await appendEvent(trx, userEvent(writer, { id: row.id, orgId: row.org_id }, 'user.human.changed', { changed }));
  return true;
}

export async function addDeclaredMachine(trx: DB, writer: UserWriter, orgId: string, id: string, machine: DeclaredMachine): Promise<void> {
  await checkMachineName(trx, writer, machine.userName, '');
  const columns: UserColumns = { access_token_type: machine.accessTokenType, secret_hash: machine.secret.hash };
  const keyIds = machine.publicKeys.map((key) => key.keyId);
  await storeNewMachine(trx, writer, orgId, { id, userName: machine.userName, columns }, { roles: [...machine.roles], keyIds });
  await declareOwnRoles(trx, id, orgId, machine.roles);
  await declareMachineKeys(trx, id, machine.publicKeys);
}

/** Makes the machine `row` as the file says; true when anything changed (then one `user.machine.changed`). */
export async function changeDeclaredMachine(trx: DB, writer: UserWriter, row: UserRow, machine: DeclaredMachine): Promise<boolean> {
  await checkMachineName(trx, writer, machine.userName, row.id);
  const changes: UserColumns = changedColumns(row, { user_name: machine.userName, access_token_type: machine.accessTokenType });
  const changed: string[] = Object.keys(changes);
  if (changes.user_name !== undefined) await claimMachineName(trx, writer, row.id, machine.userName);
  if (machine.secret.changed) {
    changes.secret_hash = machine.secret.hash;
    changed.push('secret');
  }
  if (changed.length > 0) await updateUser(trx, row.id, { ...changes, changed_at: new Date() });
  if (await declareOwnRoles(trx, row.id, row.org_id, machine.roles)) changed.push('roles');
  if (await declareMachineKeys(trx, row.id, machine.publicKeys)) changed.push('publicKeys');
  if (changed.length === 0) return false;
  await appendEvent(trx, userEvent(writer, { id: row.id, orgId: row.org_id }, 'user.machine.changed', { changed }));
  return true;
}
