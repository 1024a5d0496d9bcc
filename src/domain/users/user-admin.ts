/**
 * Creating and changing users through the management API (docs/decisions.md#users;
 * docs/security.md 10.1, 10.12); what a user may be is user-rules.ts, its lifecycle user-states.ts.
 *
 * - Every new user, whoever adds it (the API, the bootstrap file through declared-users.ts, a human
 *   registering itself through registration.ts), is stored and announced here (`storeNewHuman`,
 *   `storeNewMachine`): one shape of `user.human.added` and of `user.machine.added`.
 * - Uniqueness: user names per organization, case-insensitively; machine user names also across the
 *   instance, since client_credentials names a machine by its user name alone. A user renaming
 *   itself may not take a name any user of the instance has (docs/security.md 10.12, as
 *   self-registration).
 * - Two locks, kept apart: `state = 'locked'` is an administrator's lock, lasting until UnlockUser;
 *   `locked_until` is the brute-force lockout (lockout.ts), which expires by itself and does not end
 *   sessions. LockUser sets the first only; UnlockUser clears both (docs/security.md 10.3: an
 *   administrator's unlock resets the failures). The API reports either as locked (user-states.ts
 *   effectiveState).
 *
 * Every change appends its events in the caller's transaction; the details returned are the last one's.
 * Passwords are hashed before the transaction (prepare*), never inside it.
 */
import type { Insertable } from 'kysely';
import { TemplateError } from '../../mail/template.ts';
import type { DB } from '../../store/database.ts';
import { deleteEmailCode } from '../../store/email-codes.ts';
import { markOtpFactorReady, upsertUnverifiedOtpFactor } from '../../store/otp-factors.ts';
import type { UserRow, UsersTable } from '../../store/schema.ts';
import {
  findOrgUserByName,
  findUserById,
  findUserForUpdate,
  insertUser,
  isUniqueViolation,
  setUserEmail,
  updateUser,
  userNameTakenByOther,
} from '../../store/users.ts';
import { decoyVerify, hashSecret, verifySecret } from '../kernel/crypto.ts';
import { countFailedAttempt, currentLock } from '../sign-in/lockout.ts';
import { secretTry } from '../sign-in/secret-tries.ts';
import { vouchedChange, type Voucher } from './contact-email.ts';
import { issueEmailCode, type CodeDelivery } from '../credentials/email-codes.ts';
import { claimIdentifiersFor, claimNewIdentifiers, IdentifierTaken } from '../kernel/identifiers.ts';
import { appendEvent, type ChangeDetails, type EventInput } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import {
  type EmailInput,
  type Gender,
  type NewHuman,
  type NewMachine,
  type PhoneInput,
  type UserColumns,
  UserExists,
  UserInputError,
  UserStateConflict,
  check,
  checkEmail,
  checkLanguage,
  checkPassword,
  checkPhone,
  checkTotpSecret,
  descriptionProblem,
  optionalName,
  profileColumns,
  userNameProblem,
} from './user-rules.ts';
import { idProblem, nameProblem } from '../kernel/names.ts';
import { OTP_WINDOW, otpStep } from '../credentials/otp.ts';
import { endAccessForPasswordChange, type EndedAccess, type PasswordChange } from './user-lifecycle.ts';
import type { MasterKey } from '../kernel/crypto.ts';
import type { LockoutContext } from '../sign-in/lockout.ts';
import type { PayloadArgument, UserEvents, UserEventType } from '../kernel/event-types.ts';

/** A user created: its id, the last event's details, the email code for `return` delivery. */
export interface AddedUser {
  id: string;
  createdAt: Date;
  details: ChangeDetails;
  emailCode?: string;
}

