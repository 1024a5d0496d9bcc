/**
 * Every login page works on one pending authorization request of this browser, named by
 * `authRequestID` (query on GET, hidden field on POST). Opening a step finds it (or shows the error
 * page), picks the language, and for forms checks the CSRF token first.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import type { OrgSettings } from '../domain/instance/directory.ts';
import { mfaRequired, sessionLacksMfa, type LoginPolicy } from '../domain/instance/policies.ts';
import { hasReadyPasskey } from '../domain/passkeys/passkeys.ts';
import { relyingParty } from '../domain/passkeys/passkey-party.ts';
import { hasReadyOtp } from '../domain/credentials/otp.ts';
import { markOtpPending, pendingAuthRequest, rememberLoginName, type AuthRequest } from '../domain/sign-in/auth-requests.ts';
import { browserHashOf } from '../http/browser.ts';
import { limitKeyOf } from '../http/client-address.ts';
import { showErrorPage } from '../http/error-page.ts';
import { parseParams, readForm } from '../http/form.ts';
import { html, type Html } from '../http/html.ts';
import { page, type PageParts } from '../http/page.ts';
import { negotiateLocale } from '../http/locale.ts';
import { AUTHORIZE_CALLBACK_PATH, LOGIN_UI_PATH } from '../http/paths.ts';
import { formTargetOf, sendPage, seeOther } from '../http/respond.ts';
import { hiddenLoginNameSuffix, pageBranding } from './branding.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from './csrf.ts';
import { messagesFor, type Messages } from './messages.ts';

export const REQUEST_PARAM = 'authRequestID';

export type StepName = 'login' | 'password' | 'password-reset' | 'otp' | 'accounts' | 'register' | 'mfa-setup';

export interface Step {
  request: AuthRequest;
  m: Messages;
  /** The name of the application the request comes from; undefined for the login UI's own requests (no client). */
  application: string | undefined;
  /**
   * The login policy and active branding the request follows: its application's organization's,
   * else the instance's (docs/branding-and-login-policy.md).
   */
  settings: OrgSettings;
  /** The organization of the request's application; undefined for the login UI's own requests. */
  orgId: string | undefined;
  /** `@domain` the pages leave off login names (login/branding.ts shownLoginName); undefined: none. */
  hiddenSuffix: string | undefined;
  /** The CSRF token the page's forms carry. */
  csrf: string;
}

/** A submitted form of a step, its CSRF token already checked. */
export interface Submission extends Step {
  form: ReadonlyMap<string, string>;
}

/** A link to a step of this request. */
export function stepPath(step: StepName, requestId: string): string {
  return `${LOGIN_UI_PATH}/${step}?${REQUEST_PARAM}=${encodeURIComponent(requestId)}`;
}

/**
 * Where a step's form posts to: the step's own address with the request id in the query (besides
 * the hidden field), so the answer to a refused post stands at an address that names the request: a
 * reload or a bookmark of it opens the step again instead of losing the sign-in.
 */
export function stepAction(step: StepName, requestId: string): string {
  return stepPath(step, requestId);
}

/** The key failed sign-ins are counted against (docs/security.md 10.11; http/client-address.ts). */
export function clientAddress(gh: Gatehouse, req: Request): string {
  return limitKeyOf(req, gh.config.trustedProxies);
}

function queryOf(req: Request): Map<string, string> {
  const q = req.originalUrl.indexOf('?');
  return parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
}

async function findRequest(gh: Gatehouse, req: Request, id: string | undefined): Promise<AuthRequest | undefined> {
  const browser = browserHashOf(gh, req);
  if (!browser || !id) return undefined;
  return pendingAuthRequest(gh.db, id, browser);
}

function requestExpired(req: Request, res: Response): undefined {
  const m = messagesFor(negotiateLocale([], req.headers['accept-language']));
  showErrorPage(res, m, { status: 400, error: 'invalid_request', description: 'the sign-in request is unknown or has expired', sentence: m.requestExpired });
  return undefined;
}

function localeOf(req: Request, request: AuthRequest): Messages {
  return messagesFor(negotiateLocale(request.uiLocales, req.headers['accept-language']));
}

