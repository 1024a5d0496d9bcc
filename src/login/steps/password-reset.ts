/**
 * "Forgot your password?" (docs/login-ui.md#forgot-your-password), in three pages:
 *
 * - /ui/login/password-reset, a step of the sign-in (its authRequestID): the password step links
 *   here; the form mails a reset code with a link to the request's user when it is an active human
 *   with a verified address (domain/credentials/password-reset.ts). Whatever the case (no such user,
 *   no verified address, a mail limit of docs/security.md 10.2 reached) the post leads to the same
 *   "Check your email" page, so nothing tells whether an account or an address exists.
 * - /ui/login/set-password, the link's target (`userID`, `code`, `codeID`, and `authRequestID` when
 *   the reset started in a sign-in): "Set a new password" with the password policy and a
 *   confirmation. GET checks nothing (mail scanners open links); the POST, with its CSRF token,
 *   tries the code as one of the client address's tries (docs/security.md 10.22), and only with the
 *   link's id does a wrong code count towards the code's tries. A right code sets the password and
 *   ends the user's sessions, refresh families and tokens, as the API's SetPassword with a reset
 *   code does (docs/security.md 10.25).
 * - Afterwards the browser goes back to the sign-in it came from, with a notice, when that request
 *   is still pending in this browser; else to /ui/login/password-changed, which leads on to the
 *   `defaultRedirectUri` of the user's organization's login policy when it has one (a link: the
 *   form's Content-Security-Policy lets a post end on this origin only).
 *
 * A login policy with `hidePasswordReset` (or without passwords at all) offers none of it: the first
 * page refuses with 403, and so does the link's page for a reset started in a sign-in of such an
 * organization. A link without a sign-in (a reset an administrator started through the API) still
 * works, as in ZITADEL, where the switch hides the login's link only.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { PASSWORD_MAX_LENGTH, POLICY_RULES, unmetRules } from '../../domain/credentials/password-policy.ts';
import { requestResetLink, SET_PASSWORD_PATH, storePassword, tryResetCodeFromLink, type ResetCodeResult } from '../../domain/credentials/password-reset.ts';
import { hashSecret } from '../../domain/kernel/crypto.ts';
import { pendingAuthRequest, type AuthRequest } from '../../domain/sign-in/auth-requests.ts';
import type { OrgSettings } from '../../domain/instance/directory.ts';
import { passwordAttempt } from '../../domain/sign-in/login-names.ts';
import { Throttled } from '../../domain/sign-in/failure-throttle.ts';
import { withFailureBudget } from '../../domain/sign-in/secret-tries.ts';
import { afterAccessEnded, endAccessForPasswordChange } from '../../domain/users/user-lifecycle.ts';
import { holdUser } from '../../domain/users/row-lock.ts';
import { browserHashOf } from '../../http/browser.ts';
import { parseParams, readForm } from '../../http/form.ts';
import { html } from '../../http/html.ts';
import { negotiateLocale } from '../../http/locale.ts';
import { page } from '../../http/page.ts';
import { LOGIN_UI_PATH } from '../../http/paths.ts';
import { seeOther, sendPage } from '../../http/respond.ts';
import { rememberedLoginName } from '../../store/auth-requests.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from '../csrf.ts';
import { shownLoginName } from '../branding.ts';
import { clientAddress, goToStep, openStep, REQUEST_PARAM, sendStep, stepAction, stepFields, stepPage, stepPath, submitStep, type Step } from '../flow.ts';
import { button, field, link } from '../layout.ts';
import { messagesFor, messagesForParams, type Messages } from '../messages.ts';

export const PASSWORD_CHANGED_PATH = `${LOGIN_UI_PATH}/password-changed`;
/** The notice the password step shows after a reset (a fixed word in its query, never free text). */
export const PASSWORD_CHANGED_NOTICE = 'password-changed';

/** As the email verification page: codes are 6 characters, ids much shorter than this. */
const MAX_CODE = 64;
const MAX_ID = 200;

/**
 * Whether the sign-in offers "Forgot your password?": the login policy of the request's
 * organization neither hides it (`hidePasswordReset`) nor allows no password at all.
 */
export function passwordResetOffered(step: Pick<Step, 'settings'>): boolean {
  const { login } = step.settings;
  return login.allowUsernamePassword && !login.hidePasswordReset;
}

