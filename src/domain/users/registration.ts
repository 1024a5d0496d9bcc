/**
 * Self-registration (prompt=create, docs/decisions.md#registration): a human user in the
 * organization of the application that asked for the sign-in, the password hashed with argon2id,
 * the email unverified, stored and announced (`user.human.added`) by the one path that adds humans
 * (user-admin.ts `storeNewHuman`).
 *
 * - Only where that organization's login policy allows it (`allowRegister` of its effective login
 *   policy, docs/branding-and-login-policy.md#registration: its own policy, else the bootstrap
 *   file's switch, else allowed for the instance's default organization only, as the instance's
 *   policy says), and the user always belongs to that
 *   organization: another organization's application never registers users into the default
 *   organization, nor into any other. A request without an application (the passkey page's own
 *   sign-in) offers no registration.
 * - Only with a user name no user of the instance has (case-insensitively), so that every existing
 *   short login name keeps naming one user.
 * - 5 registrations an hour per client address and a budget an hour for the instance
 *   (domain/registration-limits.ts), looked at before the password is hashed, and again, under a
 *   lock, in the transaction that records the user.
 */
import type { AuthRequest } from '../sign-in/auth-requests.ts';
import { hashSecret } from '../kernel/crypto.ts';
import { newId } from '../kernel/ids.ts';
import { lockRegistrationLimits, REGISTRATION_WINDOW_SECONDS, registrationLimitReached, type RegistrationLimits } from './registration-limits.ts';
import { storeNewHuman } from './user-admin.ts';
import { recordRegistration } from '../../store/registrations.ts';
import { isUniqueViolation, userNameTaken } from '../../store/users.ts';
import type { Config } from '../../config/index.ts';
import type { DB } from '../../store/database.ts';
import type { Directory } from '../instance/directory.ts';

/** What self-registration uses: the database, the instance, its applications, and the budget an hour. */
export interface RegistrationContext {
  db: DB;
  instanceId: string;
  directory: Pick<Directory, 'application' | 'orgSettings'>;
  config: Pick<Config, 'registrationsPerHour'>;
}

export interface Registration {
  /** The organization from registrationOrg. */
  orgId: string;
  /** The client address's limit key. */
  address: string;
  userName: string;
  email: string;
  givenName: string;
  familyName: string;
  password: string;
  preferredLanguage: string;
}

export type RegistrationResult =
  | { kind: 'created'; userId: string }
  | { kind: 'taken' }
  /** Over a registration limit: nothing was hashed or stored. */
  | { kind: 'limited'; retryAfterSeconds: number };

/**
 * The organization the sign-in request's application registers users into, when that organization
 * allows registration (and passwords, which a registration sets); else undefined (no "Create an
 * account", and the register page says so). The login policy is the one source of this answer: the
 * login pages and GetLoginSettings read the same
 * `allowRegister` (domain/instance/policies.ts effectiveLoginPolicy).
 */
export async function registrationOrg(ctx: RegistrationContext, request: Pick<AuthRequest, 'clientId'>): Promise<string | undefined> {
  const app = request.clientId === '' ? undefined : await ctx.directory.application(ctx.instanceId, request.clientId);
  if (app === undefined) return undefined;
  const { login } = await ctx.directory.orgSettings(ctx.instanceId, app.orgId);
  // The register page makes an account with a password: none where passwords do not sign in.
  return login.allowRegister && login.allowUsernamePassword ? app.orgId : undefined;
}

export async function registerHuman(ctx: RegistrationContext, input: Registration): Promise<RegistrationResult> {
  const limits: RegistrationLimits = { instanceId: ctx.instanceId, address: input.address, perHour: ctx.config.registrationsPerHour };
  const limited = await registrationLimitReached(ctx.db, limits); // before any hashing
  if (limited) return { kind: 'limited', ...limited };
  if (await userNameTaken(ctx.db, ctx.instanceId, input.userName)) return { kind: 'taken' };
  const passwordHash = await hashSecret(input.password); // slow: never inside the transaction
  const userId = newId();
  try {
    return await ctx.db.transaction().execute(async (trx): Promise<RegistrationResult> => {
      await lockRegistrationLimits(trx, ctx.instanceId);
      const overtaken = await registrationLimitReached(trx, limits); // by a concurrent registration
      if (overtaken) return { kind: 'limited', ...overtaken };
      // The user is its own creator; its id is never given to anything else (user-admin.ts claims it).
      const columns = {
        password_hash: passwordHash,
        email: input.email,
        email_verified: false,
        given_name: input.givenName,
        family_name: input.familyName,
        display_name: `${input.givenName} ${input.familyName}`,
        preferred_language: input.preferredLanguage,
      };
      await storeNewHuman(trx, { instanceId: ctx.instanceId, creator: userId }, input.orgId, { id: userId, userName: input.userName, columns }, { selfRegistered: true });
      await recordRegistration(trx, { userId, instanceId: ctx.instanceId, address: input.address }, REGISTRATION_WINDOW_SECONDS);
      return { kind: 'created', userId };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: 'taken' }; // a concurrent registration won the name
    throw error;
  }
}