/**
 * The request's application's name (for "Sign in to …") and the settings of its organization, from
 * the directory's caches; the instance's settings for the login UI's own requests (no client). The
 * one read of its own is the domain of an organization whose branding hides login-name suffixes.
 */
async function contextOf(
  gh: Gatehouse,
  request: AuthRequest,
): Promise<{ application: string | undefined; settings: OrgSettings; orgId: string | undefined; hiddenSuffix: string | undefined }> {
  const app = request.clientId === '' ? undefined : await gh.directory.application(gh.instanceId, request.clientId);
  const settings = await gh.directory.orgSettings(gh.instanceId, app?.orgId);
  return { application: app?.name, settings, orgId: app?.orgId, hiddenSuffix: await hiddenLoginNameSuffix(gh, settings, app?.orgId) };
}

/** GET of a step: the request, or undefined when the error page has been sent. */
export async function openStep(gh: Gatehouse, req: Request, res: Response): Promise<Step | undefined> {
  const request = await findRequest(gh, req, queryOf(req).get(REQUEST_PARAM));
  if (!request) return requestExpired(req, res);
  return { request, m: localeOf(req, request), ...(await contextOf(gh, request)), csrf: csrfTokenFor(gh, req, res) };
}

/** POST of a step: the form of a known request with a valid CSRF token, or undefined (error page sent). */
export async function submitStep(gh: Gatehouse, req: Request, res: Response): Promise<Submission | undefined> {
  const form = await readForm(req, gh.config.maxBodyBytes);
  const request = await findRequest(gh, req, form.get(REQUEST_PARAM) ?? queryOf(req).get(REQUEST_PARAM));
  if (!request) return requestExpired(req, res);
  const m = localeOf(req, request);
  if (!csrfValid(gh, req, form)) {
    refuseForgedForm(res, m);
    return undefined;
  }
  return { request, m, ...(await contextOf(gh, request)), csrf: form.get(CSRF_FIELD)!, form };
}

/**
 * A step's page: the shell (http/page.ts) with the request's application named above the heading,
 * in its organization's branding (login/branding.ts).
 */
export function stepPage(step: Step, parts: Omit<PageParts, 'm' | 'application' | 'branding'>): Html {
  return page({ ...parts, m: step.m, application: step.application, branding: pageBranding(step.settings.branding) });
}

/** The hidden fields of every step form. */
export function stepFields(step: Step): Html {
  return html`<input type="hidden" name="${REQUEST_PARAM}" value="${step.request.id}">
<input type="hidden" name="${CSRF_FIELD}" value="${step.csrf}">`;
}

/**
 * The origins a step's forms may end at (see contentSecurityPolicy): the client's, and with
 * `providers` the identity providers' the login name page's buttons go to (steps/idp.ts).
 */
export function stepFormTargets(step: Step, providers = false): string[] {
  const targets = [step.request.redirectUri, ...(providers ? step.settings.idps.map((idp) => idp.origin ?? '') : [])];
  return [...new Set(targets.map(formTargetOf).filter((target): target is string => target !== undefined))];
}

/** Sends a step's page; its forms may end in a redirect to the client (see contentSecurityPolicy), or to a provider with `providers`. */
export function sendStep(res: Response, step: Step, status: number, body: Html, providers = false): void {
  sendPage(res, status, body, stepFormTargets(step, providers));
}

export function goToStep(gh: Gatehouse, res: Response, step: StepName, requestId: string): void {
  seeOther(res, `${gh.config.externalUrl}${stepPath(step, requestId)}`);
}

/** The login is done: back to /authorize, which answers the client (code or tokens). */
export function goToCallback(gh: Gatehouse, res: Response, requestId: string): void {
  seeOther(res, callbackUrl(gh, requestId));
}

/** Where a finished sign-in continues: /authorize's callback for the request. */
export function callbackUrl(gh: Gatehouse, requestId: string): string {
  return `${gh.config.externalUrl}${AUTHORIZE_CALLBACK_PATH}?${REQUEST_PARAM}=${encodeURIComponent(requestId)}`;
}

