/**
 * What an external sign-in does once the provider has answered (docs/federation.md#signing-in-with-a-provider):
 * which Gatehouse user the upstream account is, in this order:
 *
 * 1. the user linked to (provider, upstream subject), when that user's organization may use the
 *    provider (its own organization's provider, or an instance provider its effective login
 *    policy lists and allows external sign-in for); a linked user who may not sign in
 *    (deactivated, locked) is refused with the reason, and nothing below is tried;
 * 2. with `autoLinking` email: the one user of an organization this provider may serve whose
 *    verified address equals the upstream's verified address (several: no automatic link), linked
 *    now; with `autoLinking` username: the user the upstream's preferred user name names (in the
 *    application's organization, else as a login name), linked only once the person has signed in
 *    as that user with the existing credentials (the login UI asks, then calls linkUser);
 * 3. with `isAutoCreation`: a new user in the application's organization, linked;
 * 4. else the person chooses: link an existing account (`isLinkingAllowed`) or create one
 *    (`isCreationAllowed`).
 *
 * Trust (docs/security.md): an organization's provider never serves another organization's users,
 * and an instance provider serves only the organizations that list it, so an upstream address,
 * verified or not, never reaches a user of an organization the provider does not serve. The
 * upstream's `emailVerified` is already false for generic OAuth (claims.ts). A linked user's
 * profile and email follow the upstream only with `isAutoUpdate`. Links are made through links.ts
 * (`user.human.externalidp.added`), users through the users wing.
 */
import type { DB } from '../../store/database.ts';
import { findHumansByVerifiedEmail } from '../../store/identity-providers.ts';
import { findIdpLinkBySubject } from '../../store/idp-links.ts';
import { findOrgUserByName, findUserById, userNameTaken } from '../../store/users.ts';
import type { MasterKey } from '../kernel/crypto.ts';
import { newId } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { findHumanByLoginName } from '../sign-in/login-names.ts';
import { isValidEmail } from '../users/email-address.ts';
import { changeHuman, prepareHumanChanges, storeNewHuman, type AdminContext, type ProfilePatch } from '../users/user-admin.ts';
import { effectiveState } from '../users/user-states.ts';
import { userNameProblem } from '../users/user-rules.ts';
import type { UpstreamProfile } from './claims.ts';
import { addLink } from './links.ts';
import { activeProviders, type Provider } from './providers.ts';

/** What deciding and carrying out a first sign-in uses. */
export interface FirstSignInContext {
  db: DB;
  instanceId: string;
  /** GATEHOUSE_EXTERNAL_URL (the users wing's links). */
  externalUrl: string;
  masterKey: Pick<MasterKey, 'encrypt'>;
}

/** The upstream account of a succeeded intent (intents.ts SucceededIntent). */
export interface ExternalAccount {
  providerId: string;
  /** The upstream subject. */
  subject: string;
  /** The upstream's user name for the account (shown in the link). */
  userName: string;
  profile: UpstreamProfile;
}

export type FirstSignIn =
  /** Sign in as `userId`; `how` says how it was found. */
  | { kind: 'user'; userId: string; how: 'linked' | 'auto-linked' | 'created' }
  /** `autoLinking` username: the person must sign in as `userId` first, then linkUser. */
  | { kind: 'confirm'; userId: string }
  /** The linked user may not sign in now: see RefusedSignIn. */
  | RefusedSignIn
  /** Nothing found: what the person may choose. */
  | { kind: 'choose'; canLink: boolean; canCreate: boolean };

/**
 * Why the linked user may not sign in: `inactive` (deactivated), `locked` (an administrator's lock,
 * without `until`; a lockout after failed attempts, until `until`), `not-served` (the user is gone,
 * or its organization no longer uses the provider). The person has proven the upstream account, so
 * the login UI may say which; the user's state is told only when the provider serves the user.
 */
export type RefusedSignIn = { kind: 'refused'; reason: 'inactive' | 'locked' | 'not-served'; until?: Date };

/**
 * Whether `provider` may serve the users of `orgId`: an organization's provider only its own
 * organization; an instance provider the organizations whose effective login policy offers it.
 */
export async function mayServe(db: DB, provider: Provider, orgId: string): Promise<boolean> {
  if (provider.orgId !== null) return provider.orgId === orgId;
  return (await activeProviders(db, provider.instanceId, orgId)).some((active) => active.id === provider.id);
}

/** A user that may sign in now: human, active, not locked out. */
async function usableUser(db: DB, userId: string): Promise<{ id: string; orgId: string } | undefined> {
  const row = await findUserById(db, userId);
  if (row === undefined || row.kind !== 'human' || effectiveState(row) !== 'active') return undefined;
  return { id: row.id, orgId: row.org_id };
}