/** Who changes users, in which instance: what every change uses. */
export interface AdminContext {
  instanceId: string;
  /** GATEHOUSE_EXTERNAL_URL, for the links of code mails. */
  externalUrl: string;
  /** Seals a given authenticator-app secret. */
  masterKey: Pick<MasterKey, 'encrypt'>;
  /** The events' creator (principal.ts `creatorOf`). */
  creator: string;
  /** Whose addresses the caller's `isVerified` may vouch for (contact-email.ts vouchedChange); 'instance' when absent. */
  voucher?: Voucher | undefined;
}

// ---- creating users ----

/** A new human, checked and its password hashed: what addHuman stores. */
export interface PreparedHuman {
  id: string;
  userName: string;
  columns: UserColumns;
  email: EmailInput;
  totpSecret: string | undefined;
}

function checkId(field: string, id: string | undefined): string {
  if (id === undefined || id === '') return newId();
  check(field, idProblem(id));
  return id;
}

/** Checks a new human (`prefix` names where it sits in the request) and hashes its password. */
export async function prepareHuman(input: NewHuman, prefix = ''): Promise<PreparedHuman> {
  const id = checkId('userId', input.id);
  const address = checkEmail(`${prefix}email.email`, input.email.address.trim());
  const userName = input.userName ?? address;
  check('username', userNameProblem(userName));
  const columns: UserColumns = { ...profileColumns(prefix, input.profile), email: address, email_verified: input.email.verification.kind === 'verified' };
  if (input.phone !== undefined) {
    columns.phone = checkPhone(`${prefix}phone.phone`, input.phone.number);
    columns.phone_verified = input.phone.verified;
  }
  const totpSecret = input.totpSecret === undefined ? undefined : checkTotpSecret(`${prefix}totpSecret`, input.totpSecret);
  if (input.password !== undefined) checkPassword(`${prefix}password.password`, input.password);
  // Slow (argon2id): before the transaction.
  if (input.password !== undefined) columns.password_hash = await hashSecret(input.password);
  return { id, userName, columns, email: { ...input.email, address }, totpSecret };
}

/** Checks a new machine user. */
export function prepareMachine(input: NewMachine): { id: string; userName: string; name: string; description: string | null } {
  const id = checkId('userId', input.id);
  const userName = input.userName ?? id;
  check('username', userNameProblem(userName));
  check('machine.name', nameProblem(input.name));
  const description = input.description === undefined || input.description === '' ? null : input.description;
  if (description !== null) check('machine.description', descriptionProblem(description));
  return { id, userName, name: input.name, description };
}

/** The checks of a new user the API adds: its id and its name in the organization must be free. */
async function checkNewUser(trx: DB, orgId: string, id: string, userName: string): Promise<void> {
  if (await findUserById(trx, id)) throw new UserExists('userId', ID_TAKEN);
  if (await findOrgUserByName(trx, orgId, userName)) throw new UserExists('username', 'the user name is taken in this organization');
}

const ID_TAKEN = 'the id is taken';
/** Whoever holds the name: another machine user, an application's client id, a project id, of any organization. */
const MACHINE_NAME_TAKEN = 'the user name is taken in the instance (client_credentials names a machine by its user name alone)';

/**
 * Claims a new user's id in the instance's namespace of token names (identifiers.ts): one answer for
 * a taken id whatever holds it, even a deleted user.
 */
async function claimUserId(trx: DB, writer: UserWriter, id: string, now: Date): Promise<void> {
  await claimNewIdentifiers(trx, writer.instanceId, { type: 'user', id }, [id], now).catch((error: unknown) => {
    throw error instanceof IdentifierTaken ? new UserExists('userId', ID_TAKEN) : error;
  });
}

/** Claims a machine's user name, its client id, for the machine `id` (an earlier name of its own is free). */
export async function claimMachineName(trx: DB, writer: UserWriter, id: string, userName: string, now = new Date()): Promise<void> {
  await claimIdentifiersFor(trx, writer.instanceId, { type: 'user', id }, [userName], now).catch((error: unknown) => {
    throw error instanceof IdentifierTaken ? new UserExists('username', MACHINE_NAME_TAKEN) : error;
  });
}

