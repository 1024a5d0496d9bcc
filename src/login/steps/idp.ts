/**
 * Signing in with an external identity provider (docs/federation.md#signing-in-with-a-provider):
 *
 * - `POST /ui/login/idp`: a "Continue with {provider}" button of the login name page. The provider
 *   must be one the application's organization offers; an intent is started (domain/federation/intents.ts)
 *   and the browser goes to the provider (303). The login name page's `form-action` admits the
 *   providers' origins for that redirect (http/respond.ts).
 * - `GET /ui/login/idp/done`: where the provider's callback (/idps/callback) sends the browser. The
 *   intent is used once, and only when it was started for this browser's pending request: an intent
 *   of another browser, carried here in a link, is refused. The first-sign-in decisions
 *   (domain/federation/first-sign-in.ts) then find or make the user, or the person chooses. A
 *   sign-in continues to the application from a page that moves on by itself (see finishExternal).
 * - `GET /ui/login/idp/failed`: the provider said no (or could not be reached): Gatehouse's error
 *   page with the provider's name and the reason, and a way back to the sign-in; never a redirect to
 *   the client.
 * - `POST /ui/login/idp/link` and `/ui/login/idp/create`: the choice when no account is linked (and
 *   the confirmation of `autoLinking` username): sign in with the existing account's password, then
 *   link; or create an account from a form prefilled from the provider, linked and without a
 *   password. The upstream account travels between these pages sealed with the master key (AES-GCM)
 *   and bound to the request and a deadline, since the intent itself is used up.
 *
 * An external sign-in ends with the intent's `amr` (`fed`, and `mfa` when the provider said so),
 * unless a local second factor is owed (finishExternal): the user's authenticator app is always
 * asked for, and a login policy with `forceMfa` (unless `forceMfaLocalOnly` exempts external
 * sign-ins) has one set up on the way. Linking an existing account by its password is refused for a
 * user with an authenticator app: the link would be made on one of its two factors.
 */
import type { Request, Response } from 'express';
import { minutesUntil } from '../../domain/sign-in/lockout.ts';
import type { Gatehouse } from '../../context.ts';
import { hasReadyOtp } from '../../domain/credentials/otp.ts';
import { createLinkedUser, decideFirstSignIn, linkUser, type ExternalAccount, type FirstSignInContext } from '../../domain/federation/first-sign-in.ts';
import { consumeIntent, startIntent, type IntentContext, type SucceededIntent } from '../../domain/federation/intents.ts';
import { anyProvider, type Provider } from '../../domain/federation/providers.ts';
import { rememberLoginName } from '../../domain/sign-in/auth-requests.ts';
import { findHumanByLoginName, passwordAttempt } from '../../domain/sign-in/login-names.ts';
import { checkPassword } from '../../domain/sign-in/password-check.ts';
import { isValidEmail, MAX_EMAIL_LENGTH } from '../../domain/users/email-address.ts';
import { userNameProblem } from '../../domain/users/user-rules.ts';
import { PASSWORD_MAX_LENGTH } from '../../domain/credentials/password-policy.ts';
import { isUniqueViolation, userNameTaken } from '../../store/users.ts';
import { findIdpIntent } from '../../store/idp-intents.ts';
import { Refusal } from '../../domain/kernel/refusals.ts';
import { html } from '../../http/html.ts';
import { LOGIN_UI_PATH } from '../../http/paths.ts';
import { seeOther } from '../../http/respond.ts';
import { finishWithAuthentication, recordSignIn } from '../finish.ts';
import { callbackUrl, clientAddress, goToSecondFactor, openStep, REQUEST_PARAM, sendStep, stepFields, stepPage, stepPath, submitStep, type Step, type Submission } from '../flow.ts';
import { button, field, link } from '../layout.ts';

export const IDP_PATH = `${LOGIN_UI_PATH}/idp`;

/** How long the choice pages keep the upstream account (sealed in their forms). */
const PENDING_SECONDS = 15 * 60;
const MAX_REASON = 300;
const MAX_NAME = 200;

function intentContext(gh: Gatehouse): IntentContext {
  return { db: gh.db, instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, masterKey: gh.masterKey, allowPrivateNetworks: gh.config.idpAllowPrivateNetworks, log: gh.log };
}

function firstSignInContext(gh: Gatehouse): FirstSignInContext {
  return { db: gh.db, instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, masterKey: gh.masterKey };
}