/** Why the linked user `userId` may not sign in through `provider` now; undefined when it may. */
async function linkedUserRefused(db: DB, provider: Provider, userId: string, now = new Date()): Promise<RefusedSignIn | undefined> {
  const row = await findUserById(db, userId);
  if (row === undefined || row.kind !== 'human' || !(await mayServe(db, provider, row.org_id))) return { kind: 'refused', reason: 'not-served' };
  switch (effectiveState(row, now)) {
    case 'active':
      return undefined;
    case 'inactive':
      return { kind: 'refused', reason: 'inactive' };
    case 'locked':
      // An administrator's lock lasts until unlocked; a lockout ends by itself (lockout.ts).
      return row.state === 'locked' || row.locked_until === null ? { kind: 'refused', reason: 'locked' } : { kind: 'refused', reason: 'locked', until: row.locked_until };
  }
}

function adminContext(ctx: FirstSignInContext, creator: string): AdminContext {
  return { instanceId: ctx.instanceId, externalUrl: ctx.externalUrl, masterKey: ctx.masterKey, creator };
}

/**
 * Decides and carries out steps 1 to 3 above for an upstream account of `provider`, signed in for an
 * application of `appOrgId` (undefined: the login UI's own request, which creates no users).
 */
export async function decideFirstSignIn(ctx: FirstSignInContext, provider: Provider, account: ExternalAccount, appOrgId: string | undefined): Promise<FirstSignIn> {
  if (account.providerId !== provider.id) throw new Error('the account is not of this provider');
  const { db } = ctx;
  const link = await findIdpLinkBySubject(db, ctx.instanceId, provider.id, account.subject);
  if (link !== undefined) {
    const refused = await linkedUserRefused(db, provider, link.user_id);
    if (refused !== undefined) return refused;
    if (provider.options.isAutoUpdate) await updateFromUpstream(ctx, link.user_id, account.profile);
    return { kind: 'user', userId: link.user_id, how: 'linked' };
  }

  const { options } = provider;
  const email = account.profile.email;
  if (options.autoLinking === 'email' && email !== undefined && account.profile.emailVerified) {
    const candidates = await findHumansByVerifiedEmail(db, ctx.instanceId, email, 10);
    const served: string[] = [];
    for (const candidate of candidates) {
      if ((await mayServe(db, provider, candidate.org_id)) && (await usableUser(db, candidate.id)) !== undefined) served.push(candidate.id);
    }
    // One match only: with several, the address does not say which account the person means.
    if (served.length === 1 && candidates.length < 10) {
      await linkUser(ctx, provider, served[0]!, account);
      if (options.isAutoUpdate) await updateFromUpstream(ctx, served[0]!, account.profile);
      return { kind: 'user', userId: served[0]!, how: 'auto-linked' };
    }
  }
  const preferredName = account.profile.userName;
  if (options.autoLinking === 'username' && preferredName !== undefined && preferredName !== '') {
    const userId = await userOfPreferredName(ctx, provider, preferredName, appOrgId);
    if (userId !== undefined) return { kind: 'confirm', userId };
  }

  const canCreate = appOrgId !== undefined && (await mayServe(db, provider, appOrgId));
  if (options.isAutoCreation && canCreate) {
    const userId = await createLinkedUser(ctx, provider, account, appOrgId);
    return { kind: 'user', userId, how: 'created' };
  }
  return { kind: 'choose', canLink: options.isLinkingAllowed, canCreate: options.isCreationAllowed && canCreate };
}

/**
 * `autoLinking` username: the user the upstream's preferred user name names (only that claim, as
 * ZITADEL: not the email or subject the link shows when it is missing). A user of that name in the
 * application's organization first (the same name may be taken in another organization), else the
 * user of that login name (login-names.ts); only one who may sign in, of an organization the
 * provider serves.
 */
async function userOfPreferredName(ctx: FirstSignInContext, provider: Provider, name: string, appOrgId: string | undefined): Promise<string | undefined> {
  const served = async (userId: string | undefined): Promise<string | undefined> => {
    const user = userId === undefined ? undefined : await usableUser(ctx.db, userId);
    return user !== undefined && (await mayServe(ctx.db, provider, user.orgId)) ? user.id : undefined;
  };
  const inAppOrg = appOrgId === undefined ? undefined : await served((await findOrgUserByName(ctx.db, appOrgId, name))?.id);
  return inAppOrg ?? (await served(await findHumanByLoginName(ctx.db, ctx.instanceId, name)));
}

/**
 * Links the upstream account to `userId`, who has just proved to be that user (or was found by a
 * verified address): refused (false) when the provider may not serve the user's organization or the
 * account is linked already.
 */
export async function linkUser(ctx: FirstSignInContext, provider: Provider, userId: string, account: ExternalAccount): Promise<boolean> {
  const user = await usableUser(ctx.db, userId);
  if (user === undefined || !(await mayServe(ctx.db, provider, user.orgId))) return false;
  try {
    await ctx.db.transaction().execute((trx) => addLink(trx, userId, { id: userId, instanceId: ctx.instanceId, orgId: user.orgId, kind: 'human', hasPassword: true }, linkOf(provider, account)));
    return true;
  } catch (error) {
    if (error instanceof Refusal && error.kind === 'exists') return false;
    throw error;
  }
}

