/**
 * Step 1, the login name (docs/decisions.md#login-names-and-lockout): prefilled from login_hint (or
 * the id_token_hint's user). Any name continues to the password step, known or not, and the request
 * remembers it as typed, so nothing tells an unknown name from a known one (no enumeration). The one
 * exception, accepted (docs/decisions.md#the-passkey-step-tells-that-an-account-has-a-passkey): a
 * user with a passkey goes to the passkey-first step. When passkeys are enabled the page also has
 * the username-less "Sign in with a passkey" button (login/passkey-page.ts), and the login name field
 * offers the browser's passkeys in its autofill (`autocomplete="username webauthn"`, conditional
 * mediation), except on a page that shows a refused passkey.
 *
 * The login policy of the request's organization (docs/branding-and-login-policy.md#what-the-login-pages-honour):
 * `passwordlessType` not allowed takes the passkey button and autofill away (and the passkey-first
 * step, flow.ts goToFirstFactor); `allowRegister` decides "Create an account". `ignoreUnknownUsernames`
 * changes nothing here: an unknown name goes on to the password step either way, because telling
 * it apart would say which accounts exist (docs/security.md).
 *
 * External identity providers (docs/federation.md#signing-in-with-a-provider): a "Continue with
 * {provider}" button per provider the organization offers (the directory's cached list: no query
 * for an organization without any), and the provider scope skips this page (steps/idp.ts).
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { activeSessions } from '../../domain/sign-in/sessions.ts';
import { findHumanByLoginName } from '../../domain/sign-in/login-names.ts';
import { html } from '../../http/html.ts';
import { rememberLoginName } from '../../domain/sign-in/auth-requests.ts';
import { goToFirstFactor, openStep, REQUEST_PARAM, passkeysAllowed, sendStep, stepAction, stepFields, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { button, field, link } from '../layout.ts';
import { passkeyForm, sendPasskeyStep } from '../passkey-page.ts';
import { registrationOrg } from '../../domain/users/registration.ts';
import { idpOfScopes } from '../../domain/federation/idp-scope.ts';
import { goToProvider, IDP_PATH, offeredProvider } from './idp.ts';

/** Longer than any userName@domain we would create (user names ≤ 100, domains ≤ 253). */
const MAX_LOGIN_NAME = 360;

async function prefill(gh: Gatehouse, step: Step): Promise<string> {
  if (step.request.loginHint !== undefined) return step.request.loginHint;
  if (step.request.hintUserId === undefined) return '';
  const user = await gh.directory.user(step.request.hintUserId);
  return user?.kind === 'human' ? user.loginName : '';
}

/** The login name page; `problem` is a field error, or an alert of its own (a refused passkey). */
export async function renderLoginName(gh: Gatehouse, res: Response, step: Step, status: number, value: string, problem: { field?: string; alert?: string } = {}): Promise<void> {
  const { m, request } = step;
  const error = problem.field;
  const signedIn = (await activeSessions(gh.db, gh.instanceId, request.browser)).length > 0;
  const canRegister = (await registrationOrg(gh, request)) !== undefined; // the application's organization's login policy allows it
  const passkeys = passkeysAllowed(gh, step.settings.login);
  const body = html`<p>${m.loginIntro}</p>
<form method="post" action="${stepAction('login', request.id)}">
${stepFields(step)}
${field({ name: 'loginName', label: m.loginName, value, autocomplete: passkeys ? 'username webauthn' : 'username', hint: m.loginNameHint, error, autofocus: true, maxLength: MAX_LOGIN_NAME, verbatim: true })}
${button(m.next)}
</form>
${passkeys ? passkeyForm(step, 'login', { autofill: problem.alert === undefined }) : ''}
<nav class="links">
${signedIn ? link(stepPath('accounts', request.id), m.chooseSignedIn) : ''}
${canRegister ? link(stepPath('register', request.id), m.createAccount) : ''}
</nav>
${step.settings.idps.length === 0 ? '' : html`<div class="idps">
${step.settings.idps.map((idp) => html`<form method="post" action="${IDP_PATH}?${REQUEST_PARAM}=${encodeURIComponent(request.id)}">
${stepFields(step)}
<input type="hidden" name="idpId" value="${idp.id}">
<button type="submit" class="secondary">${m.continueWith(idp.name)}</button>
</form>`)}
</div>`}`;
  const shown = stepPage(step, { title: m.loginTitle, alert: problem.alert ?? (error ? m.fixFields : undefined), body });
  // The providers' buttons post here and end at the provider: the form-action admits their origins.
  const providers = step.settings.idps.length > 0;
  if (passkeys) sendPasskeyStep(res, step, status, shown, providers);
  else sendStep(res, step, status, shown, providers);
}

export function loginNameStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      // The scope urn:<service>:iam:org:idp:id:{id} goes straight to that provider (checked at
      // /authorize, oauth/scopes.ts); the pages' way back to the sign-in (`manual`) shows this page.
      const idpId = step.settings.idps.length === 0 ? undefined : idpOfScopes(gh.config.serviceName, step.request.scopes);
      if (idpId !== undefined && req.query['manual'] === undefined) {
        const provider = await offeredProvider(gh, step, idpId);
        if (provider !== undefined) return goToProvider(gh, res, step, provider);
      }
      await renderLoginName(gh, res, step, 200, await prefill(gh, step));
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const loginName = (step.form.get('loginName') ?? '').trim();
      if (loginName === '') return renderLoginName(gh, res, step, 400, '', { field: step.m.required });
      if ([...loginName].length > MAX_LOGIN_NAME) return renderLoginName(gh, res, step, 400, loginName, { field: step.m.tooLong });
      const userId = await findHumanByLoginName(gh.db, gh.instanceId, loginName);
      await rememberLoginName(gh.db, step.request.id, loginName, userId ?? null);
      // A user with a passkey is offered it first (this tells that the name has one; see above).
      await goToFirstFactor(gh, res, step.request.id, userId, step.settings.login);
    },
  };
}
