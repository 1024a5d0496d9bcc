/**
 * Passkeys of human users (docs/passkeys.md): the user as the ceremonies see it, listing and removal.
 * Registration is in passkey-registration.ts, sign-in in passkey-sign-in.ts, registration codes and
 * their mail in passkey-codes.ts, the relying party in passkey-party.ts.
 *
 * - Removal: Gatehouse has no per-user factor policy (the login UI asks for a one-time password only
 *   when the user set one up), so no policy is broken by removing a passkey. What is refused is the
 *   user itself removing its last passkey when it has no password: it could not sign in any more.
 *   An administrator may (it can send a registration link).
 */
import type { DB } from '../../store/database.ts';
import { countReadyPasskeys, deletePasskey, findPasskeyForUpdate, findPasskeyUser, listUserPasskeys } from '../../store/passkeys.ts';
import type { UserKind, UserState } from '../../store/schema.ts';
import { takeUserRowLock } from '../../store/users.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { relyingParty } from './passkey-party.ts';
import type { Config } from '../../config/index.ts';

/** What the passkeys' reads and removal use: the database and the relying party's configuration. */
export interface PasskeysContext {
  db: DB;
  config: Pick<Config, 'externalUrl' | 'webauthnRpId'>;
}

/** Passkeys are off for this deployment (passkey-party.ts says why). */
export class PasskeysDisabled extends Error {
  override name = 'PasskeysDisabled';
}

/** The relying party, or PasskeysDisabled. */
export function enabledRelyingParty(ctx: Pick<PasskeysContext, 'config'>): { id: string; origin: string } {
  const party = relyingParty(ctx.config);
  if (!party.enabled) throw new PasskeysDisabled(party.reason);
  return party;
}

/** A user as the passkey ceremonies need it. */
export interface PasskeyUser {
  id: string;
  instanceId: string;
  orgId: string;
  kind: UserKind;
  state: UserState;
  /** userName@primaryDomain: the WebAuthn user name the authenticator shows. */
  loginName: string;
  displayName: string;
  orgName: string;
  hasPassword: boolean;
}

export async function loadPasskeyUser(db: DB, instanceId: string, userId: string): Promise<PasskeyUser | undefined> {
  const row = await findPasskeyUser(db, instanceId, userId);
  if (row === undefined) return undefined;
  const loginName = `${row.user_name}@${row.primary_domain}`;
  const fullName = [row.given_name, row.family_name].filter((part) => part !== null && part.trim() !== '').join(' ');
  return {
    id: row.id,
    instanceId: row.instance_id,
    orgId: row.org_id,
    kind: row.kind,
    state: row.state,
    loginName,
    displayName: row.display_name?.trim() || fullName || loginName,
    orgName: row.org_name,
    hasPassword: row.has_password,
  };
}

export interface PasskeyInfo {
  id: string;
  state: 'pending' | 'ready';
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Its counter went backwards once: it no longer signs in (passkey-sign-in.ts). */
  possiblyCloned: boolean;
}

/** The user's passkeys: the ready ones and an unexpired pending registration, oldest first. */
export async function listPasskeys(db: DB, userId: string, now = new Date()): Promise<PasskeyInfo[]> {
  const rows = await listUserPasskeys(db, userId, now);
  return rows.map((row) => ({ id: row.id, state: row.state, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at, possiblyCloned: row.possibly_cloned }));
}

/** Whether the user can sign in with a passkey (on relying party `rpId`, when given). */
export async function hasReadyPasskey(db: DB, userId: string, rpId?: string): Promise<boolean> {
  return (await countReadyPasskeys(db, userId, rpId)) > 0;
}

export type RemovePasskeyResult = { kind: 'removed'; details: ChangeDetails } | { kind: 'not_found' } | { kind: 'last_sign_in_method' };

/**
 * Removes a passkey (ready or pending). `byAdministrator`: someone who manages the user, not the
 * user itself; only the user itself is kept from removing its last way to sign in.
 */
export async function removePasskey(
  ctx: PasskeysContext,
  user: Pick<PasskeyUser, 'id' | 'orgId' | 'instanceId'>,
  passkeyId: string,
  input: { creator: string; byAdministrator: boolean },
): Promise<RemovePasskeyResult> {
  return ctx.db.transaction().execute(async (trx): Promise<RemovePasskeyResult> => {
    await takeUserRowLock(trx, user.id);
    const row = await findPasskeyForUpdate(trx, user.id, passkeyId);
    if (row === undefined) return { kind: 'not_found' };
    if (row.state === 'ready' && !input.byAdministrator) {
      const current = await findPasskeyUser(trx, user.instanceId, user.id);
      if (current !== undefined && !current.has_password && (await countReadyPasskeys(trx, user.id)) <= 1) return { kind: 'last_sign_in_method' };
    }
    await deletePasskey(trx, row.id);
    const details = await appendEvent(trx, {
      instanceId: user.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.passwordless.token.removed',
      creator: input.creator,
      payload: { passkeyId: row.id },
    });
    return { kind: 'removed', details };
  });
}