/** The reset's pages for a request whose organization offers no reset: a clear 403 and the way back. */
function renderUnavailable(res: Response, step: Step): void {
  const { m, request } = step;
  const body = html`<nav class="links">
${link(stepPath('login', request.id), m.backToSignIn)}
</nav>`;
  sendStep(res, step, 403, stepPage(step, { title: m.resetTitle, alert: m.resetUnavailable, body }));
}

// --- /ui/login/password-reset: ask for the link ---

function renderRequest(res: Response, step: Step, loginName: string): void {
  const { m, request } = step;
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, loginName)}</strong></p>
<p>${m.resetIntro}</p>
<form method="post" action="${stepAction('password-reset', request.id)}">
${stepFields(step)}
${button(m.resetSend)}
</form>
<nav class="links">
${link(stepPath('password', request.id), m.backToSignIn)}
</nav>`;
  sendStep(res, step, 200, stepPage(step, { title: m.resetTitle, body }));
}

function renderSent(res: Response, step: Step): void {
  const { m, request } = step;
  const body = html`<p>${m.resetSentText}</p>
<nav class="links">
${link(stepPath('password', request.id), m.backToSignIn)}
</nav>`;
  sendStep(res, step, 200, stepPage(step, { title: m.resetSentTitle, body }));
}

export function passwordResetStep(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      if (!passwordResetOffered(step)) return renderUnavailable(res, step);
      const loginName = await rememberedLoginName(gh.db, step.request.id);
      if (loginName === undefined) return goToStep(gh, res, 'login', step.request.id);
      if (req.query['sent'] !== undefined) return renderSent(res, step);
      renderRequest(res, step, loginName);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const { request } = step;
      if (!passwordResetOffered(step)) return renderUnavailable(res, step);
      const { loginName, user } = await passwordAttempt(gh.db, request.id);
      if (loginName === undefined) return goToStep(gh, res, 'login', request.id);
      // Mailed or not, the same answer (see the file's comment), and at the same moment: the code
      // and its mail are written after the answer, so its timing tells nothing either (the answer
      // promises no mail, and the outbox sends it once written). The request's id rides in the link.
      seeOther(res, `${gh.config.externalUrl}${stepPath('password-reset', request.id)}&sent`);
      requestResetLink(gh.db, { instanceId: gh.instanceId, externalUrl: gh.config.externalUrl, linkKey: resetLinkKey(gh) }, user?.id, request.id).catch(
        (error: unknown) => gh.log.error({ err: error }, 'password reset link not sent'),
      );
    },
  };
}

/** The key of the reset links' ids (domain/credentials/password-reset.ts resetLinkId). */
function resetLinkKey(gh: Gatehouse) {
  return gh.masterKey.derive('password reset link');
}

// --- /ui/login/set-password: the link's page ---

interface LinkFields {
  userId: string;
  code: string;
  codeId: string;
  /** The sign-in the reset started in, if any. */
  requestId: string;
}

function clip(value: string | undefined, max: number): string {
  return (value ?? '').trim().slice(0, max);
}

function linkFieldsOf(values: ReadonlyMap<string, string>): LinkFields | undefined {
  const fields = { userId: clip(values.get('userID'), MAX_ID), code: clip(values.get('code'), MAX_CODE), codeId: clip(values.get('codeID'), MAX_ID), requestId: clip(values.get(REQUEST_PARAM), MAX_ID) };
  return fields.userId === '' || fields.code === '' || fields.codeId === '' ? undefined : fields;
}

/** The link's own address: the form posts back to it, so any answer stands at an address that works again. */
function linkPath(f: LinkFields): string {
  const query = new URLSearchParams({ userID: f.userId, code: f.code, codeID: f.codeId });
  if (f.requestId !== '') query.set(REQUEST_PARAM, f.requestId);
  return `${SET_PASSWORD_PATH}?${query.toString()}`;
}

function queryOf(req: Request): Map<string, string> {
  const q = req.originalUrl.indexOf('?');
  return parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
}

interface LinkPage {
  m: Messages;
  /** The sign-in the reset started in, when it is still pending in this browser. */
  request: AuthRequest | undefined;
  application: string | undefined;
  /** The settings of the sign-in's organization, when there is a sign-in. */
  settings: OrgSettings | undefined;
}

/** The page's language and application: the sign-in's, when it is pending in this browser; else ui_locales, Accept-Language. */
async function linkPageOf(gh: Gatehouse, req: Request, values: ReadonlyMap<string, string>, requestId: string): Promise<LinkPage> {
  const browser = browserHashOf(gh, req);
  const request = browser === undefined || requestId === '' ? undefined : await pendingAuthRequest(gh.db, requestId, browser);
  if (request === undefined) return { m: messagesForParams(values, req.headers['accept-language']), request, application: undefined, settings: undefined };
  const m = messagesFor(negotiateLocale(request.uiLocales, req.headers['accept-language']));
  const app = request.clientId === '' ? undefined : await gh.directory.application(gh.instanceId, request.clientId);
  return { m, request, application: app?.name, settings: await gh.directory.orgSettings(gh.instanceId, app?.orgId) };
}

type Problems = { password?: string; passwordConfirmation?: string };

function renderSetPassword(res: Response, lp: LinkPage, csrf: string, status: number, f: LinkFields, problems: Problems = {}, alert?: string): void {
  const { m } = lp;
  const policy = html`<p>${m.policyIntro}</p>
