/**
 * Adding a sign-in credential for oneself (a passkey, an authenticator app) needs what removing one
 * needs, and a recent sign-in besides: a passkey replaces the authenticator-app step at every later
 * sign-in, so adding one with an old password-only token or browser session would undo the rule
 * that such a sign-in cannot remove the authenticator app (otp.ts). The sign-in must be the user's
 * own (no one acting for it), at most FRESH_SIGN_IN_MS ago, and have used every factor the user has
 * (sessionMeetsFactors: the authenticator app once it is ready; a passkey sign-in counts for all).
 */
import type { DB } from '../../store/database.ts';
import { sessionMeetsFactors } from './otp.ts';

/** How recent the sign-in must be: the same ten minutes on the self-service page and at the API. */
export const FRESH_SIGN_IN_MS = 10 * 60_000;

export interface SignIn {
  userId: string;
  /** Who acts for the user (a delegated or impersonating token): never enough to add a credential. */
  actorId?: string | undefined;
  authTime?: Date | undefined;
  amr?: readonly string[] | undefined;
}

/** Whether this sign-in was recent enough to add a credential, whatever it used. */
export function recentSignIn(signIn: Pick<SignIn, 'authTime'>, now = Date.now()): boolean {
  return signIn.authTime !== undefined && now - signIn.authTime.getTime() <= FRESH_SIGN_IN_MS;
}

/** Whether this sign-in may add a credential for its user. */
export async function mayAddCredential(db: DB, signIn: SignIn, now = Date.now()): Promise<boolean> {
  if (signIn.actorId !== undefined || !recentSignIn(signIn, now)) return false;
  return sessionMeetsFactors(db, { userId: signIn.userId, amr: signIn.amr ?? [] });
}
