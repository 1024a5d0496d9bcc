/**
 * Registration (prompt=create): user name, email, given and family name, password and its
 * confirmation, under a password policy stated on the page. A new user continues the sign-in at
 * once, authenticated by the password just chosen (amr pwd). The user joins the organization of the
 * application that asked for the sign-in; where that organization does not allow self-registration
 * the page says so (403) and links to the sign-in instead. An address's sixth
 * registration of the hour, or one past the instance's hourly budget, gets 429 with Retry-After
 * before any hash (login/registration.ts). Whether the page is open is the `allowRegister` of the
 * organization's login policy; when that policy forces a second factor, the new user sets one up
 * (steps/mfa-setup.ts) before the sign-in goes on.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { isValidEmail, MAX_EMAIL_LENGTH } from '../../domain/users/email-address.ts';
import { html } from '../../http/html.ts';
import { finishWithAuthentication } from '../finish.ts';
import { markOtpPending, rememberLoginName } from '../../domain/sign-in/auth-requests.ts';
import { clientAddress, goToStep, mfaRequired, openStep, sendStep, stepAction, stepFields, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { button, field, link } from '../layout.ts';
import type { Messages } from '../messages.ts';
import { PASSWORD_MAX_LENGTH, POLICY_RULES, unmetRules } from '../../domain/credentials/password-policy.ts';
import { registerHuman, registrationOrg } from '../../domain/users/registration.ts';

type FieldName = 'userName' | 'email' | 'givenName' | 'familyName' | 'password' | 'passwordConfirmation';
type Values = Record<FieldName, string>;
type Problems = Partial<Record<FieldName, string>>;

const USER_NAME = /^[\p{L}\p{N}._@+-]{1,100}$/u;
const MAX_NAME = 200;

function valuesOf(form: ReadonlyMap<string, string>): Values {
  const text = (name: FieldName) => (form.get(name) ?? '').replace(/\p{Cc}/gu, '').trim();
  return {
    userName: text('userName'),
    email: text('email'),
    givenName: text('givenName'),
    familyName: text('familyName'),
    password: form.get('password') ?? '', // a password is taken exactly as typed
    passwordConfirmation: form.get('passwordConfirmation') ?? '',
  };
}

function validate(m: Messages, v: Values): Problems {
  const problems: Problems = {};
  const length = (s: string) => [...s].length;
  if (v.userName === '') problems.userName = m.required;
  else if (!USER_NAME.test(v.userName)) problems.userName = m.userNameInvalid;
  if (v.email === '') problems.email = m.required;
  else if (!isValidEmail(v.email)) problems.email = m.emailInvalid;
  for (const name of ['givenName', 'familyName'] as const) {
    if (v[name] === '') problems[name] = m.required;
    else if (length(v[name]) > MAX_NAME) problems[name] = m.tooLong;
  }
  const unmet = unmetRules(v.password);
  if (v.password === '') problems.password = m.required;
  else if (length(v.password) > PASSWORD_MAX_LENGTH) problems.password = m.tooLong;
  else if (unmet.length > 0) problems.password = m.policyUnmet(unmet.map((rule) => m.policy[rule]));
  if (v.passwordConfirmation === '') problems.passwordConfirmation = m.required;
  else if (v.passwordConfirmation !== v.password) problems.passwordConfirmation = m.passwordMismatch;
  return problems;
}

function render(res: Response, step: Step, status: number, v: Partial<Values>, problems: Problems = {}, alert?: string): void {
  const { m, request } = step;
  const policy = html`<p>${m.policyIntro}</p>
<ul class="policy">${POLICY_RULES.map((rule) => html`<li>${m.policy[rule]}</li>`)}</ul>`;
  const first = (Object.keys(problems) as FieldName[])[0];
  const body = html`<form method="post" action="${stepAction('register', request.id)}">
${stepFields(step)}
${field({ name: 'userName', label: m.userName, value: v.userName, autocomplete: 'username', hint: m.userNameHint, error: problems.userName, autofocus: first === undefined || first === 'userName', maxLength: 100, verbatim: true })}
${field({ name: 'email', label: m.email, type: 'email', value: v.email, autocomplete: 'email', error: problems.email, autofocus: first === 'email', maxLength: MAX_EMAIL_LENGTH, verbatim: true })}
${field({ name: 'givenName', label: m.givenName, value: v.givenName, autocomplete: 'given-name', error: problems.givenName, autofocus: first === 'givenName', maxLength: MAX_NAME })}
${field({ name: 'familyName', label: m.familyName, value: v.familyName, autocomplete: 'family-name', error: problems.familyName, autofocus: first === 'familyName', maxLength: MAX_NAME })}
${field({ name: 'password', label: m.password, type: 'password', autocomplete: 'new-password', hint: policy, error: problems.password, autofocus: first === 'password', maxLength: PASSWORD_MAX_LENGTH })}
${field({ name: 'passwordConfirmation', label: m.passwordConfirmation, type: 'password', autocomplete: 'new-password', error: problems.passwordConfirmation, autofocus: first === 'passwordConfirmation', maxLength: PASSWORD_MAX_LENGTH })}
${button(m.createAccount)}
</form>
<nav class="links">
${link(stepPath('login', request.id), m.haveAccount)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.registerTitle, alert: alert ?? (first ? m.fixFields : undefined), body }));
}

/** No registration for this application: say so, and offer the way to sign in instead. */
function renderClosed(res: Response, step: Step): void {
  const { m, request } = step;
  const body = html`<nav class="links">
${link(stepPath('login', request.id), m.haveAccount)}
</nav>`;
  sendStep(res, step, 403, stepPage(step, { title: m.registerTitle, alert: m.registrationUnavailable, body }));
}

