/**
 * Account selection (prompt=select_account, docs/endpoints.md#authorization-endpoint; several
 * sessions in one browser): the browser's signed-in users, and "use another account". A chosen
 * session answers the request unless the request wants a fresh login (prompt=login, or max_age
 * exceeded: OIDC Core §3.1.2.1), in which case that user goes on to its first sign-in step (the
 * passkey when it has one, else the password).
 */
import type { Request, Response } from 'express';
import { sessionMeetsFactors } from '../../domain/credentials/otp.ts';
import type { Gatehouse } from '../../context.ts';
import type { AuthRequest } from '../../domain/sign-in/auth-requests.ts';
import type { User } from '../../domain/instance/directory.ts';
import { activeSessions, type UserSession } from '../../domain/sign-in/sessions.ts';
import { html } from '../../http/html.ts';
import { rememberLoginName } from '../../domain/sign-in/auth-requests.ts';
import { shownLoginName } from '../branding.ts';
import { finishWithSession } from '../finish.ts';
import { goToFirstFactor, goToStep, openStep, sessionLacksMfa, sendStep, stepAction, stepFields, stepPath, submitStep, stepPage, type Step } from '../flow.ts';
import { link } from '../layout.ts';

interface Account {
  session: UserSession;
  user: User;
}

/** The browser's sessions of users who may still sign in, most recently used first. */
async function accountsOf(gh: Gatehouse, request: AuthRequest): Promise<Account[]> {
  const accounts: Account[] = [];
  for (const session of await activeSessions(gh.db, gh.instanceId, request.browser)) {
    const user = await gh.directory.user(session.userId);
    if (user && user.kind === 'human' && user.state === 'active') accounts.push({ session, user });
  }
  return accounts;
}

function displayName(user: User): string {
  const names = [user.givenName, user.familyName].filter((n): n is string => !!n).join(' ');
  return user.displayName || names || user.userName;
}

/** Whether the request's prompt or max_age demands that the user authenticates again. */
export function needsFreshLogin(request: AuthRequest, session: UserSession, now = Date.now()): boolean {
  if (request.prompt.includes('login')) return true;
  return request.maxAge !== undefined && now - session.authTime.getTime() > request.maxAge * 1000;
}

function render(res: Response, step: Step, status: number, accounts: Account[], alert?: string): void {
  const { m, request } = step;
  const items = accounts.map(({ session, user }) => {
    const name = displayName(user);
    return html`<li><button type="submit" class="account" name="sessionID" value="${session.id}">
<span class="avatar" aria-hidden="true">${[...name][0]?.toUpperCase() ?? '?'}</span>
<span class="who"><span class="name">${name}</span><span class="login">${shownLoginName(step, user.loginName)}</span></span>
</button></li>`;
  });
  const body = html`<p>${m.accountsIntro}</p>
<form method="post" action="${stepAction('accounts', request.id)}">
${stepFields(step)}
<ul class="accounts">
${items}
</ul>
</form>
<nav class="links">
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.accountsTitle, alert, body }));
}

export function accountsStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const accounts = await accountsOf(gh, step.request);
      if (accounts.length === 0) return goToStep(gh, res, 'login', step.request.id);
      render(res, step, 200, accounts);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { request } = step;
      const accounts = await accountsOf(gh, request);
      const chosen = accounts.find((a) => a.session.id === step.form.get('sessionID'));
      if (!chosen) {
        if (accounts.length === 0) return goToStep(gh, res, 'login', request.id);
        return render(res, step, 400, accounts, step.m.sessionGone);
      }
      // A session without a second factor does not answer a request whose login policy forces one
      // (oauth/authorize-finish.ts checks it again): the user signs in again and is asked for it.
      const lacksMfa = sessionLacksMfa(step.settings.login, chosen.session.amr);
      if (needsFreshLogin(request, chosen.session) || lacksMfa || !(await sessionMeetsFactors(gh.db, chosen.session))) {
        await rememberLoginName(gh.db, request.id, chosen.user.loginName, chosen.user.id);
        return goToFirstFactor(gh, res, request.id, chosen.user.id, step.settings.login);
      }
      await finishWithSession(gh, res, request, chosen.session);
    },
  };
}
