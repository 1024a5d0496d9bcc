/**
 * Step 2, the password (docs/decisions.md#login-names-and-lockout, docs/security.md 10.11). Wrong
 * password, unknown login name and locked user: the same page, byte for byte, after the same work
 * (see domain/password-check.ts). The lockout message answers only the right password of a locked
 * user; too many failures from one address get 429 before any hash.
 *
 * The one-time-password step plugs in where marked below: once a user has a ready OTP factor, a
 * valid password leads to /ui/login/otp instead of finishing the sign-in.
 *
 * The login policy of the request's organization (docs/branding-and-login-policy.md#what-the-login-pages-honour):
 * - `allowUsernamePassword` false: no password field; the page says how this organization signs in
 *   (a passkey, when the policy and the relying party allow them), and a posted password is refused
 *   without being checked. Known, unknown and passkey-less names get the same page.
 * - `forceMfa`: after a valid password, a user without an authenticator app is asked for their
 *   passkey (the passkey-first step) or, without one, sets up a second factor (steps/mfa-setup.ts)
 *   before any code is issued.
 * - `hidePasswordReset`: no "Forgot your password?" (steps/password-reset.ts passwordResetOffered).
 */
import type { Request, Response } from 'express';
import { minutesUntil } from '../../domain/sign-in/lockout.ts';
import type { Gatehouse } from '../../context.ts';
import { checkPassword } from '../../domain/sign-in/password-check.ts';
import { passwordAttempt } from '../../domain/sign-in/login-names.ts';
import { html } from '../../http/html.ts';
import { rememberedLoginName } from '../../store/auth-requests.ts';
import { shownLoginName } from '../branding.ts';
import { finishWithAuthentication } from '../finish.ts';
import { PASSWORD_CHANGED_NOTICE, passwordResetOffered } from './password-reset.ts';
import { clientAddress, goToSecondFactor, goToStep, openStep, passkeysAllowed, sendStep, stepAction, stepFields, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { passkeyForm, sendPasskeyStep } from '../passkey-page.ts';
import { button, field, link } from '../layout.ts';
import { PASSWORD_MAX_LENGTH } from '../../domain/credentials/password-policy.ts';

function render(res: Response, step: Step, status: number, loginName: string, problem?: { alert: string; field?: string }, notice?: string): void {
  const { m, request } = step;
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, loginName)}</strong></p>
<form method="post" action="${stepAction('password', request.id)}">
${stepFields(step)}
<input type="text" name="username" value="${loginName}" autocomplete="username" hidden>
${field({ name: 'password', label: m.password, type: 'password', autocomplete: 'current-password', error: problem?.field, autofocus: true, maxLength: PASSWORD_MAX_LENGTH })}
${button(m.signIn)}
</form>
<nav class="links">
${passwordResetOffered(step) ? link(stepPath('password-reset', request.id), m.forgotPassword) : ''}
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.passwordTitle, notice, alert: problem?.alert, body }));
}

/**
 * The page of a policy without passwords: how this organization signs in instead. The same for every
 * login name (known or not, with a passkey or not: a user with one was sent to the passkey step).
 */
function renderNoPassword(gh: Gatehouse, res: Response, step: Step, status: number, loginName: string): void {
  const { m, request } = step;
  const passkeys = passkeysAllowed(gh, step.settings.login);
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, loginName)}</strong></p>
<p>${passkeys ? m.noPasswordPasskeys : m.noSignInMethod}</p>
${passkeys ? passkeyForm(step, 'login') : ''}
<nav class="links">
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  const shown = stepPage(step, { title: passkeys ? m.noPasswordTitle : m.noSignInMethodTitle, body });
  if (passkeys) sendPasskeyStep(res, step, status, shown);
  else sendStep(res, step, status, shown);
}

export function passwordStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const loginName = await rememberedLoginName(gh.db, step.request.id);
      if (loginName === undefined) return goToStep(gh, res, 'login', step.request.id);
      if (!step.settings.login.allowUsernamePassword) return renderNoPassword(gh, res, step, 200, loginName);
      // After "Forgot your password?" (steps/password-reset.ts): a fixed word, never text from the URL.
      const notice = req.query['notice'] === PASSWORD_CHANGED_NOTICE ? step.m.passwordChangedNotice : undefined;
      render(res, step, 200, loginName, undefined, notice);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { m, request } = step;
      const { loginName, user } = await passwordAttempt(gh.db, request.id);
      if (loginName === undefined) return goToStep(gh, res, 'login', request.id);
      if (!step.settings.login.allowUsernamePassword) return renderNoPassword(gh, res, step, 403, loginName);
      const password = step.form.get('password') ?? '';
      if (password === '') return render(res, step, 400, loginName, { alert: m.fixFields, field: m.required });
      if ([...password].length > PASSWORD_MAX_LENGTH) return render(res, step, 400, loginName, { alert: m.invalidCredentials });

      const check = await checkPassword(gh, { requestId: request.id, user, password, address: clientAddress(gh, req) });
      if (check.kind === 'throttled') {
        res.set('Retry-After', String(check.retryAfterSeconds));
        return render(res, step, 429, loginName, { alert: m.throttled(check.retryAfterSeconds) });
      }
      if (check.kind === 'locked') return render(res, step, 400, loginName, { alert: m.locked(minutesUntil(check.until)) });
      if (check.kind === 'invalid') return render(res, step, 400, loginName, { alert: m.invalidCredentials });
      // A second factor set up or forced comes next (flow.ts goToSecondFactor). The failure count
      // stays as it is until the sign-in is complete (docs/security.md 10.3).
      if (await goToSecondFactor(gh, res, step, check.userId, ['pwd'])) return;
      await finishWithAuthentication(gh, res, request, check.userId, ['pwd']);
    },
  };
}