export function registerStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      if ((await registrationOrg(gh, step.request)) === undefined) return renderClosed(res, step);
      render(res, step, 200, {});
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { m, request } = step;
      const orgId = await registrationOrg(gh, request);
      if (orgId === undefined) return renderClosed(res, step);
      const values = valuesOf(step.form);
      const problems = validate(m, values);
      if (Object.keys(problems).length > 0) return render(res, step, 400, values, problems);

      // "taken" answers tell which user names exist across the instance (docs/security.md 10.12 makes
      // them instance-wide), at no hashing cost: they count with failed sign-ins per address
      // (docs/security.md 10.11).
      const address = clientAddress(gh, req);
      const wait = gh.throttle.take(address);
      if (wait > 0) {
        res.set('Retry-After', String(wait));
        return render(res, step, 429, values, {}, m.throttled(wait));
      }
      const result = await registerHuman(gh, { ...values, preferredLanguage: m.lang, orgId, address }).catch((error: unknown) => {
        gh.throttle.succeeded(address); // nothing was answered (a full hashing queue, an outage)
        throw error;
      });
      if (result.kind === 'taken') return render(res, step, 400, values, { userName: m.userNameTaken });
      gh.throttle.succeeded(address);
      if (result.kind === 'limited') {
        // too many accounts from this address, or from everywhere, within the hour
        res.set('Retry-After', String(result.retryAfterSeconds));
        return render(res, step, 429, values, {}, m.registrationLimited(Math.ceil(result.retryAfterSeconds / 60)));
      }
      if (mfaRequired(step.settings.login)) {
        // As after a password (steps/password.ts): the password just chosen is checked, a second factor is owed.
        const user = await gh.directory.user(result.userId);
        await rememberLoginName(gh.db, request.id, user?.loginName ?? values.userName, result.userId);
        await markOtpPending(gh.db, request.id, result.userId, ['pwd']);
        return goToStep(gh, res, 'mfa-setup', request.id);
      }
      await finishWithAuthentication(gh, res, request, result.userId, ['pwd']);
    },
  };
}