/** Inserts a new user's row: a concurrent insert that took its name in the organization first refuses it. */
async function insertNewUser(trx: DB, row: Parameters<typeof insertUser>[1]): Promise<void> {
  await insertUser(trx, row).catch((error: unknown) => {
    throw isUniqueViolation(error) ? new UserExists('username', 'a user with this user name or id already exists') : error;
  });
}

/** Who writes, in which instance: what a user's events need. */
export type UserWriter = Pick<AdminContext, 'instanceId' | 'creator'>;

/** A `user` event of a change an administrator (or the user) made; `payload` as its type has it (kernel/event-types.ts). */
export function userEvent<T extends UserEventType>(ctx: UserWriter, user: { id: string; orgId: string }, type: T, ...payload: PayloadArgument<T>): EventInput<T> {
  return { instanceId: ctx.instanceId, aggregateId: user.id, resourceOwner: user.orgId, type, creator: ctx.creator, payload: payload[0] ?? {} } as EventInput<T>;
}

function newRow(writer: UserWriter, orgId: string, id: string, kind: 'human' | 'machine', userName: string, now: Date): Insertable<UsersTable> {
  return {
    id, instance_id: writer.instanceId, org_id: orgId, kind, user_name: userName, password_hash: null, email: null, phone: null,
    given_name: null, family_name: null, nickname: null, display_name: null, preferred_language: null, gender: null,
    address: null, secret_hash: null, created_at: now, changed_at: now,
  };
}

/** The payload of `user.human.added` (kernel/event-types.ts). */
export type HumanAdded = UserEvents['user.human.added'];

/** The payload of `user.machine.added` (kernel/event-types.ts). */
export type MachineAdded = UserEvents['user.machine.added'];

/** A new user's row: its id, its name and the columns it starts with. */
export interface NewUserRow {
  id: string;
  userName: string;
  columns: UserColumns;
}

/**
 * Claims the id of a new human, stores it in `orgId` and appends its `user.human.added`: every path
 * that creates a human (the API, the bootstrap file, self-registration) comes through here.
 */
export async function storeNewHuman(
  trx: DB,
  writer: UserWriter,
  orgId: string,
  human: NewUserRow,
  extra: Pick<HumanAdded, 'roles' | 'selfRegistered'> = {},
  now = new Date(),
): Promise<ChangeDetails> {
  const { id, userName, columns } = human;
  await claimUserId(trx, writer, id, now);
  await insertNewUser(trx, { ...newRow(writer, orgId, id, 'human', userName, now), ...columns });
  const payload: HumanAdded = { userName, email: columns.email ?? null, phone: columns.phone ?? null, ...extra };
  return appendEvent(trx, userEvent(writer, { id, orgId }, 'user.human.added', { ...payload }));
}

/**
 * Claims the id and the user name (its client id) of a new machine user, stores it in `orgId` and
 * appends its `user.machine.added`: the API and the bootstrap file create machines through here.
 */
export async function storeNewMachine(
  trx: DB,
  writer: UserWriter,
  orgId: string,
  machine: NewUserRow,
  given: Pick<MachineAdded, 'roles' | 'keyIds'> = { roles: [], keyIds: [] },
  now = new Date(),
): Promise<ChangeDetails> {
  const { id, userName, columns } = machine;
  await claimUserId(trx, writer, id, now);
  await claimMachineName(trx, writer, id, userName, now);
  await insertNewUser(trx, { ...newRow(writer, orgId, id, 'machine', userName, now), ...columns });
  const payload: MachineAdded = { userName, name: columns.display_name ?? null, ...given };
  return appendEvent(trx, userEvent(writer, { id, orgId }, 'user.machine.added', { ...payload }));
}