function idpUrl(gh: Gatehouse, page: 'done' | 'failed', requestId: string): string {
  return `${gh.config.externalUrl}${IDP_PATH}/${page}?${REQUEST_PARAM}=${encodeURIComponent(requestId)}`;
}

/** A provider the request's organization offers at sign-in (directory-cached), else undefined. */
export async function offeredProvider(gh: Gatehouse, step: Step, idpId: string): Promise<Provider | undefined> {
  if (!step.settings.idps.some((idp) => idp.id === idpId)) return undefined;
  try {
    return await anyProvider(gh.db, gh.instanceId, idpId);
  } catch {
    return undefined; // removed since the cache was filled
  }
}

/** The error page of this world: a step page with the sentence, the reason and the way back. */
function sendFailure(res: Response, step: Step, status: number, sentence: string, reason?: string): void {
  const { m, request } = step;
  const body = html`${reason === undefined ? '' : html`<dl class="facts">
<dt>${m.idpReason}</dt>
<dd>${reason}</dd>
</dl>`}
<nav class="links">
${link(`${stepPath('login', request.id)}&manual=1`, m.idpBackToSignIn)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.idpFailedTitle, alert: sentence, body }));
}

/**
 * Sends the browser to `provider` for this request: the intent, then 303 to the provider's
 * authorization URL. A provider that cannot be reached ends on the failure page.
 */
export async function goToProvider(gh: Gatehouse, res: Response, step: Step, provider: Provider): Promise<void> {
  let authUrl: string;
  try {
    const started = await startIntent(intentContext(gh), {
      provider,
      successUrl: idpUrl(gh, 'done', step.request.id),
      failureUrl: idpUrl(gh, 'failed', step.request.id),
      authRequestId: step.request.id,
      ...(step.request.loginHint === undefined ? {} : { loginHint: step.request.loginHint }),
    });
    authUrl = started.authUrl;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    gh.log.info({ idpId: provider.id, reason }, 'external sign-in could not start');
    return sendFailure(res, step, 502, step.m.idpFailed(provider.name), reason.slice(0, MAX_REASON));
  }
  seeOther(res, authUrl);
}


// ---- the upstream account between the choice pages ----

interface Pending {
  requestId: string;
  providerId: string;
  subject: string;
  userName: string;
  profile: ExternalAccount['profile'];
  amr: string[];
  /** Seconds since the epoch. */
  expires: number;
}

function seal(gh: Gatehouse, pending: Pending): string {
  return gh.masterKey.encrypt(JSON.stringify({ purpose: 'login-idp-pending', ...pending }));
}

/** The sealed account of this request, still valid; else undefined. */
function unseal(gh: Gatehouse, step: Step, sealed: string | undefined): Pending | undefined {
  if (sealed === undefined || sealed === '' || sealed.length > 16_000) return undefined;
  try {
    const value = JSON.parse(gh.masterKey.decrypt(sealed)) as Pending & { purpose?: string };
    if (value.purpose !== 'login-idp-pending' || value.requestId !== step.request.id || value.expires * 1000 <= Date.now()) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

function accountOf(pending: Pick<Pending, 'providerId' | 'subject' | 'userName' | 'profile'>): ExternalAccount {
  return { providerId: pending.providerId, subject: pending.subject, userName: pending.userName, profile: pending.profile };
}

function pendingFields(step: Step, sealed: string) {
  return html`${stepFields(step)}
<input type="hidden" name="pending" value="${sealed}">`;
}

// ---- finishing ----

/**
 * An external sign-in of `userId` is complete: with the provider's amr, unless a local second
 * factor is owed (flow.ts goToSecondFactor: the user's authenticator app, or the one the login
 * policy forces unless `forceMfaLocalOnly` exempts external sign-ins). That step ends the sign-in
 * with `fed` and its own factor; the browser stays on Gatehouse's pages, so a redirect is fine.
 */
async function finishExternal(gh: Gatehouse, res: Response, step: Step, userId: string, amr: string[], via: 'redirect' | 'page' = 'redirect'): Promise<void> {
  const user = await gh.directory.user(userId);
  if (await goToSecondFactor(gh, res, step, userId, amr, user?.loginName ?? '')) return;
  if (via === 'redirect') return finishWithAuthentication(gh, res, step.request, userId, [...new Set(amr)]);
  await recordSignIn(gh, res, step.request, userId, [...new Set(amr)]);
  // Back from the provider, the browser is still in the redirects that followed the form it sent
  // there, and browsers hold all of them to that page's form-action (w3c/webappsec-csp#8): a
  // provider whose login page admits only its own client (Gatehouse, ZITADEL) would stop the last
  // redirect, to the application. A page that moves on by itself (Refresh) starts a navigation of
  // its own; its link is there for browsers that do not follow Refresh.
  const next = callbackUrl(gh, step.request.id);
  res.set('Refresh', `0; url=${next}`);
  sendStep(res, step, 200, stepPage(step, { title: step.m.idpSigningIn, body: html`<p>${link(next, step.m.continue)}</p>` }));
}

// ---- the pages ----

function renderChoice(res: Response, step: Step, provider: Provider, sealed: string, choice: { canLink: boolean; canCreate: boolean }): void {
  const { m, request } = step;
  const body = html`<p>${m.idpNoAccount(provider.name)}</p>
${choice.canLink ? html`<form method="post" action="${IDP_PATH}/link?${REQUEST_PARAM}=${encodeURIComponent(request.id)}">
${pendingFields(step, sealed)}
<input type="hidden" name="show" value="1">
${button(m.idpLinkExisting)}
</form>` : ''}
${choice.canCreate ? html`<form method="post" action="${IDP_PATH}/create?${REQUEST_PARAM}=${encodeURIComponent(request.id)}">
${pendingFields(step, sealed)}
<input type="hidden" name="show" value="1">
${button(m.idpCreateTitle)}
</form>` : ''}
${!choice.canLink && !choice.canCreate ? html`<p>${m.idpNothingOffered}</p>` : ''}
<nav class="links">
${link(`${stepPath('login', request.id)}&manual=1`, m.idpBackToSignIn)}
</nav>`;
  sendStep(res, step, 200, stepPage(step, { title: m.idpNoAccountTitle, body }));
}

function renderLink(res: Response, step: Step, provider: Provider, sealed: string, status: number, loginName: string, problem?: { alert: string; field?: string }): void {
  const { m, request } = step;
  const body = html`<p>${m.idpLinkIntro(provider.name)}</p>
<form method="post" action="${IDP_PATH}/link?${REQUEST_PARAM}=${encodeURIComponent(request.id)}">
${pendingFields(step, sealed)}
${field({ name: 'loginName', label: m.loginName, value: loginName, autocomplete: 'username', verbatim: true, maxLength: 360, autofocus: loginName === '' })}
${field({ name: 'password', label: m.password, type: 'password', autocomplete: 'current-password', error: problem?.field, autofocus: loginName !== '', maxLength: PASSWORD_MAX_LENGTH })}
${button(m.idpLinkAndSignIn)}
</form>
<nav class="links">
${link(`${stepPath('login', request.id)}&manual=1`, m.idpBackToSignIn)}
</nav>`;
  sendStep(res, step, status, stepPage(step, { title: m.idpLinkTitle, alert: problem?.alert, body }));
}

interface CreateValues {
  userName: string;
  givenName: string;
  familyName: string;
  email: string;
}

function renderCreate(res: Response, step: Step, provider: Provider, sealed: string, status: number, values: CreateValues, errors: Partial<Record<keyof CreateValues, string>> = {}): void {
  const { m, request } = step;
  const body = html`<p>${m.idpCreateIntro(provider.name)}</p>
<form method="post" action="${IDP_PATH}/create?${REQUEST_PARAM}=${encodeURIComponent(request.id)}">
${pendingFields(step, sealed)}
${field({ name: 'userName', label: m.idpUserName, value: values.userName, autocomplete: 'username', verbatim: true, maxLength: MAX_NAME, error: errors.userName })}
${field({ name: 'givenName', label: m.givenName, value: values.givenName, autocomplete: 'given-name', maxLength: MAX_NAME, error: errors.givenName })}
${field({ name: 'familyName', label: m.familyName, value: values.familyName, autocomplete: 'family-name', maxLength: MAX_NAME, error: errors.familyName })}
${field({ name: 'email', label: m.email, type: 'email', value: values.email, autocomplete: 'email', verbatim: true, maxLength: MAX_EMAIL_LENGTH, error: errors.email })}
${button(m.idpCreateTitle)}
</form>
<nav class="links">
${link(`${stepPath('login', request.id)}&manual=1`, m.idpBackToSignIn)}
</nav>`;
  const hasErrors = Object.keys(errors).length > 0;
  sendStep(res, step, status, stepPage(step, { title: m.idpCreateTitle, alert: hasErrors ? m.fixFields : undefined, body }));
}

/** The provider of a sealed account, still offered to the request's organization; else the failure page. */
async function pendingOf(gh: Gatehouse, res: Response, step: Submission): Promise<{ pending: Pending; provider: Provider; sealed: string } | undefined> {
  const sealed = step.form.get('pending');
  const pending = unseal(gh, step, sealed);
  const provider = pending === undefined ? undefined : await offeredProvider(gh, step, pending.providerId);
  if (pending === undefined || provider === undefined) {
    sendFailure(res, step, 400, step.m.idpUnusable);
    return undefined;
  }
  return { pending, provider, sealed: sealed! };
}

export function idpStep(gh: Gatehouse) {
  return {
    /** The login name page's button. */
    async start(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const provider = await offeredProvider(gh, step, step.form.get('idpId') ?? '');
      if (provider === undefined) return sendFailure(res, step, 400, step.m.idpUnusable);
      await goToProvider(gh, res, step, provider);
    },

    /** Back from the provider, through /idps/callback, with `?id=&token=`. */
    async done(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const intentId = typeof req.query['id'] === 'string' ? req.query['id'] : '';
      const token = typeof req.query['token'] === 'string' ? req.query['token'] : '';
      if (intentId === '' || token === '' || intentId.length > 64 || token.length > 256) return sendFailure(res, step, 400, step.m.idpUnusable);
      // Only an intent of this very request: checked before it is used, so that an intent of
      // another browser, carried here in a link, is neither used nor used up.
      const row = await findIdpIntent(gh.db, gh.instanceId, intentId);
      if (row === undefined || row.auth_request_id !== step.request.id) return sendFailure(res, step, 400, step.m.idpUnusable);
      let intent: SucceededIntent;
      try {
        intent = await consumeIntent(intentContext(gh), intentId, token);
      } catch {
        return sendFailure(res, step, 400, step.m.idpUnusable);
      }
      if (intent.authRequestId !== step.request.id) return sendFailure(res, step, 400, step.m.idpUnusable);
      const provider = await offeredProvider(gh, step, intent.providerId);
      if (provider === undefined) return sendFailure(res, step, 400, step.m.idpUnusable);
      const account: ExternalAccount = { providerId: provider.id, subject: intent.subject, userName: intent.userName ?? intent.profile.email ?? intent.subject, profile: intent.profile };
      const decided = await decideFirstSignIn(firstSignInContext(gh), provider, account, step.orgId);
      if (decided.kind === 'user') return finishExternal(gh, res, step, decided.userId, intent.amr, 'page');
      if (decided.kind === 'refused') {
        // The person has proven the upstream account, so the page may say why its user may not sign in.
        const { m } = step;
        const locked = decided.until === undefined ? m.idpUserLocked : m.locked(minutesUntil(decided.until));
        return sendFailure(res, step, 403, decided.reason === 'inactive' ? m.idpUserInactive : decided.reason === 'locked' ? locked : m.idpUnusable);
      }
      const sealed = seal(gh, { requestId: step.request.id, ...account, amr: intent.amr, expires: Math.floor(Date.now() / 1000) + PENDING_SECONDS });
      if (decided.kind === 'confirm') {
        const user = await gh.directory.user(decided.userId);
        return renderLink(res, step, provider, sealed, 200, user?.loginName ?? '');
      }
      renderChoice(res, step, provider, sealed, decided);
    },

    /** The provider refused, or could not be asked: `?id=&error=&error_description=`. */
    async failed(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const intentId = typeof req.query['id'] === 'string' && req.query['id'].length <= 64 ? req.query['id'] : '';
      const row = intentId === '' ? undefined : await findIdpIntent(gh.db, gh.instanceId, intentId);
      // The provider is named only for an intent of this request.
      const provider = row !== undefined && row.auth_request_id === step.request.id ? await anyProvider(gh.db, gh.instanceId, row.idp_id).catch(() => undefined) : undefined;
      const error = typeof req.query['error'] === 'string' ? req.query['error'] : '';
      const description = typeof req.query['error_description'] === 'string' ? req.query['error_description'] : '';
      const reason = [error, description].filter((part) => part !== '').join(': ').slice(0, MAX_REASON);
      sendFailure(res, step, 400, step.m.idpFailed(provider?.name ?? '?'), reason === '' ? undefined : reason);
    },

    /** "Link an existing account": the page, then its password form. */
    async link(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const found = await pendingOf(gh, res, step);
      if (!found) return;
      const { pending, provider, sealed } = found;
      const { m, request } = step;
      const loginName = (step.form.get('loginName') ?? '').trim();
      if (step.form.get('show') === '1') return renderLink(res, step, provider, sealed, 200, '');
      const password = step.form.get('password') ?? '';
      if (loginName === '' || password === '') return renderLink(res, step, provider, sealed, 400, loginName, { alert: m.fixFields, field: m.required });
      if (loginName.length > 360 || [...password].length > PASSWORD_MAX_LENGTH) return renderLink(res, step, provider, sealed, 400, loginName, { alert: m.invalidCredentials });
      // The password step's check, lockout and throttle included (docs/security.md 10.3, 10.11).
      const userId = await findHumanByLoginName(gh.db, gh.instanceId, loginName);
      await rememberLoginName(gh.db, request.id, loginName, userId ?? null);
      const { user } = await passwordAttempt(gh.db, request.id);
      const check = await checkPassword(gh, { requestId: request.id, user, password, address: clientAddress(gh, req) });
      if (check.kind === 'throttled') {
        res.set('Retry-After', String(check.retryAfterSeconds));
        return renderLink(res, step, provider, sealed, 429, loginName, { alert: m.throttled(check.retryAfterSeconds) });
      }
      if (check.kind !== 'valid') return renderLink(res, step, provider, sealed, 400, loginName, { alert: m.invalidCredentials });
      // A user with an authenticator app signs in with its code: the password alone links nothing.
      if (await hasReadyOtp(gh.db, check.userId)) return sendFailure(res, step, 403, m.idpLinkNeedsOtp);
      if (!(await linkUser(firstSignInContext(gh), provider, check.userId, accountOf(pending)))) {
        return renderLink(res, step, provider, sealed, 400, loginName, { alert: m.invalidCredentials });
      }
      await finishExternal(gh, res, step, check.userId, [...pending.amr, 'pwd']);
    },

    /** "Create an account": the prefilled form, then the user, linked and without a password. */
    async create(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const found = await pendingOf(gh, res, step);
      if (!found) return;
      const { pending, provider, sealed } = found;
      const { m } = step;
      if (!provider.options.isCreationAllowed || step.orgId === undefined) return sendFailure(res, step, 403, m.idpUnusable);
      if (step.form.get('show') === '1') {
        const { profile } = pending;
        return renderCreate(res, step, provider, sealed, 200, {
          userName: profile.userName ?? profile.email ?? '',
          givenName: profile.givenName ?? '',
          familyName: profile.familyName ?? '',
          email: profile.email ?? '',
        });
      }
      const values: CreateValues = {
        userName: (step.form.get('userName') ?? '').trim(),
        givenName: (step.form.get('givenName') ?? '').trim(),
        familyName: (step.form.get('familyName') ?? '').trim(),
        email: (step.form.get('email') ?? '').trim(),
      };
      const errors: Partial<Record<keyof CreateValues, string>> = {};
      for (const key of ['userName', 'givenName', 'familyName', 'email'] as const) {
        if (values[key] === '') errors[key] = m.required;
        else if ([...values[key]].length > (key === 'email' ? MAX_EMAIL_LENGTH : MAX_NAME)) errors[key] = m.tooLong;
      }
      if (errors.userName === undefined && userNameProblem(values.userName) !== undefined) errors.userName = m.idpUserNameTaken;
      if (errors.email === undefined && !isValidEmail(values.email)) errors.email = m.idpInvalidEmail;
      if (errors.userName === undefined && (await userNameTaken(gh.db, gh.instanceId, values.userName))) errors.userName = m.idpUserNameTaken;
      if (Object.keys(errors).length > 0) return renderCreate(res, step, provider, sealed, 400, values, errors);
      let userId: string;
      try {
        userId = await createLinkedUser(firstSignInContext(gh), provider, accountOf(pending), step.orgId, values);
      } catch (error) {
        // A concurrent sign-in won the name, or linked this account first.
        if (isUniqueViolation(error)) return renderCreate(res, step, provider, sealed, 409, values, { userName: m.idpUserNameTaken });
        if (error instanceof Refusal) return sendFailure(res, step, 409, m.idpUnusable);
        throw error;
      }
      await finishExternal(gh, res, step, userId, pending.amr);
    },
  };
}
