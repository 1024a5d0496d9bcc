/**
 * The end of a sign-in in the login UI: the authentication is recorded as a session of this browser
 * (auth_time, amr), the request is bound to it, and the browser goes back to /authorize's callback,
 * which answers the client.
 */
import type { Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { attachSession, type AuthRequest } from '../domain/sign-in/auth-requests.ts';
import { clearLockout } from '../domain/sign-in/lockout.ts';
import { moveBrowser, recordAuthentication, touchSession, type UserSession } from '../domain/sign-in/sessions.ts';
import { renewedBrowser } from '../http/browser.ts';
import { goToCallback } from './flow.ts';

/**
 * The user has just authenticated with every factor they need, `amr` naming them (RFC 8176 values:
 * pwd, otp, mfa, user), `at` when it happened (a passkey's assertion; now by default). This completed
 * sign-in is what ends the run of failures (docs/security.md 10.3), and it gives the browser a fresh
 * cookie that its sessions and pending requests move to (docs/security.md 10.7), so a cookie value
 * someone planted or copied before the sign-in carries nothing of it. All of it is one transaction:
 * the sign-in is recorded whole or not at all, and it costs one commit instead of three (two fewer
 * round trips to the database per sign-in). The cookie is set once that has committed.
 */
export async function finishWithAuthentication(gh: Gatehouse, res: Response, request: AuthRequest, userId: string, amr: string[], at?: Date): Promise<void> {
  await recordSignIn(gh, res, request, userId, amr, at);
  goToCallback(gh, res, request.id);
}

/**
 * What finishWithAuthentication does but the redirect: the sign-in recorded, the fresh cookie set.
 * For a step that answers with a page of its own (steps/idp.ts).
 */
export async function recordSignIn(gh: Gatehouse, res: Response, request: AuthRequest, userId: string, amr: string[], at?: Date): Promise<void> {
  const browser = renewedBrowser(gh);
  await gh.db.transaction().execute(async (trx) => {
    await clearLockout(trx, userId);
    const session = await recordAuthentication(trx, { instanceId: gh.instanceId, browser: request.browser, userId, amr, ...(at === undefined ? {} : { at }) });
    await attachSession(trx, request.id, userId, session.id);
    await moveBrowser(trx, gh.instanceId, request.browser, browser.hash);
  });
  browser.issue(res);
}

/** The user chose a session of this browser that still satisfies the request. */
export async function finishWithSession(gh: Gatehouse, res: Response, request: AuthRequest, session: UserSession): Promise<void> {
  await touchSession(gh.db, session.id);
  await attachSession(gh.db, request.id, session.userId, session.id);
  goToCallback(gh, res, request.id);
}
