/**
 * Step 3 for users with a verified authenticator-app factor (docs/decisions.md#the-authenticator-app):
 * after a valid password the password step records the user as owing a one-time code
 * (`markOtpPending`) and sends the browser here; a valid code finishes the sign-in with amr
 * ['pwd', 'otp', 'mfa']. After an external identity provider, when the login policy asks for a
 * local second factor (steps/idp.ts), the same mark sends the browser here and the amr is
 * ['fed', 'otp', 'mfa']. Wrong codes count towards the same lockout as wrong passwords
 * (domain/lockout.ts), and the count survives a right password: only the completed sign-in resets
 * it (docs/security.md 10.3), so re-entering the password buys no new guesses.
 *
 * The pending mark names the user whose password was checked: naming another user in the login name
 * step afterwards (which changes auth_requests.user_id) does not carry the checked password over
 * (domain/sign-in.ts pendingOtp).
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { countFailedAttempt, minutesUntil, type AttemptRefusal } from '../../domain/sign-in/lockout.ts';
import { checkOtpCode } from '../../domain/credentials/otp.ts';
import { pendingOtp, withSecondFactor } from '../../domain/sign-in/login-names.ts';
import { html } from '../../http/html.ts';
import { clearOtpPending } from '../../domain/sign-in/auth-requests.ts';
import { shownLoginName } from '../branding.ts';
import { finishWithAuthentication } from '../finish.ts';
import { clientAddress, goToStep, openStep, sendStep, stepAction, stepFields, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { button, field, link } from '../layout.ts';

/** Longer than any code: a longer input is refused without checking. */
const MAX_CODE_LENGTH = 16;

function render(res: Response, step: Step, status: number, loginName: string, problem?: { alert: string; field?: string }): void {
  const { m, request } = step;
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, loginName)}</strong></p>
<p>${m.otpIntro}</p>
<form method="post" action="${stepAction('otp', request.id)}">
${stepFields(step)}
${field({ name: 'code', label: m.otpCode, autocomplete: 'one-time-code', error: problem?.field, autofocus: true, maxLength: MAX_CODE_LENGTH, verbatim: true })}
${button(m.signIn)}
</form>
<nav class="links">
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.otpTitle, alert: problem?.alert, body }));
}

export function otpStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const pending = await pendingOtp(gh.db, step.request.id);
      if (!pending) return goToStep(gh, res, 'login', step.request.id);
      render(res, step, 200, pending.loginName);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { m, request } = step;
      const pending = await pendingOtp(gh.db, request.id);
      if (!pending) return goToStep(gh, res, 'login', request.id);
      const { loginName, user, firstFactorAmr } = pending;
      const now = new Date();
      const address = clientAddress(gh, req);
      // Taken before the check and given back on success (docs/security.md 10.11): parallel guesses
      // count at once.
      const wait = gh.throttle.take(address, now.getTime());
      if (wait > 0) {
        res.set('Retry-After', String(wait));
        return render(res, step, 429, loginName, { alert: m.throttled(wait) });
      }
      const code = (step.form.get('code') ?? '').replace(/\s+/g, '');
      if (code === '') {
        gh.throttle.succeeded(address, now.getTime());
        return render(res, step, 400, loginName, { alert: m.fixFields, field: m.required });
      }
      const refused = async (refusal: AttemptRefusal, replayed = false) => {
        if (refusal.kind === 'locked') return render(res, step, 400, loginName, { alert: m.locked(minutesUntil(refusal.until, now)) });
        return render(res, step, 400, loginName, { alert: replayed ? m.otpJustUsed : m.invalidOtp });
      };
      // A user deactivated since the password step is refused like a wrong code (as the password step does).
      if (!user.active || code.length > MAX_CODE_LENGTH) {
        return refused(await countFailedAttempt(gh, { requestId: request.id, user, factor: 'otp' }, now));
      }
      // The lock is read, the code checked and a failure counted under the user's row lock
      // (docs/security.md 10.3). Whoever is here knew the password of this user in this request: the
      // lock may be told.
      const check = await checkOtpCode(gh, user.id, code, now, (trx) => countFailedAttempt(gh, { requestId: request.id, user, factor: 'otp' }, now, trx));
      if (check.kind === 'locked') {
        gh.throttle.succeeded(address, now.getTime()); // nothing was guessed
        return render(res, step, 400, loginName, { alert: m.locked(minutesUntil(check.until, now)) });
      }
      if (check.kind === 'refused') return refused(check.refusal, check.replayed);
      gh.throttle.succeeded(address, now.getTime());
      await clearOtpPending(gh.db, request.id);
      await finishWithAuthentication(gh, res, request, user.id, withSecondFactor(firstFactorAmr, ['otp', 'mfa']));
    },
  };
}