/** The login policy's second-factor rules, for the steps (domain/instance/policies.ts). */
export { mfaRequired, sessionLacksMfa };

/** The passkey-first step (steps/passkey.ts). */
export const PASSKEY_STEP_PATH = `${LOGIN_UI_PATH}/passkey`;

/** On to the passkey-first step of this request. */
export function goToPasskeyStep(gh: Gatehouse, res: Response, requestId: string): void {
  seeOther(res, `${gh.config.externalUrl}${PASSKEY_STEP_PATH}?${REQUEST_PARAM}=${encodeURIComponent(requestId)}`);
}

/**
 * The relying party id when sign-in with a passkey is offered: a valid relying party and a policy
 * that allows passwordless sign-in; else undefined.
 */
export function passkeyRpId(gh: Gatehouse, login: Pick<LoginPolicy, 'passwordlessAllowed'>): string | undefined {
  const party = relyingParty(gh.config);
  return login.passwordlessAllowed && party.enabled ? party.id : undefined;
}

export function passkeysAllowed(gh: Gatehouse, login: Pick<LoginPolicy, 'passwordlessAllowed'>): boolean {
  return passkeyRpId(gh, login) !== undefined;
}

/**
 * The first sign-in step for a known user: the passkey-first step when the user has a passkey of
 * this relying party and the login policy allows passkeys (docs/passkeys.md#signing-in-with-a-passkey),
 * else the password step (which says how to sign in when the policy allows no password). After a
 * typed login name, and after an account choice that needs a fresh sign-in.
 */
export async function goToFirstFactor(gh: Gatehouse, res: Response, requestId: string, userId: string | undefined, login: Pick<LoginPolicy, 'passwordlessAllowed'>): Promise<void> {
  const rpId = passkeyRpId(gh, login);
  if (userId !== undefined && rpId !== undefined && (await hasReadyPasskey(gh.db, userId, rpId))) {
    return goToPasskeyStep(gh, res, requestId);
  }
  goToStep(gh, res, 'password', requestId);
}

/**
 * The first factor of `userId` is proven (`firstFactorAmr`: `pwd` after the password step, `fed` and
 * the provider's values after an external identity provider): the second factor comes next when one
 * is owed, and true comes back with the browser sent on; false when the first factor completes the
 * sign-in.
 *
 * - A user with an authenticator app is always asked for its code (steps/otp.ts), whatever the login
 *   policy says: a factor the user set up is never skipped.
 * - When the login policy forces a second factor (`mfaRequired`; an external sign-in is exempt under
 *   `forceMfaLocalOnly`): a user with a passkey goes to the passkey step (a passkey sign-in is two
 *   factors by itself, docs/decisions.md#a-passkey-sign-in-is-two-factors); any other sets one up
 *   now (steps/mfa-setup.ts).
 *
 * The request is marked with the user and the first factor (`markOtpPending`), so the next step
 * knows whose first factor was proven and ends the sign-in with both factors' `amr`. `loginName`
 * names the user on the request first, for a first factor that named none (an external sign-in).
 */
export async function goToSecondFactor(gh: Gatehouse, res: Response, step: Step, userId: string, firstFactorAmr: readonly string[], loginName?: string): Promise<boolean> {
  const { request } = step;
  const mark = async () => {
    if (loginName !== undefined) await rememberLoginName(gh.db, request.id, loginName, userId);
    await markOtpPending(gh.db, request.id, userId, firstFactorAmr);
  };
  if (await hasReadyOtp(gh.db, userId)) {
    await mark();
    goToStep(gh, res, 'otp', request.id);
    return true;
  }
  if (!mfaRequired(step.settings.login, firstFactorAmr.includes('fed') ? 'external' : 'local')) return false;
  const rpId = passkeyRpId(gh, step.settings.login);
  if (rpId !== undefined && (await hasReadyPasskey(gh.db, userId, rpId))) {
    if (loginName !== undefined) await rememberLoginName(gh.db, request.id, loginName, userId);
    goToPasskeyStep(gh, res, request.id);
    return true;
  }
  await mark();
  goToStep(gh, res, 'mfa-setup', request.id);
  return true;
}
