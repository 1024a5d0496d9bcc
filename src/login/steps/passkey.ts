/**
 * Passkey sign-in in the login UI (docs/passkeys.md#signing-in-with-a-passkey,
 * docs/decisions.md#passkeys).
 *
 * - GET /ui/login/passkey: the passkey-first step, after a login name whose user has a passkey. The
 *   passkey button and "Use password instead" (the password step); no password field, and the
 *   ceremony starts only when the button is pressed.
 * - POST /ui/login/passkey/options: a challenge for the page's script (JSON), username-less from the
 *   login name page, for the named user from the passkey-first step. A form post with the CSRF token.
 * - POST /ui/login/passkey: the assertion, posted by the script with the page's form. A valid one
 *   finishes the sign-in as two factors (amr ["user", "mfa"], auth_time the assertion's time); every
 *   refusal shows the page it came from with one message, whatever the cause, and nothing goes to
 *   the client.
 *
 * A login policy that does not allow passwordless sign-in (`passwordlessType`) turns all of it off for
 * its requests, as a disabled relying party does; one that allows no password
 * (`allowUsernamePassword` false) drops "Use password instead".
 */
import type { Request, Response } from 'express';
import { minutesUntil } from '../../domain/sign-in/lockout.ts';
import type { Gatehouse } from '../../context.ts';
import { finishPasskeySignIn, startPasskeySignIn } from '../../domain/passkeys/passkey-sign-in.ts';
import { hasReadyPasskey } from '../../domain/passkeys/passkeys.ts';
import { passwordAttempt } from '../../domain/sign-in/login-names.ts';
import { html } from '../../http/html.ts';
import { securityHeaders } from '../../http/respond.ts';
import { shownLoginName } from '../branding.ts';
import { finishWithAuthentication } from '../finish.ts';
import { clientAddress, goToStep, openStep, passkeyRpId, passkeysAllowed, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { link } from '../layout.ts';
import { passkeyForm, sendPasskeyStep, type PasskeyMode } from '../passkey-page.ts';
import { renderLoginName } from './login-name.ts';

/** Longer than any challenge id we issue: a longer one is not looked up. */
const MAX_CHALLENGE_ID = 64;

function render(res: Response, step: Step, status: number, loginName: string, alert?: string): void {
  const { m, request } = step;
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, loginName)}</strong></p>
<p>${m.passkeyIntro}</p>
${passkeyForm(step, 'passkey')}
<nav class="links">
${step.settings.login.allowUsernamePassword ? link(stepPath('password', request.id), m.usePassword) : ''}
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  sendPasskeyStep(res, step, status, stepPage(step, { title: m.passkeyTitle, alert, body }));
}

/** The user the request's login name named, when it has a passkey of this relying party. */
async function passkeyUserOf(gh: Gatehouse, requestId: string, rpId: string): Promise<{ loginName: string | undefined; userId: string | undefined }> {
  const { loginName, user } = await passwordAttempt(gh.db, requestId);
  const userId = user !== undefined && (await hasReadyPasskey(gh.db, user.id, rpId)) ? user.id : undefined;
  return { loginName, userId };
}

function modeOf(form: ReadonlyMap<string, string>): PasskeyMode {
  return form.get('mode') === 'passkey' ? 'passkey' : 'login';
}

/** The page a passkey form was on, again, with `alert` (a refusal). */
async function showAgain(gh: Gatehouse, res: Response, step: Step, mode: PasskeyMode, status: number, alert: string): Promise<void> {
  const { loginName } = await passwordAttempt(gh.db, step.request.id);
  if (mode === 'passkey' && loginName !== undefined) return render(res, step, status, loginName, alert);
  return renderLoginName(gh, res, step, status, loginName ?? step.request.loginHint ?? '', { alert });
}

function parsedCredential(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // refused like any other malformed assertion
  }
}

export function passkeyStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const rpId = passkeyRpId(gh, step.settings.login);
      if (rpId === undefined) return goToStep(gh, res, 'password', step.request.id);
      const { loginName, userId } = await passkeyUserOf(gh, step.request.id, rpId);
      if (loginName === undefined) return goToStep(gh, res, 'login', step.request.id);
      if (userId === undefined) return goToStep(gh, res, 'password', step.request.id);
      render(res, step, 200, loginName);
    },

    /** The challenge for the page's script: JSON, never cached. */
    async options(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const rpId = passkeyRpId(gh, step.settings.login);
      securityHeaders(res);
      if (rpId === undefined) return void res.status(404).json({ error: 'passkeys are disabled' });
      const userId = modeOf(step.form) === 'passkey' ? (await passkeyUserOf(gh, step.request.id, rpId)).userId : undefined;
      const challenge = await startPasskeySignIn(gh, { userId });
      res.status(200).json({ challengeId: challenge.challengeId, options: challenge.options });
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { m, request, form } = step;
      if (!passkeysAllowed(gh, step.settings.login)) return goToStep(gh, res, 'login', request.id);
      const mode = modeOf(form);
      const challengeId = form.get('challengeId') ?? '';
      const credential = parsedCredential(form.get('credential'));
      if (challengeId === '' || challengeId.length > MAX_CHALLENGE_ID || credential === undefined) return showAgain(gh, res, step, mode, 400, m.passkeyRefused);
      const result = await finishPasskeySignIn(gh, { challengeId, credential, requestId: request.id, address: clientAddress(gh, req) });
      switch (result.kind) {
        case 'signed_in':
          return finishWithAuthentication(gh, res, request, result.userId, result.amr, result.authTime);
        case 'throttled':
          res.set('Retry-After', String(result.retryAfterSeconds));
          return showAgain(gh, res, step, mode, 429, m.throttled(result.retryAfterSeconds));
        case 'locked':
          return showAgain(gh, res, step, mode, 400, m.locked(minutesUntil(result.until)));
        // A deactivated user is refused like any other cause (as the password step does).
        case 'inactive':
        case 'refused':
          return showAgain(gh, res, step, mode, 400, m.passkeyRefused);
      }
    },
  };
}
