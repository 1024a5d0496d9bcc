/**
 * The email verification page (docs/decisions.md#email-codes): the default target of the link in a
 * code mail, `/ui/login/verify-email?userID=…&code=…&orgID=…&codeID=…`. GET shows the form prefilled
 * from the link (no code is checked on GET: mail scanners open links); POST, with the CSRF token,
 * checks the code. Not bound to a sign-in: the language comes from `ui_locales` or Accept-Language,
 * never from the user. A wrong code, an unknown user, an already used code and a code voided by too
 * many tries all get the same answer (no enumeration); only an expired code is told apart, so the
 * user asks for a new one.
 *
 * Anyone may post here for any user id: a try counts towards the code's own tries only
 * with the code's id from the mailed link (a hidden field), so strangers cannot void someone's code
 * (domain/email-codes.ts). Every try is one of the client address's tries: past 20 failures a
 * minute the page answers 429 with Retry-After, checking nothing.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { verifyEmailCode, type EmailCodeResult } from '../../domain/credentials/email-codes.ts';
import { Throttled } from '../../domain/sign-in/failure-throttle.ts';
import { withFailureBudget } from '../../domain/sign-in/secret-tries.ts';
import { parseParams, readForm } from '../../http/form.ts';
import { html } from '../../http/html.ts';
import { page } from '../../http/page.ts';
import { LOGIN_UI_PATH } from '../../http/paths.ts';
import { sendPage } from '../../http/respond.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from '../csrf.ts';
import { clientAddress } from '../flow.ts';
import { button, field } from '../layout.ts';
import { messagesForParams, type Messages } from '../messages.ts';

export const VERIFY_EMAIL_PATH = `${LOGIN_UI_PATH}/verify-email`;

/** Codes are 6 characters; anything much longer is not one. */
const MAX_CODE = 64;
/** Longer than any id we issue. */
const MAX_ID = 200;

interface Fields {
  userId: string;
  code: string;
  orgId: string;
  /** The code's id, from the link; empty when the link (or a typed form) has none. */
  codeId: string;
}

function fieldsOf(values: ReadonlyMap<string, string>): Fields {
  return { userId: clip(values.get('userID'), MAX_ID), code: clip(values.get('code'), MAX_CODE), orgId: clip(values.get('orgID'), MAX_ID), codeId: clip(values.get('codeID'), MAX_ID) };
}

function messagesOf(req: Request, params: ReadonlyMap<string, string>): Messages {
  return messagesForParams(params, req.headers['accept-language']);
}

function clip(value: string | undefined, max: number): string {
  return (value ?? '').trim().slice(0, max);
}

/**
 * The form posts back to the link's address (without the code), so the answer to a refused post
 * stands at an address that opens the same form again: a reload or a bookmark keeps the link's user.
 */
function actionOf(fields: Fields): string {
  const query = new URLSearchParams();
  if (fields.userId !== '') query.set('userID', fields.userId);
  if (fields.orgId !== '') query.set('orgID', fields.orgId);
  if (fields.codeId !== '') query.set('codeID', fields.codeId);
  const search = query.toString();
  return search === '' ? VERIFY_EMAIL_PATH : `${VERIFY_EMAIL_PATH}?${search}`;
}

function render(res: Response, m: Messages, csrf: string, status: number, fields: Fields, problem?: { alert: string; field?: string }): void {
  const body = html`<p>${m.verifyEmailIntro}</p>
<form method="post" action="${actionOf(fields)}">
<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
<input type="hidden" name="orgID" value="${fields.orgId}">
${fields.codeId === '' ? '' : html`<input type="hidden" name="codeID" value="${fields.codeId}">`}
${
  fields.userId === ''
    ? field({ name: 'userID', label: m.verifyEmailUserId, value: '', autocomplete: 'off', maxLength: MAX_ID, verbatim: true })
    : html`<input type="hidden" name="userID" value="${fields.userId}">`
}
${field({
  name: 'code',
  label: m.verifyEmailCode,
  value: fields.code,
  autocomplete: 'one-time-code',
  error: problem?.field,
  autofocus: true,
  maxLength: MAX_CODE,
  verbatim: true,
})}
${button(m.verifyEmailSubmit)}
</form>`;
  sendPage(res, status, page({ m, title: m.verifyEmailTitle, alert: problem?.alert, body }));
}

export function verifyEmailStep(gh: Gatehouse) {
  return {
    show(req: Request, res: Response): void {
      const q = req.originalUrl.indexOf('?');
      const params = parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
      render(res, messagesOf(req, params), csrfTokenFor(gh, req, res), 200, fieldsOf(params));
    },

    async submit(req: Request, res: Response): Promise<void> {
      const form = await readForm(req, gh.config.maxBodyBytes);
      const m = messagesOf(req, form);
      if (!csrfValid(gh, req, form)) {
        refuseForgedForm(res, m);
        return;
      }
      const csrf = form.get(CSRF_FIELD)!;
      const fields = fieldsOf(form);
      if (fields.code === '') return render(res, m, csrf, 400, fields, { alert: m.fixFields, field: m.required });
      let result: EmailCodeResult;
      try {
        // Without a user id nothing can match: answered (and counted) like a wrong code.
        result = await withFailureBudget({ throttle: gh.throttle, address: clientAddress(gh, req) }, () =>
          verifyEmailCode(gh, fields.userId, fields.code, fields.codeId === '' ? undefined : fields.codeId),
        );
      } catch (error) {
        if (!(error instanceof Throttled)) throw error;
        res.set('Retry-After', String(error.retryAfterSeconds));
        return render(res, m, csrf, 429, { ...fields, code: '' }, { alert: m.throttled(error.retryAfterSeconds) });
      }
      if (result === 'verified') {
        sendPage(res, 200, page({ m, title: m.emailVerifiedTitle, body: html`<p>${m.emailVerifiedText}</p>` }));
        return;
      }
      const message = result === 'expired' ? m.verifyEmailExpired : m.verifyEmailInvalid;
      render(res, m, csrf, 400, { ...fields, code: '' }, { alert: message, field: message });
    },
  };
}