/** Stores a prepared human in `orgId`, with its authenticator app and its email code as asked. */
export async function addHuman(trx: DB, ctx: AdminContext, orgId: string, human: PreparedHuman, now = new Date()): Promise<AddedUser> {
  const { id, userName, email } = human;
  await checkNewUser(trx, orgId, id, userName);
  await storeNewHuman(trx, ctx, orgId, { id, userName, columns: human.columns }, {}, now);
  const user = { id, orgId };
  if (human.totpSecret !== undefined) {
    // Registered as verified: codes of the current time step's window are accepted from now on.
    await upsertUnverifiedOtpFactor(trx, id, ctx.masterKey.encrypt(human.totpSecret), now);
    await markOtpFactorReady(trx, id, otpStep(now) - OTP_WINDOW - 1, now);
    await appendEvent(trx, userEvent(ctx, user, 'user.human.mfa.otp.added'));
    await appendEvent(trx, userEvent(ctx, user, 'user.human.mfa.otp.verified'));
  }
  if (human.columns.phone_verified === true) await appendEvent(trx, userEvent(ctx, user, 'user.human.phone.verified'));
  // The email's verification (or its code) comes last: its event's details are the answer's.
  const issued = await emailVerification(trx, ctx, { ...user, row: human.columns }, email);
  return { id, createdAt: now, details: issued.details, ...(issued.code !== undefined ? { emailCode: issued.code } : {}) };
}

/** Stores a machine user in `orgId`: opaque access tokens until changed, no secret, no keys. */
export async function addMachine(trx: DB, ctx: AdminContext, orgId: string, machine: ReturnType<typeof prepareMachine>, now = new Date()): Promise<AddedUser> {
  const { id, userName } = machine;
  await checkNewUser(trx, orgId, id, userName);
  const columns: UserColumns = { display_name: machine.name, description: machine.description };
  const details = await storeNewMachine(trx, ctx, orgId, { id, userName, columns }, undefined, now);
  return { id, createdAt: now, details };
}

/** Marks the address verified, or issues its code (returned, or mailed with the mail limits of docs/security.md 10.2). */
async function emailVerification(
  trx: DB,
  ctx: AdminContext,
  user: { id: string; orgId: string; row: Pick<UserColumns, 'preferred_language' | 'display_name' | 'given_name'> },
  email: EmailInput,
): Promise<{ details: ChangeDetails; code?: string }> {
  const recipient = {
    id: user.id,
    instanceId: ctx.instanceId,
    orgId: user.orgId,
    email: email.address,
    preferredLanguage: user.row.preferred_language ?? null,
    name: user.row.display_name ?? user.row.given_name ?? null,
  };
  let delivery: CodeDelivery | undefined;
  if (email.verification.kind === 'verified') {
    const vouched = await vouchedChange(trx, recipient, email.address, ctx.voucher ?? 'instance');
    if (vouched.verified) {
      await deleteEmailCode(trx, user.id);
      return { details: await appendEvent(trx, userEvent(ctx, user, 'user.human.email.verified', { email: email.address })) };
    }
    // a vouch that does not count: stored unverified (the caller's write), a code mailed if the limits allow
    await setUserEmail(trx, user.id, email.address, false, new Date());
    if (vouched.delivery === undefined) return { details: await appendEvent(trx, userEvent(ctx, user, 'user.human.email.changed', { email: email.address })) };
    delivery = vouched.delivery;
  } else {
    delivery = email.verification.kind === 'return' ? { kind: 'return' } : { kind: 'send', urlTemplate: email.verification.urlTemplate };
  }
  const issued = await issueEmailCode(trx, recipient, delivery, { externalUrl: ctx.externalUrl, creator: ctx.creator, voucher: ctx.voucher }).catch((error: unknown) => {
    // the syntax was checked with the request: what is refused here is where the link leads
    throw error instanceof TemplateError ? new UserInputError(`${email.field ?? 'email'}.sendCode.urlTemplate`, `is invalid: ${error.message}`) : error;
  });
  return { details: issued.details, ...(issued.code !== undefined ? { code: issued.code } : {}) };
}

// ---- changing a human ----

