/**
 * Passkeys (`passkeys`, `passkey_challenges`, `passkey_codes`; docs/passkeys.md): WebAuthn credentials
 * (pending until their registration is verified), the single-use challenges of passkey sign-ins,
 * and the codes that let someone register a passkey for a user. Every statement of the three tables.
 */
import { sql, type Selectable } from 'kysely';
import type { DB } from './database.ts';
import type { PasskeyChallengesTable, PasskeyCodesTable, PasskeysTable, UserKind, UserState } from './schema.ts';

export type PasskeyRow = Selectable<PasskeysTable>;
export type PasskeyChallengeRow = Selectable<PasskeyChallengesTable>;
export type PasskeyCodeRow = Selectable<PasskeyCodesTable>;

/** What a passkey ceremony needs of its user: the WebAuthn user entity and the relying party name. */
export interface PasskeyUserRow {
  id: string;
  instance_id: string;
  org_id: string;
  kind: UserKind;
  state: UserState;
  user_name: string;
  display_name: string | null;
  given_name: string | null;
  family_name: string | null;
  primary_domain: string;
  org_name: string;
  has_password: boolean;
}

export async function findPasskeyUser(db: DB, instanceId: string, userId: string): Promise<PasskeyUserRow | undefined> {
  return db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select([
      'users.id',
      'users.instance_id',
      'users.org_id',
      'users.kind',
      'users.state',
      'users.user_name',
      'users.display_name',
      'users.given_name',
      'users.family_name',
      'orgs.primary_domain',
      'orgs.name as org_name',
      sql<boolean>`users.password_hash is not null`.as('has_password'),
    ])
    .where('users.id', '=', userId)
    .where('users.instance_id', '=', instanceId)
    .executeTakeFirst();
}

// --- credentials and registrations ---

/** Replaces the user's pending registration (one at a time) with a new one. */
export async function replacePendingPasskey(
  db: DB,
  row: { id: string; instance_id: string; user_id: string; rp_id: string; challenge: string; expires_at: Date; code_holder: string | null; created_at: Date },
): Promise<void> {
  await db.deleteFrom('passkeys').where('user_id', '=', row.user_id).where('state', '=', 'pending').execute();
  await db
    .insertInto('passkeys')
    .values({ ...row, state: 'pending', sign_count: 0, transports: [], changed_at: row.created_at })
    .execute();
}

/** A passkey of the user, pending or ready, its row locked for the transaction. */
export async function findPasskeyForUpdate(db: DB, userId: string, passkeyId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('id', '=', passkeyId).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

/** Who started a pending registration with a code (see domain/passkeys.ts), and for whom. */
export async function findPendingPasskeyHolder(db: DB, passkeyId: string): Promise<{ user_id: string; code_holder: string | null } | undefined> {
  return db.selectFrom('passkeys').select(['user_id', 'code_holder']).where('id', '=', passkeyId).where('state', '=', 'pending').executeTakeFirst();
}

/** A pending registration verified: the credential is stored and ready. */
export async function markPasskeyReady(
  db: DB,
  passkeyId: string,
  credential: { credential_id: string; public_key: string; sign_count: number; transports: string[]; name: string },
  now: Date,
): Promise<void> {
  await db
    .updateTable('passkeys')
    .set({ ...credential, state: 'ready', challenge: null, expires_at: null, code_holder: null, changed_at: now })
    .where('id', '=', passkeyId)
    .execute();
}

/** Whether a credential id is registered already (to any user). */
export async function credentialIdTaken(db: DB, credentialId: string): Promise<boolean> {
  const row = await db.selectFrom('passkeys').select('id').where('credential_id', '=', credentialId).executeTakeFirst();
  return row !== undefined;
}

/** The user's ready passkeys and its unexpired pending one, oldest first. */
export async function listUserPasskeys(db: DB, userId: string, now: Date): Promise<PasskeyRow[]> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('state', '=', 'ready'), eb('expires_at', '>', now)]))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The credential ids (and transports) of the user's ready passkeys. */
export async function listReadyCredentials(db: DB, userId: string): Promise<Array<{ credential_id: string | null; transports: string[] }>> {
  return db.selectFrom('passkeys').select(['credential_id', 'transports']).where('user_id', '=', userId).where('state', '=', 'ready').orderBy('created_at').execute();
}

