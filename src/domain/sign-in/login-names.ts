/**
 * A sign-in in progress in the login UI, as its authorization request records it between the steps
 * (docs/decisions.md#sign-in): the human user a login name names, what the password step checks,
 * and the user who still owes a one-time code. The statements are in store/users.ts and
 * store/auth-requests.ts.
 */
import { findOtpPending, findPasswordAttempt } from '../../store/auth-requests.ts';
import type { DB } from '../../store/database.ts';
import type { UserState } from '../../store/schema.ts';
import { findHumansByLoginName } from '../../store/users.ts';

/**
 * The human user a login name names (docs/decisions.md#login-names-and-lockout):
 * `userName@primaryDomain`, or `userName` alone when exactly one human user of the instance has it.
 * Case-insensitive.
 */
export async function findHumanByLoginName(db: DB, instanceId: string, loginName: string): Promise<string | undefined> {
  const at = loginName.lastIndexOf('@');
  const prefix = at > 0 ? loginName.slice(0, at) : '';
  const domain = at > 0 ? loginName.slice(at + 1) : '';
  const [first, second] = await findHumansByLoginName(db, instanceId, { loginName, prefix, domain });
  if (first?.full) return first.id;
  return first && !second ? first.id : undefined;
}

export interface PasswordAttempt {
  loginName: string | undefined;
  /** Undefined for an unknown login name. */
  user: { id: string; orgId: string; state: UserState; passwordHash: string | null; lockedUntil: Date | null } | undefined;
}

/** What the password step checks, in one query whether or not the login name named a user. */
export async function passwordAttempt(db: DB, requestId: string): Promise<PasswordAttempt> {
  const row = await findPasswordAttempt(db, requestId);
  const user =
    row?.user_id && row.org_id && row.state
      ? { id: row.user_id, orgId: row.org_id, state: row.state, passwordHash: row.password_hash ?? null, lockedUntil: row.locked_until ?? null }
      : undefined;
  return { loginName: row?.login_name ?? undefined, user };
}

export interface PendingOtp {
  loginName: string;
  user: { id: string; orgId: string; active: boolean; lockedUntil: Date | null };
  /** How the first factor was proven: `pwd`, or `fed` with what the identity provider said. */
  firstFactorAmr: string[];
}

/**
 * The `amr` of a sign-in whose first factor was `firstFactorAmr` and whose second factor ends with
 * `secondFactorAmr` (which carries `mfa`): each value once, the first factor's first.
 */
export function withSecondFactor(firstFactorAmr: readonly string[], secondFactorAmr: readonly string[]): string[] {
  return [...new Set([...firstFactorAmr.filter((value) => value !== 'mfa'), ...secondFactorAmr])];
}

/**
 * The user who owes a second factor for this request, if the password step (or an external sign-in,
 * login/steps/idp.ts) sent the browser to the OTP or setup step for them. The mark names the user
 * whose first factor was checked: naming another user in the login name step afterwards (which
 * changes auth_requests.user_id) does not carry the checked factor over.
 */
export async function pendingOtp(db: DB, requestId: string): Promise<PendingOtp | undefined> {
  const row = await findOtpPending(db, requestId);
  if (!row || row.password_checked_at === null || row.user_id !== row.otp_pending_user_id) return undefined;
  const firstFactorAmr = row.first_factor_amr === null || row.first_factor_amr === '' ? ['pwd'] : row.first_factor_amr.split(' ');
  return { loginName: row.login_name ?? '', user: { id: row.id, orgId: row.org_id, active: row.state === 'active', lockedUntil: row.locked_until }, firstFactorAmr };
}