/** A profile change: left-out fields (and empty given or family names) stay; an empty optional field is cleared. */
export interface ProfilePatch {
  givenName?: string | undefined;
  familyName?: string | undefined;
  nickName?: string | undefined;
  displayName?: string | undefined;
  preferredLanguage?: string | undefined;
  gender?: Gender | null | undefined;
}

export interface HumanChanges {
  userName?: string | undefined;
  profile?: ProfilePatch | undefined;
  email?: EmailInput | undefined;
  phone?: PhoneInput | undefined;
  password?: string | undefined;
}

export interface PreparedChanges {
  userName: string | undefined;
  profile: UserColumns;
  email: EmailInput | undefined;
  phone: PhoneInput | undefined;
  passwordHash: string | undefined;
}

/** Checks a change and hashes its password, before the transaction. */
export async function prepareHumanChanges(changes: HumanChanges): Promise<PreparedChanges> {
  if (changes.userName !== undefined) check('username', userNameProblem(changes.userName));
  const profile: UserColumns = {};
  const patch = changes.profile;
  if (patch !== undefined) {
    if (patch.givenName !== undefined && patch.givenName !== '') profile.given_name = patch.givenName;
    if (patch.familyName !== undefined && patch.familyName !== '') profile.family_name = patch.familyName;
    if (profile.given_name != null) check('profile.givenName', nameProblem(profile.given_name));
    if (profile.family_name != null) check('profile.familyName', nameProblem(profile.family_name));
    const nickname = optionalName('profile.nickName', patch.nickName);
    if (nickname !== undefined) profile.nickname = nickname;
    const displayName = optionalName('profile.displayName', patch.displayName);
    if (displayName !== undefined) profile.display_name = displayName;
    const language = checkLanguage('profile.preferredLanguage', patch.preferredLanguage);
    if (language !== undefined) profile.preferred_language = language;
    if (patch.gender !== undefined) profile.gender = patch.gender;
  }
  const email = changes.email === undefined ? undefined : { ...changes.email, address: checkEmail('email.email', changes.email.address.trim()) };
  const phone = changes.phone === undefined ? undefined : { ...changes.phone, number: checkPhone('phone.phone', changes.phone.number) };
  if (changes.password !== undefined) checkPassword('password.password.password', changes.password);
  const passwordHash = changes.password === undefined ? undefined : await hashSecret(changes.password);
  return { userName: changes.userName, profile, email, phone, passwordHash };
}

/**
 * Applies a prepared change to the human `userId` (its row locked here). `self`: the user changes
 * itself, so a new user name must be free in the whole instance (docs/security.md 10.12). Returns
 * the last event's details (undefined when nothing changed) and the email code for `return`
 * delivery.
 */
/** The user's row, locked for the change; the caller loaded it to check permissions, so it was deleted since if missing. */
export async function lockedUser(trx: DB, userId: string): Promise<UserRow> {
  const row = await findUserForUpdate(trx, userId);
  if (row === undefined) throw new UserStateConflict('the user was deleted meanwhile');
  return row;
}

