/**
 * Setting up a second factor on the way in (docs/login-ui.md#setting-up-a-second-factor): when the
 * login policy of the request's organization forces one (`forceMfa`, flow.ts mfaRequired) and the
 * user whose password was just checked has none (no authenticator app, no passkey the policy
 * allows), the password step marks the request (as for the code step: `markOtpPending`, naming the
 * user and the first factor) and sends the browser here; so does a sign-in through an external
 * identity provider when the policy asks it for a local second factor (steps/idp.ts). No session exists and nothing goes to the client until a factor
 * is set up: a user who leaves this page is not signed in.
 *
 * - An authenticator app (docs/decisions.md#the-authenticator-app): the QR code of the otpauth URL,
 *   drawn on the server as an SVG image (no script needed), the key as text for typing in by hand,
 *   and a field for the first code. The factor is the one RegisterTOTP adds (domain/credentials/otp.ts);
 *   a reload shows the same key while it is unverified, so a key already scanned keeps working. A
 *   valid code makes it ready and finishes the sign-in with amr ["pwd", "otp", "mfa"] (["fed", …]
 *   after a provider); wrong codes
 *   count towards the lockout and the address's tries, as on the code step.
 * - A passkey (when the policy allows passkeys and the relying party is enabled,
 *   docs/passkeys.md): the self-service page's ceremony (http/assets/passkey.js, form.passkey-add),
 *   whose options come from POST /ui/login/mfa-setup/options. A verified registration finishes the
 *   sign-in with amr ["pwd", "user", "mfa"]: the password, and the passkey's user verification and
 *   possession (a passkey sign-in's amr, docs/decisions.md#a-passkey-sign-in-is-two-factors).
 *
 * Whoever is here has proven the first factor only: they may add the first second factor, never change
 * one (a user with a ready factor is sent to the step that asks for it).
 */
import type { Request, Response } from 'express';
import QRCode from 'qrcode';
import type { Gatehouse } from '../../context.ts';
import { addOtpFactor, hasReadyOtp, otpUrl, verifyOtpFactor } from '../../domain/credentials/otp.ts';
import { finishPasskeyRegistration, startPasskeyRegistration } from '../../domain/passkeys/passkey-registration.ts';
import { PASSKEY_AMR } from '../../domain/passkeys/passkey-sign-in.ts';
import { hasReadyPasskey, loadPasskeyUser, type PasskeyUser } from '../../domain/passkeys/passkeys.ts';
import { countFailedAttempt, minutesUntil, type AttemptRefusal } from '../../domain/sign-in/lockout.ts';
import { clearOtpPending } from '../../domain/sign-in/auth-requests.ts';
import { pendingOtp, withSecondFactor, type PendingOtp } from '../../domain/sign-in/login-names.ts';
import { html, type Html } from '../../http/html.ts';
import { securityHeaders } from '../../http/respond.ts';
import { findOtpFactor } from '../../store/otp-factors.ts';
import { shownLoginName } from '../branding.ts';
import { finishWithAuthentication } from '../finish.ts';
import {
  clientAddress, goToPasskeyStep, goToStep, mfaRequired, openStep, passkeyRpId, passkeysAllowed, REQUEST_PARAM, sendStep, stepAction, stepFields, stepPage, stepPath, submitStep, type Step, type Submission,
} from '../flow.ts';
import { button, field, link } from '../layout.ts';
import { passkeyScript, sendPasskeyStep } from '../passkey-page.ts';

/** Longer than any code: a longer input is refused without checking (as on the code step). */
const MAX_CODE_LENGTH = 16;
/** As the passkeys page's name (1–200 characters). */
const MAX_NAME = 200;
/** Passkey ids are snowflakes. */
const ID = /^\d{1,24}$/;
export const MFA_SETUP_OPTIONS_PATH = '/ui/login/mfa-setup/options';

/** The key and the otpauth URL of the user's authenticator app being set up. */
interface AppSetup {
  secret: string;
  url: string;
}

interface Problem {
  alert: string;
  field?: string;
}

/** The user the request's password check named, with the directory's login name (the QR code's label). */
interface SetupUser {
  pending: PendingOtp;
  passkeyUser: PasskeyUser;
}

/** The key read in groups of four, as authenticator apps accept it typed in. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

async function qrImage(url: string): Promise<string> {
  const svg = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/**
 * The unverified factor's key when there is one (a reload, a wrong code), else a new factor. The
 * sealed key is read, never written, here; adding is the domain's (domain/credentials/otp.ts).
 */
async function appSetupOf(gh: Gatehouse, user: PasskeyUser): Promise<AppSetup | undefined> {
  const existing = await findOtpFactor(gh.db, user.id);
  if (existing?.state === 'unverified') {
    const secret = gh.masterKey.decrypt(existing.secret);
    return { secret, url: otpUrl(gh.config.issuerName, user.loginName, secret) };
  }
  const added = await addOtpFactor(gh, { id: user.id, orgId: user.orgId, loginName: user.loginName });
  return added.kind === 'added' ? { secret: added.otp.secret, url: added.otp.url } : undefined;
}