/** The link's fields as links.ts takes them (ZITADEL's IDPLink: 1–200 characters each). */
function linkOf(provider: Provider, account: ExternalAccount): { idpId: string; externalUserId: string; externalUserName: string } {
  return { idpId: provider.id, externalUserId: account.subject, externalUserName: [...(account.userName || account.subject)].slice(0, 200).join('') };
}

const MAX_USER_NAME = 200;

/**
 * A user name for a new user: the upstream's preferred user name, else its email, else the
 * subject, made valid (no spaces or control characters) and free in the instance (a number
 * appended, else a fresh id).
 */
export async function freeUserName(db: DB, instanceId: string, account: ExternalAccount): Promise<string> {
  const wanted = [account.profile.userName, account.profile.email, account.subject].find((value) => value !== undefined && value !== '') ?? newId();
  const base = [...wanted.replace(/[\s\p{Cc}]+/gu, '_')].slice(0, MAX_USER_NAME - 4).join('');
  const valid = userNameProblem(base) === undefined ? base : newId();
  for (let n = 1; n <= 20; n++) {
    const name = n === 1 ? valid : `${valid}-${n}`;
    if (!(await userNameTaken(db, instanceId, name))) return name;
  }
  return newId();
}

/** Fields of a registration form the person may have changed (the "Create an account" page). */
export interface CreationInput {
  userName?: string | undefined;
  givenName?: string | undefined;
  familyName?: string | undefined;
  email?: string | undefined;
}

/**
 * Creates a user in `orgId` from the upstream profile (the form's fields win), without a password,
 * linked to the account. The email counts as verified only when the upstream vouches for this very
 * address. Returns the user's id; Refusal 'exists' when the account was linked meanwhile.
 */
export async function createLinkedUser(ctx: FirstSignInContext, provider: Provider, account: ExternalAccount, orgId: string, input: CreationInput = {}): Promise<string> {
  const { profile } = account;
  const userName = input.userName ?? (await freeUserName(ctx.db, ctx.instanceId, account));
  const givenName = input.givenName ?? profile.givenName ?? profile.displayName ?? userName;
  const familyName = input.familyName ?? profile.familyName ?? '';
  const email = input.email ?? (profile.email !== undefined && isValidEmail(profile.email) ? profile.email : undefined);
  const emailVerified = email !== undefined && email === profile.email && profile.emailVerified;
  const userId = newId();
  await ctx.db.transaction().execute(async (trx) => {
    const columns = {
      email: email ?? null,
      email_verified: emailVerified,
      given_name: givenName,
      family_name: familyName,
      nickname: profile.nickName ?? null,
      display_name: profile.displayName ?? `${givenName} ${familyName}`.trim(),
      preferred_language: profile.locale ?? null,
    };
    // The user is its own creator, as a self-registered one (registration.ts).
    await storeNewHuman(trx, { instanceId: ctx.instanceId, creator: userId }, orgId, { id: userId, userName, columns }, { selfRegistered: true });
    // Linked meanwhile (a second tab): addLink refuses ('exists'), and no user stays without its link.
    await addLink(trx, userId, { id: userId, instanceId: ctx.instanceId, orgId, kind: 'human', hasPassword: false }, linkOf(provider, account));
  });
  return userId;
}

/**
 * `isAutoUpdate`: the user's profile and email as the upstream says now. The email is verified only
 * when the upstream vouches for it; an address the upstream does not vouch for replaces the stored
 * one unverified (its code is kept, not mailed: the person did not ask for it).
 */
async function updateFromUpstream(ctx: FirstSignInContext, userId: string, profile: UpstreamProfile): Promise<void> {
  const patch: ProfilePatch = {};
  if (profile.givenName !== undefined) patch.givenName = profile.givenName;
  if (profile.familyName !== undefined) patch.familyName = profile.familyName;
  if (profile.nickName !== undefined) patch.nickName = profile.nickName;
  if (profile.displayName !== undefined) patch.displayName = profile.displayName;
  let changes;
  try {
    changes = await prepareHumanChanges({
      profile: patch,
      ...(profile.email !== undefined && isValidEmail(profile.email)
        ? { email: { address: profile.email, verification: profile.emailVerified ? { kind: 'verified' as const } : { kind: 'return' as const } } }
        : {}),
    });
  } catch {
    return; // the upstream's values do not fit Gatehouse's rules: the user keeps the stored ones
  }
  await ctx.db.transaction().execute(async (trx) => {
    await changeHuman(trx, adminContext(ctx, userId), userId, changes, { self: true, passwordChange: { kind: 'everything' } });
  });
}