export async function changeHuman(
  trx: DB,
  ctx: AdminContext,
  userId: string,
  changes: PreparedChanges,
  options: { self: boolean; passwordChange: PasswordChange },
  now = new Date(),
): Promise<{ details: ChangeDetails | undefined; emailCode?: string; ended?: EndedAccess }> {
  const row = await lockedUser(trx, userId);
  if (row.kind !== 'human') throw new UserStateConflict('the user is a machine user: UpdateHumanUser changes human users');
  const user = { id: row.id, orgId: row.org_id };
  let details: ChangeDetails | undefined;
  const append = async <T extends UserEventType>(type: T, ...payload: PayloadArgument<T>) => {
    details = await appendEvent(trx, userEvent(ctx, user, type, ...payload));
  };

  if (changes.userName !== undefined && changes.userName !== row.user_name) {
    const sameName = changes.userName.toLowerCase() === row.user_name.toLowerCase();
    const holder = sameName ? undefined : await findOrgUserByName(trx, row.org_id, changes.userName);
    if (holder !== undefined) throw new UserExists('username', 'the user name is taken in this organization');
    if (options.self && !sameName && (await userNameTakenByOther(trx, ctx.instanceId, changes.userName, row.id))) {
      throw new UserExists('username', 'the user name is taken');
    }
    await updateUser(trx, row.id, { user_name: changes.userName, changed_at: now });
    await append('user.username.changed', { userName: changes.userName });
  }

  const profile = Object.fromEntries(Object.entries(changes.profile).filter(([key, value]) => row[key as keyof UserRow] !== value)) as UserColumns;
  if (Object.keys(profile).length > 0) {
    await updateUser(trx, row.id, { ...profile, changed_at: now });
    await append('user.human.profile.changed', { changed: Object.keys(profile) });
  }

  let emailCode: string | undefined;
  const email = changes.email;
  if (email !== undefined && (email.address !== row.email || (!row.email_verified && email.verification.kind === 'verified'))) {
    const verified = email.verification.kind === 'verified';
    await setUserEmail(trx, row.id, email.address, verified, now);
    await append('user.human.email.changed', { email: email.address });
    const issued = await emailVerification(trx, ctx, { ...user, row: { ...row, ...profile } }, email);
    details = issued.details;
    emailCode = issued.code;
  }

  const phone = changes.phone;
  if (phone !== undefined && (phone.number !== row.phone || (!row.phone_verified && phone.verified))) {
    await updateUser(trx, row.id, { phone: phone.number, phone_verified: phone.verified, changed_at: now });
    await append('user.human.phone.changed', { phone: phone.number });
    if (phone.verified) await append('user.human.phone.verified');
  }

  let ended: EndedAccess | undefined;
  if (changes.passwordHash !== undefined) {
    await updateUser(trx, row.id, { password_hash: changes.passwordHash, changed_at: now });
    await append('user.human.password.changed');
    ended = await endAccessForPasswordChange(trx, row.id, options.passwordChange, now);
  }
  return { details, ...(emailCode !== undefined ? { emailCode } : {}), ...(ended !== undefined ? { ended } : {}) };
}

/** Longest current password looked at; anything longer is wrong without hashing it. */
const MAX_PROOF_LENGTH = 1024;

/** A current password is right, or it is not (a locked user's is never right: no hash is computed). */
export type CurrentPasswordCheck = { kind: 'valid' } | { kind: 'invalid' };

/**
 * A user changing its own password proves it with the current one. Each try is one of the client
 * address's tries (secret-tries.ts: Throttled before any hash past the limit). While the
 * user is locked no hash is computed at all, and the answer is the wrong password's, right or not:
 * the lock is not a reason to spend argon2 on every request of a guesser (failures during a lock do
 * not extend it). Otherwise a wrong password counts towards the lockout.
 */
export async function checkCurrentPassword(
  gh: LockoutContext,
  user: Pick<UserRow, 'id' | 'org_id' | 'password_hash'>,
  password: string,
  now = new Date(),
): Promise<CurrentPasswordCheck> {
  return secretTry<CurrentPasswordCheck>(
    async () => {
      if ((await currentLock(gh.db, user.id, now)) !== undefined) {
        gh.log.info({ event: 'login.failed', factor: 'password', userId: user.id, locked: true }, 'current password refused: user locked');
        return { kind: 'invalid' };
      }
      const right =
        password.length <= MAX_PROOF_LENGTH && user.password_hash !== null ? await verifySecret(user.password_hash, password) : await decoyVerify(password.slice(0, MAX_PROOF_LENGTH));
      if (right) return { kind: 'valid' };
      await countFailedAttempt(gh, { user: { id: user.id, orgId: user.org_id }, factor: 'password' }, now);
      return { kind: 'invalid' };
    },
    (check) => check.kind !== 'valid',
  );
}