/** Whether the policy lets this user set up a passkey here. */
function passkeyOffered(gh: Gatehouse, step: Step): boolean {
  return passkeysAllowed(gh, step.settings.login);
}

async function render(gh: Gatehouse, res: Response, step: Step, status: number, who: SetupUser, app: AppSetup, problem?: Problem, passkeyProblem?: string): Promise<void> {
  const { m, request } = step;
  const passkeys = passkeyOffered(gh, step);
  const passkeyPart: Html = passkeys
    ? html`<h2>${m.mfaSetupPasskeyTitle}</h2>
<p>${m.mfaSetupPasskeyIntro}</p>
<form method="post" action="${stepAction('mfa-setup', request.id)}" class="passkey-add" data-options="${MFA_SETUP_OPTIONS_PATH}?${REQUEST_PARAM}=${encodeURIComponent(request.id)}" data-failed="${m.passkeyAddFailed}" hidden>
${stepFields(step)}
<input type="hidden" name="action" value="passkey">
<input type="hidden" name="passkeyId" value="">
<input type="hidden" name="credential" value="">
${field({ name: 'name', label: m.passkeyName, autocomplete: 'off', hint: m.passkeyNameHint, maxLength: MAX_NAME })}
<button type="button" class="secondary">${m.mfaSetupPasskeyButton}</button>
</form>
${passkeyScript()}`
    : html``;
  const body = html`<p class="identity">${m.signingInAs} <strong>${shownLoginName(step, who.pending.loginName)}</strong></p>
<p>${m.mfaSetupIntro}</p>
<h2>${m.mfaSetupAppTitle}</h2>
<p>${m.mfaSetupAppIntro}</p>
<p><img class="qr" src="${await qrImage(app.url)}" width="200" height="200" alt="${m.mfaSetupQrAlt}"></p>
<dl class="facts">
<dt>${m.mfaSetupSecret}</dt><dd><code class="otp-secret">${grouped(app.secret)}</code></dd>
</dl>
<form method="post" action="${stepAction('mfa-setup', request.id)}">
${stepFields(step)}
<input type="hidden" name="action" value="otp">
${field({ name: 'code', label: m.otpCode, autocomplete: 'one-time-code', error: problem?.field, autofocus: true, maxLength: MAX_CODE_LENGTH, verbatim: true })}
${button(m.mfaSetupVerify)}
</form>
${passkeyPart}
<nav class="links">
${link(stepPath('login', request.id), m.useAnotherAccount)}
</nav>`;
  const shown = stepPage(step, { title: m.mfaSetupTitle, alert: problem?.alert ?? passkeyProblem, body });
  if (passkeys) sendPasskeyStep(res, step, status, shown);
  else sendStep(res, step, status, shown);
}

function parsed(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // refused like any other malformed credential
  }
}

function trimmedName(form: ReadonlyMap<string, string>): string | undefined {
  const name = (form.get('name') ?? '').trim();
  return name === '' || [...name].length > MAX_NAME ? undefined : name;
}