/** How many ready passkeys the user has (on `rpId` only, when given). */
export async function countReadyPasskeys(db: DB, userId: string, rpId?: string): Promise<number> {
  let query = db.selectFrom('passkeys').select((eb) => eb.fn.countAll<string>().as('count')).where('user_id', '=', userId).where('state', '=', 'ready');
  if (rpId !== undefined) query = query.where('rp_id', '=', rpId);
  const row = await query.executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** A ready credential by its id. */
export async function findReadyCredential(db: DB, instanceId: string, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).where('instance_id', '=', instanceId).where('state', '=', 'ready').executeTakeFirst();
}

/** A ready credential by its id, its row locked for the transaction. */
export async function findReadyCredentialForUpdate(db: DB, instanceId: string, credentialId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .where('instance_id', '=', instanceId)
    .where('state', '=', 'ready')
    .forUpdate()
    .executeTakeFirst();
}

/** A sign-in with the credential: its new counter and when it was used. */
export async function recordPasskeyUse(db: DB, passkeyId: string, signCount: number, now: Date): Promise<void> {
  await db.updateTable('passkeys').set({ sign_count: signCount, last_used_at: now }).where('id', '=', passkeyId).execute();
}

/** The credential's counter went backwards: it may have been cloned. */
export async function markPasskeyPossiblyCloned(db: DB, passkeyId: string, now: Date): Promise<void> {
  await db.updateTable('passkeys').set({ possibly_cloned: true, changed_at: now }).where('id', '=', passkeyId).execute();
}

export async function deletePasskey(db: DB, passkeyId: string): Promise<void> {
  await db.deleteFrom('passkeys').where('id', '=', passkeyId).execute();
}

// --- sign-in challenges ---

/** Stores a sign-in challenge, and drops lapsed ones on the way (they are never used again). */
export async function insertPasskeyChallenge(db: DB, row: Omit<PasskeyChallengeRow, 'created_at'> & { created_at: Date }): Promise<void> {
  await db.deleteFrom('passkey_challenges').where('expires_at', '<=', row.created_at).execute();
  await db.insertInto('passkey_challenges').values(row).execute();
}

/** Takes a challenge: deleted whatever comes of it, so it is used at most once. */
export async function takePasskeyChallenge(db: DB, instanceId: string, challengeId: string): Promise<PasskeyChallengeRow | undefined> {
  return db.deleteFrom('passkey_challenges').where('id', '=', challengeId).where('instance_id', '=', instanceId).returningAll().executeTakeFirst();
}

// --- registration codes ---

/** Stores the user's registration code, replacing any previous one. */
export async function upsertPasskeyCode(db: DB, userId: string, code: { id: string; code_hash: string; salt: string; expires_at: Date; created_at: Date }): Promise<void> {
  const values = { ...code, attempts: 0 };
  await db
    .insertInto('passkey_codes')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
}

/** The user's pending code, its row locked for the transaction. */
export async function findPasskeyCodeForUpdate(db: DB, userId: string): Promise<PasskeyCodeRow | undefined> {
  return db.selectFrom('passkey_codes').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

export async function countPasskeyCodeAttempt(db: DB, userId: string): Promise<void> {
  await db.updateTable('passkey_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('user_id', '=', userId).execute();
}

export async function deletePasskeyCode(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('passkey_codes').where('user_id', '=', userId).execute();
}

/** Removes the user's registrations that were started and not verified. */
export async function deletePendingPasskeys(db: DB, userId: string): Promise<void> {
  await db.deleteFrom('passkeys').where('user_id', '=', userId).where('state', '=', 'pending').execute();
}
