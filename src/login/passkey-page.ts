/**
 * What the login pages with a passkey button share (docs/passkeys.md): the script that runs the
 * ceremony (http/assets/passkey.js, served with a content hash like the stylesheet), the button's
 * form, and the page's security headers, which let that one script of this origin run and fetch the
 * challenge. Without WebAuthn (or without JavaScript) the form stays hidden: no button that does
 * nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { relyingParty } from '../domain/passkeys/passkey-party.ts';
import { html, type Html } from '../http/html.ts';
import { LOGIN_UI_PATH } from '../http/paths.ts';
import { securityHeaders } from '../http/respond.ts';
import { PASSKEY_STEP_PATH, REQUEST_PARAM, stepFields, stepFormTargets, type Step } from './flow.ts';

const script = readFileSync(new URL('../http/assets/passkey.js', import.meta.url));
const version = createHash('sha256').update(script).digest('hex').slice(0, 12);

export const PASSKEY_SCRIPT_PATH = `${LOGIN_UI_PATH}/assets/passkey.js`;
/** Where the passkey-first page is shown and the assertion is posted. */
/** Where the script asks for a challenge. */
export const PASSKEY_OPTIONS_PATH = `${PASSKEY_STEP_PATH}/options`;

/** Which page a passkey form is on: the login name page (username-less) or the passkey-first step. */
export type PasskeyMode = 'login' | 'passkey';

export function servePasskeyScript(_req: Request, res: Response): void {
  res
    .status(200)
    .set('Content-Type', 'text/javascript; charset=utf-8')
    .set('Cache-Control', 'public, max-age=31536000, immutable')
    .set('X-Content-Type-Options', 'nosniff')
    .end(script);
}

/** Whether the login UI offers passkeys (a valid relying party, docs/passkeys.md#the-relying-party). */
export function passkeysEnabled(gh: Gatehouse): boolean {
  return relyingParty(gh.config).enabled;
}

/**
 * The passkey button with its (hidden) form, and the script that brings it to life. With `autofill`
 * the script also offers the browser's passkeys in the autofill of the page's `webauthn` field
 * (conditional mediation); a page that shows a refusal does not, so that an autofill choice the
 * server refused is not made again by itself.
 */
export function passkeyForm(step: Step, mode: PasskeyMode, options: { autofill?: boolean } = {}): Html {
  const { m } = step;
  return html`<form method="post" action="${PASSKEY_STEP_PATH}?${REQUEST_PARAM}=${encodeURIComponent(step.request.id)}" class="passkey" data-options="${PASSKEY_OPTIONS_PATH}" data-refused="${m.passkeyRefused}"${options.autofill === true ? html` data-autofill` : ''} hidden>
${stepFields(step)}
<input type="hidden" name="mode" value="${mode}">
<input type="hidden" name="challengeId" value="">
<input type="hidden" name="credential" value="">
<button type="button" class="${mode === 'login' ? 'secondary' : 'primary'}">${m.passkeySignIn}</button>
</form>
${passkeyScript()}`;
}

/**
 * Sends a step page that carries a passkey form: the usual headers (forms may end in a redirect to
 * the client), plus the script and the challenge fetch from this origin only.
 */
export function sendPasskeyStep(res: Response, step: Step, status: number, body: Html, providers = false): void {
  sendScriptedPage(res, status, body, stepFormTargets(step, providers));
}

/** A page with the passkey script: the usual headers, and scripts and fetches of this origin. */
export function sendScriptedPage(res: Response, status: number, body: Html, formTargets: readonly string[] = []): void {
  securityHeaders(res, formTargets, { scripts: true });
  res.status(status).type('text/html; charset=utf-8').send(body.value);
}

/** The script tag of a page with passkey forms. */
export function passkeyScript(): Html {
  return html`<script src="${PASSKEY_SCRIPT_PATH}?v=${version}" defer></script>`;
}