export function mfaSetupStep(gh: Gatehouse) {
  /**
   * The user who owes a second factor in this request and has none yet; else the browser has been
   * sent on (to the login name step without a checked password, to the step that asks for the
   * factor a user already has, or on when the policy no longer forces one) and undefined comes back.
   */
  async function setupUserOf(res: Response, step: Step, submitted: boolean): Promise<SetupUser | undefined> {
    const { request } = step;
    const pending = await pendingOtp(gh.db, request.id);
    const passkeyUser = pending === undefined ? undefined : await loadPasskeyUser(gh.db, gh.instanceId, pending.user.id);
    // A user deactivated since the password step starts over (and the password step refuses it).
    if (pending === undefined || !pending.user.active || passkeyUser === undefined || passkeyUser.kind !== 'human') return void goToStep(gh, res, 'login', request.id);
    if (await hasReadyOtp(gh.db, pending.user.id)) return void goToStep(gh, res, 'otp', request.id);
    const rpId = passkeyRpId(gh, step.settings.login);
    if (rpId !== undefined && (await hasReadyPasskey(gh.db, pending.user.id, rpId))) {
      return void goToPasskeyStep(gh, res, request.id);
    }
    if (!mfaRequired(step.settings.login)) {
      // The policy changed since the password step: the password alone completes the sign-in now,
      // on a form's post (CSRF-checked); a GET changes nothing and leads to the password step.
      if (!submitted) return void goToStep(gh, res, 'password', request.id);
      await clearOtpPending(gh.db, request.id);
      await finishWithAuthentication(gh, res, request, pending.user.id, pending.firstFactorAmr);
      return undefined;
    }
    return { pending, passkeyUser };
  }

  /** Shows the page again with the factor being set up (a new one if it went away meanwhile). */
  async function again(res: Response, step: Step, status: number, who: SetupUser, problem?: Problem, passkeyProblem?: string): Promise<void> {
    const app = await appSetupOf(gh, who.passkeyUser);
    if (app === undefined) return goToStep(gh, res, 'otp', step.request.id); // made ready meanwhile (another tab)
    await render(gh, res, step, status, who, app, problem, passkeyProblem);
  }

  async function submitCode(req: Request, res: Response, step: Submission, who: SetupUser): Promise<void> {
    const { m, request } = step;
    const { user } = who.pending;
    const now = new Date();
    const address = clientAddress(gh, req);
    // Taken before the check and given back on success (docs/security.md 10.11), as on the code step.
    const wait = gh.throttle.take(address, now.getTime());
    if (wait > 0) {
      res.set('Retry-After', String(wait));
      return again(res, step, 429, who, { alert: m.throttled(wait) });
    }
    const code = (step.form.get('code') ?? '').replace(/\s+/g, '');
    if (code === '') {
      gh.throttle.succeeded(address, now.getTime());
      return again(res, step, 400, who, { alert: m.fixFields, field: m.required });
    }
    const refused = (refusal: AttemptRefusal) =>
      again(res, step, 400, who, { alert: refusal.kind === 'locked' ? m.locked(minutesUntil(refusal.until, now)) : m.invalidOtp });
    if (!user.active || code.length > MAX_CODE_LENGTH) return refused(await countFailedAttempt(gh, { requestId: request.id, user, factor: 'otp' }, now));
    const otpUser = { id: user.id, orgId: user.orgId, loginName: who.passkeyUser.loginName };
    const checked = await verifyOtpFactor(gh, otpUser, code, now, (trx) => countFailedAttempt(gh, { requestId: request.id, user, factor: 'otp' }, now, trx));
    switch (checked.kind) {
      case 'verified':
        gh.throttle.succeeded(address, now.getTime());
        await clearOtpPending(gh.db, request.id);
        return finishWithAuthentication(gh, res, request, user.id, withSecondFactor(who.pending.firstFactorAmr, ['otp', 'mfa']));
      case 'invalid':
        return refused(checked.refusal);
      case 'locked':
        gh.throttle.succeeded(address, now.getTime()); // nothing was guessed
        return again(res, step, 400, who, { alert: m.locked(minutesUntil(checked.until, now)) });
      case 'already_ready':
        gh.throttle.succeeded(address, now.getTime());
        return goToStep(gh, res, 'otp', request.id); // set up meanwhile: its code is asked for
      case 'not_found':
        gh.throttle.succeeded(address, now.getTime());
        return again(res, step, 400, who, { alert: m.invalidOtp }); // removed meanwhile: a new key
    }
  }

  async function submitPasskey(res: Response, step: Submission, who: SetupUser): Promise<void> {
    const { m, request, form } = step;
    if (!passkeyOffered(gh, step)) return again(res, step, 400, who, undefined, m.passkeyAddFailed);
    const name = trimmedName(form);
    const credential = parsed(form.get('credential'));
    const passkeyId = form.get('passkeyId') ?? '';
    if (!who.pending.user.active || name === undefined || credential === undefined || !ID.test(passkeyId)) return again(res, step, 400, who, undefined, m.passkeyAddFailed);
    const user = who.passkeyUser;
    const finished = await finishPasskeyRegistration(gh, user, { passkeyId, credential, name, creator: user.id });
    if (finished.kind !== 'verified') return again(res, step, 400, who, undefined, m.passkeyAddFailed);
    await clearOtpPending(gh.db, request.id);
    await finishWithAuthentication(gh, res, request, user.id, withSecondFactor(who.pending.firstFactorAmr, PASSKEY_AMR));
  }

  return {
    async show(req: Request, res: Response): Promise<void> {
      const step = await openStep(gh, req, res);
      if (!step) return;
      const who = await setupUserOf(res, step, false);
      if (who !== undefined) await again(res, step, 200, who);
    },

    async submit(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const who = await setupUserOf(res, step, true);
      if (who === undefined) return;
      const action = step.form.get('action');
      if (action === 'otp') return submitCode(req, res, step, who);
      if (action === 'passkey') return submitPasskey(res, step, who);
      await again(res, step, 400, who, { alert: step.m.fixFields });
    },

    /** The options of a passkey registration for the page's script: JSON, never cached. */
    async options(req: Request, res: Response): Promise<void> {
      const step = await submitStep(gh, req, res);
      if (!step) return;
      const pending = await pendingOtp(gh.db, step.request.id);
      securityHeaders(res);
      if (!passkeyOffered(gh, step) || !mfaRequired(step.settings.login)) return void res.status(404).json({ error: 'passkeys are not offered here' });
      const user = pending === undefined || !pending.user.active ? undefined : await loadPasskeyUser(gh.db, gh.instanceId, pending.user.id);
      if (user === undefined || user.kind !== 'human') return void res.status(400).json({ error: 'no sign-in to set up a passkey for' });
      if (trimmedName(step.form) === undefined) return void res.status(400).json({ error: 'name' });
      const started = await startPasskeyRegistration(gh, user, { creator: user.id });
      if (started.kind !== 'started') return void res.status(400).json({ error: 'refused' });
      res.status(200).json({ passkeyId: started.registration.passkeyId, options: started.registration.options });
    },
  };
}
