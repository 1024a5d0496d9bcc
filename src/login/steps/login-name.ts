/**
 * Step 1, the login name (SPEC §7): prefilled from login_hint (or the id_token_hint's user). Any
 * name continues to the password step, known or not, and the request remembers it as typed, so
 * nothing tells an unknown name from a known one (no enumeration).
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { activeSessions } from '../../domain/sessions.ts';
import { findHumanByLoginName } from '../../domain/sign-in.ts';
import { html } from '../../http/html.ts';
import { page } from '../../http/page.ts';
import { rememberLoginName } from '../../store/auth-requests.ts';
import { goToStep, openStep, sendStep, stepAction, stepFields, stepPath, submitStep, type Step } from '../flow.ts';
import { button, field, link } from '../layout.ts';
import { registrationOrg } from '../registration.ts';

/** Longer than any userName@domain we would create (user names ≤ 100, domains ≤ 253). */
const MAX_LOGIN_NAME = 360;

async function prefill(gh: Gatehouse, step: Step): Promise<string> {
  if (step.request.loginHint !== undefined) return step.request.loginHint;
  if (step.request.hintUserId === undefined) return '';
  const user = await gh.directory.user(step.request.hintUserId);
  return user?.kind === 'human' ? user.loginName : '';
}

async function render(gh: Gatehouse, res: Response, step: Step, status: number, value: string, error?: string): Promise<void> {
  const { m, request } = step;
  const signedIn = (await activeSessions(gh.db, gh.instanceId, request.browser)).length > 0;
  const canRegister = (await registrationOrg(gh)) !== undefined; // SPEC 10.12
  const body = html`<p>${m.loginIntro}</p>
<form method="post" action="${stepAction('login')}">
${stepFields(step)}
${field({ name: 'loginName', label: m.loginName, value, autocomplete: 'username', hint: m.loginNameHint, error, autofocus: true, maxLength: MAX_LOGIN_NAME, verbatim: true })}
${button(m.next)}
</form>
<nav class="links">
${signedIn ? link(stepPath('accounts', request.id), m.chooseSignedIn) : ''}
${canRegister ? link(stepPath('register', request.id), m.createAccount) : ''}
</nav>`;
  sendStep(res, step, status, page({ m, title: m.loginTitle, alert: error ? m.fixFields : undefined, body }));
}

export function loginNameStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (step) await render(gh, res, step, 200, await prefill(gh, step));
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const loginName = (step.form.get('loginName') ?? '').trim();
      if (loginName === '') return render(gh, res, step, 400, '', step.m.required);
      if ([...loginName].length > MAX_LOGIN_NAME) return render(gh, res, step, 400, loginName, step.m.tooLong);
      const userId = await findHumanByLoginName(gh.db, gh.instanceId, loginName);
      await rememberLoginName(gh.db, step.request.id, loginName, userId ?? null);
      goToStep(gh, res, 'password', step.request.id);
    },
  };
}