<ul class="policy">${POLICY_RULES.map((rule) => html`<li>${m.policy[rule]}</li>`)}</ul>`;
  const body = html`<p>${m.setPasswordIntro}</p>
<form method="post" action="${linkPath(f)}">
<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
<input type="hidden" name="userID" value="${f.userId}">
<input type="hidden" name="code" value="${f.code}">
<input type="hidden" name="codeID" value="${f.codeId}">
${f.requestId === '' ? '' : html`<input type="hidden" name="${REQUEST_PARAM}" value="${f.requestId}">`}
${field({ name: 'password', label: m.newPassword, type: 'password', autocomplete: 'new-password', hint: policy, error: problems.password, autofocus: problems.passwordConfirmation === undefined, maxLength: PASSWORD_MAX_LENGTH })}
${field({ name: 'passwordConfirmation', label: m.passwordConfirmation, type: 'password', autocomplete: 'new-password', error: problems.passwordConfirmation, autofocus: problems.password === undefined && problems.passwordConfirmation !== undefined, maxLength: PASSWORD_MAX_LENGTH })}
${button(m.setPasswordSubmit)}
</form>`;
  const shownAlert = alert ?? (problems.password !== undefined || problems.passwordConfirmation !== undefined ? m.fixFields : undefined);
  sendPage(res, status, page({ m, title: m.setPasswordTitle, application: lp.application, alert: shownAlert, body }));
}

/** Whether the link's page refuses: its reset started in a sign-in whose organization offers none. */
function resetRefused(lp: LinkPage): boolean {
  return lp.settings !== undefined && !passwordResetOffered({ settings: lp.settings });
}

function renderRefused(res: Response, lp: LinkPage): void {
  const { m, request } = lp;
  const back = request === undefined ? '' : html`<nav class="links">${link(stepPath('login', request.id), m.backToSignIn)}</nav>`;
  sendPage(res, 403, page({ m, title: m.setPasswordTitle, application: lp.application, alert: m.resetUnavailable, body: back }));
}

/** A link that cannot set a password (incomplete, wrong, used, replaced or expired): say so, and offer the sign-in. */
function renderBadLink(res: Response, lp: LinkPage, result: Exclude<ResetCodeResult, 'valid'> | 'incomplete'): void {
  const { m, request } = lp;
  const back = request === undefined ? '' : html`<nav class="links">${link(stepPath('login', request.id), m.backToSignIn)}</nav>`;
  const alert = result === 'expired' ? m.resetLinkExpired : m.resetLinkInvalid;
  sendPage(res, 400, page({ m, title: m.setPasswordTitle, application: lp.application, alert, body: back }));
}

function validate(m: Messages, password: string, confirmation: string): Problems {
  const problems: Problems = {};
  const unmet = unmetRules(password);
  if (password === '') problems.password = m.required;
  else if ([...password].length > PASSWORD_MAX_LENGTH) problems.password = m.tooLong;
  else if (unmet.length > 0) problems.password = m.policyUnmet(unmet.map((rule) => m.policy[rule]));
  if (confirmation === '') problems.passwordConfirmation = m.required;
  else if (confirmation !== password) problems.passwordConfirmation = m.passwordMismatch;
  return problems;
}

export function setPasswordPage(gh: Gatehouse) {
  return {
    async show(req: Request, res: Response): Promise<void> {
      const query = queryOf(req);
      const fields = linkFieldsOf(query);
      const lp = await linkPageOf(gh, req, query, clip(query.get(REQUEST_PARAM), MAX_ID));
      if (fields === undefined) return renderBadLink(res, lp, 'incomplete');
      if (resetRefused(lp)) return renderRefused(res, lp);
      renderSetPassword(res, lp, csrfTokenFor(gh, req, res), 200, fields);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const form = await readForm(req, gh.config.maxBodyBytes);
      const query = queryOf(req);
      const values = new Map([...query, ...form]);
      const fields = linkFieldsOf(values);
      const lp = await linkPageOf(gh, req, values, clip(values.get(REQUEST_PARAM), MAX_ID));
      if (!csrfValid(gh, req, form)) return refuseForgedForm(res, lp.m);
      const csrf = form.get(CSRF_FIELD)!;
      if (fields === undefined) return renderBadLink(res, lp, 'incomplete');
      if (resetRefused(lp)) return renderRefused(res, lp);
      const password = form.get('password') ?? ''; // taken exactly as typed
      const problems = validate(lp.m, password, form.get('passwordConfirmation') ?? '');
      if (Object.keys(problems).length > 0) return renderSetPassword(res, lp, csrf, 400, fields, problems);

      const linkKey = resetLinkKey(gh);
      const now = new Date();
      const given = { code: fields.code, codeId: fields.codeId };
      let checked: ResetCodeResult;
      try {
        // Checked before the new password is hashed: a wrong code costs no argon2 run (as SetPassword).
        checked = await withFailureBudget({ throttle: gh.throttle, address: clientAddress(gh, req) }, () =>
          gh.db.transaction().execute(async (trx) => {
            await holdUser(trx, fields.userId);
            return tryResetCodeFromLink(trx, linkKey, fields.userId, given, { keep: true }, now);
          }),
        );
      } catch (error) {
        if (!(error instanceof Throttled)) throw error;
        res.set('Retry-After', String(error.retryAfterSeconds));
        return renderSetPassword(res, lp, csrf, 429, fields, {}, lp.m.throttled(error.retryAfterSeconds));
      }
      if (checked !== 'valid') return renderBadLink(res, lp, checked);
      const user = await gh.directory.user(fields.userId);
      if (user === undefined) return renderBadLink(res, lp, 'not_pending');
      const passwordHash = await hashSecret(password);
      const outcome = await gh.db.transaction().execute(async (trx) => {
        await holdUser(trx, user.id);
        const result = await tryResetCodeFromLink(trx, linkKey, user.id, given, { keep: false }, now); // used by a concurrent post meanwhile?
        if (result !== 'valid') return { result } as const;
        await storePassword(trx, user, passwordHash, 'reset_code', user.id, now);
        // docs/security.md 10.25: a password set with a reset code ends everything, as a deactivation does.
        const ended = await endAccessForPasswordChange(trx, user.id, { kind: 'everything' }, now);
        return { result: 'set', ended } as const;
      });
      if (outcome.result !== 'set') return renderBadLink(res, lp, outcome.result);
      afterAccessEnded(outcome.ended, { directory: gh.directory, revocations: gh.tokens.revocations });
      // Back to the sign-in this reset started in, with a notice; else a page that says it is done and
      // leads on to where the user's organization sends a flow no application started.
      if (lp.request !== undefined) return seeOther(res, `${gh.config.externalUrl}${stepPath('password', lp.request.id)}&notice=${PASSWORD_CHANGED_NOTICE}`);
      const { defaultRedirectUri } = (await gh.directory.orgSettings(gh.instanceId, user.orgId)).login;
      const changed = new URLSearchParams({ ui_locales: lp.m.lang, ...(defaultRedirectUri === '' ? {} : { orgID: user.orgId }) });
      seeOther(res, `${gh.config.externalUrl}${PASSWORD_CHANGED_PATH}?${changed.toString()}`);
    },
  };
}

/** Organization ids as the bootstrap file and the API make them. */
const ORG_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The end of a reset that no sign-in started: it is done, and "Continue" leads to the login policy's
 * `defaultRedirectUri` of the user's organization (`orgID`; an absolute http(s) URL checked when it
 * was set), when it has one. An unknown or malformed `orgID` gets the instance's.
 */
export function passwordChangedPage(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    const query = queryOf(req);
    const m = messagesForParams(query, req.headers['accept-language']);
    const orgId = query.get('orgID');
    const { defaultRedirectUri } = (await gh.directory.orgSettings(gh.instanceId, orgId !== undefined && ORG_ID.test(orgId) ? orgId : undefined)).login;
    const next = defaultRedirectUri === '' ? '' : html`<div class="actions"><a href="${defaultRedirectUri}">${m.continue}</a></div>`;
    sendPage(res, 200, page({ m, title: m.passwordChangedTitle, body: html`<p>${m.passwordChangedText}</p>
${next}` }));
  };
}
