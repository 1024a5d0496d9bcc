/**
 * Human and machine users of one organization, as the file declares them: found by id or by user
 * name in the organization, then added or changed by the users wing (domain/users/declared-users.ts),
 * whose refusals become conflicts at the user's path.
 */
import { newId } from '../domain/kernel/ids.ts';
import { sha256 } from '../domain/kernel/crypto.ts';
import {
  addPersonalAccessToken,
  isPersonalAccessToken,
  newPersonalAccessToken,
  personalAccessTokenScopes,
  removePersonalAccessToken,
} from '../domain/tokens/personal-access-tokens.ts';
import { MachineKeyTaken } from '../domain/credentials/machine-credentials.ts';
import {
  addDeclaredHuman,
  addDeclaredMachine,
  changeDeclaredHuman,
  changeDeclaredMachine,
  MachineNameTaken,
  type DeclaredHuman,
  type DeclaredMachine,
} from '../domain/users/declared-users.ts';
import { UserExists } from '../domain/users/user-rules.ts';
import type { UserRow } from '../store/schema.ts';
import { findOrgUserByName, findUserById } from '../store/users.ts';
import { findPersonalAccessToken } from '../store/personal-access-tokens.ts';
import { conflict, match, record, refusedAt, secretHash, takenMessage, writer, type ApplyContext } from './apply-support.ts';
import type { HumanSpec, MachineSpec, PatSpec } from './document.ts';
import { readTokenFile } from './token-files.ts';

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

/** Where in the file a refusal of the users wing belongs, and what the file's operator is told. */
function userConflict(spec: HumanSpec | MachineSpec, id: string) {
  return (refusal: Error): { path: string; message?: string } | undefined => {
    if (refusal instanceof MachineNameTaken) return { path: `${spec.path}.userName`, message: refusal.reason };
    if (refusal instanceof UserExists && refusal.field === 'userId') return { path: `${spec.path}.id`, message: takenMessage(id) };
    if (refusal instanceof UserExists && refusal.field === 'username') return { path: `${spec.path}.userName`, message: takenMessage(spec.userName) };
    if (refusal instanceof MachineKeyTaken) {
      const key = 'publicKeys' in spec ? spec.publicKeys.find((k) => k.keyId === refusal.keyId) : undefined;
      return key === undefined ? undefined : { path: `${key.path}.keyId` };
    }
    return undefined;
  };
}

export async function applyHuman(ctx: ApplyContext, orgId: string, spec: HumanSpec): Promise<string> {
  const row = await findUser(ctx, orgId, spec, 'human');
  const human: DeclaredHuman = { ...spec, password: spec.password === undefined ? undefined : await secretHash(row?.password_hash, spec.password) };
  if (!row) {
    const id = spec.id ?? newId();
    await refusedAt(ctx, spec.path, () => addDeclaredHuman(ctx.trx, writer(ctx), orgId, id, human), userConflict(spec, id));
    record(ctx, 'user', spec.path, id, 'created');
    return id;
  }
  const changed = await refusedAt(ctx, spec.path, () => changeDeclaredHuman(ctx.trx, writer(ctx), row, human), userConflict(spec, row.id));
  record(ctx, 'user', spec.path, row.id, changed ? 'updated' : 'unchanged');
  return row.id;
}

export async function applyMachine(ctx: ApplyContext, orgId: string, spec: MachineSpec): Promise<string> {
  const row = await findUser(ctx, orgId, spec, 'machine');
  // A machine without `secret` in the file keeps the one it has: secrets are also given through the
  // management API (AddSecret), and re-applying the file must not take them away.
  const secret = spec.secret === undefined ? { hash: row?.secret_hash ?? null, changed: false } : await secretHash(row?.secret_hash, spec.secret);
  const machine: DeclaredMachine = { ...spec, secret };
  if (!row) {
    const id = spec.id ?? newId();
    await refusedAt(ctx, spec.path, () => addDeclaredMachine(ctx.trx, writer(ctx), orgId, id, machine), userConflict(spec, id));
    record(ctx, 'machine', spec.path, id, 'created');
    return id;
  }
  const changed = await refusedAt(ctx, spec.path, () => changeDeclaredMachine(ctx.trx, writer(ctx), row, machine), userConflict(spec, row.id));
  record(ctx, 'machine', spec.path, row.id, changed ? 'updated' : 'unchanged');
  return row.id;
}

/**
 * The machine user's tokens the file keeps in files (docs/bootstrap.md#personal-access-tokens): a
 * file that holds a token of this user with the expiry the file gives is left alone; otherwise a new
 * token is made, the one the file held (if it was this user's) removed, and the file written after
 * the commit. So re-applying the file changes nothing, and a changed expiry rotates the token.
 */
export async function applyMachinePats(ctx: ApplyContext, orgId: string, userId: string, specs: readonly PatSpec[], apiScope: string): Promise<void> {
  const owner = { instanceId: ctx.instanceId, orgId, userId, creator: writer(ctx).creator };
  for (const spec of specs) {
    const held = readTokenFile(spec.writeTo);
    const current = held !== undefined && isPersonalAccessToken(held) ? await findPersonalAccessToken(ctx.trx, sha256(held)) : undefined;
    const own = current !== undefined && current.user_id === userId ? current : undefined;
    if (own !== undefined && own.expires_at.getTime() === spec.expirationDate.getTime()) {
      record(ctx, 'pat', spec.path, own.id, 'unchanged');
      continue;
    }
    if (own !== undefined) await removePersonalAccessToken(ctx.trx, owner, own.id);
    const token = newPersonalAccessToken();
    await addPersonalAccessToken(ctx.trx, owner, { id: token.id, hash: token.hash, expiresAt: spec.expirationDate, scopes: personalAccessTokenScopes(apiScope) });
    ctx.files.push({ path: spec.writeTo, content: token.token });
    record(ctx, 'pat', spec.path, token.id, own !== undefined ? 'updated' : 'created');
  }
}
