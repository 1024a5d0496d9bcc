/**
 * The login UI under /ui/login (docs/endpoints.md#login-ui), mounted by server/app.ts. Every page
 * answers HTML with the security headers; every error of this world is rendered here once, as the
 * error page in the user's language (never JSON, never a stack).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { showErrorPage } from '../http/error-page.ts';
import { logAnswer, RetryLater, toOAuthError } from '../http/errors.ts';
import { negotiateLocale } from '../http/locale.ts';
import { serveFavicon } from '../http/favicon.ts';
import { serveStylesheet } from '../http/stylesheet.ts';
import { BRANDING_STYLESHEET_ROUTE, serveBrandingStylesheet } from './branding.ts';
import { messagesFor } from './messages.ts';
import { servePasskeyScript } from './passkey-page.ts';
import { accountsStep } from './steps/accounts.ts';
import { loggedOutStep } from './steps/logged-out.ts';
import { loginNameStep } from './steps/login-name.ts';
import { mfaSetupStep } from './steps/mfa-setup.ts';
import { otpStep } from './steps/otp.ts';
import { passkeyStep } from './steps/passkey.ts';
import { passkeysDonePage, passkeysPage } from './steps/passkeys-page.ts';
import { passwordStep } from './steps/password.ts';
import { passwordChangedPage, passwordResetStep, setPasswordPage } from './steps/password-reset.ts';
import { idpStep } from './steps/idp.ts';
import { registerStep } from './steps/register.ts';
import { verifyEmailStep } from './steps/verify-email.ts';
import { logoutCancelledPage, logoutStep } from './steps/logout.ts';
import { goToFirstFactor, openStep } from './flow.ts';

export { renderLoggedOutPage } from './steps/logged-out.ts';

function notAllowed(allowed: string) {
  return (req: Request, res: Response): void => {
    res.set('Allow', allowed);
    const m = messagesFor(negotiateLocale([], req.headers['accept-language']));
    showErrorPage(res, m, { status: 405, error: 'method_not_allowed', description: `use ${allowed}` });
  };
}

export function loginRouter(gh: Gatehouse): express.Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  const wrap = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next);
  /** A step whose page takes GET and POST, and whose script asks for a passkey ceremony's options (POST). */
  const stepWithOptions = (path: string, step: { show: express.RequestHandler; submit: express.RequestHandler; options: express.RequestHandler }) => {
    router.get(path, step.show);
    router.post(path, step.submit);
    router.all(path, notAllowed('GET, POST'));
    router.post(`${path}/options`, step.options);
    router.all(`${path}/options`, notAllowed('POST'));
  };
  const steps = {
    login: loginNameStep(gh),
    password: passwordStep(gh),
    'password-reset': passwordResetStep(gh),
    otp: otpStep(gh),
    accounts: accountsStep(gh),
    register: registerStep(gh),
  };
  for (const [name, step] of Object.entries(steps)) {
    router.get(`/${name}`, step.show);
    router.post(`/${name}`, step.submit);
    router.all(`/${name}`, notAllowed('GET, POST'));
  }
  // A known user who must sign in again (authorize-finish.ts: a session without the second factor
  // the policy asks for): the first step for that user.
  router.get(
    '/first-factor',
    wrap(async (req, res) => {
      const step = await openStep(gh, req, res);
      if (step !== undefined) await goToFirstFactor(gh, res, step.request.id, step.request.userId, step.settings.login);
    }),
  );
  router.all('/first-factor', notAllowed('GET'));
  // docs/passkeys.md#signing-in-with-a-passkey: the passkey-first step and the assertion (GET, POST),
  // the script's challenge (POST).
  stepWithOptions('/passkey', passkeyStep(gh));
  // docs/login-ui.md#setting-up-a-second-factor: the page and its forms (GET, POST), the passkey's options (POST).
  stepWithOptions('/mfa-setup', mfaSetupStep(gh));
  // docs/federation.md#signing-in-with-a-provider: the button (POST), back from the provider (GET),
  // and the choice when no account is linked (POST).
  const idp = idpStep(gh);
  router.post('/idp', wrap(idp.start));
  router.all('/idp', notAllowed('POST'));
  router.get('/idp/done', wrap(idp.done));
  router.all('/idp/done', notAllowed('GET'));
  router.get('/idp/failed', wrap(idp.failed));
  router.all('/idp/failed', notAllowed('GET'));
  router.post('/idp/link', wrap(idp.link));
  router.all('/idp/link', notAllowed('POST'));
  router.post('/idp/create', wrap(idp.create));
  router.all('/idp/create', notAllowed('POST'));
  // The self-service page of the browser's signed-in user (no authRequestID).
  const passkeys = passkeysPage(gh);
  router.get('/passkeys', passkeys.show);
  router.post('/passkeys', passkeys.submit);
  router.all('/passkeys', notAllowed('GET, POST'));
  router.post('/passkeys/options', passkeys.options);
  router.all('/passkeys/options', notAllowed('POST'));
  router.get('/passkeys/done', passkeysDonePage);
  router.all('/passkeys/done', notAllowed('GET'));
  // The target of a reset mail's link (no authRequestID needed), and the end of a reset no sign-in started.
  const setPassword = setPasswordPage(gh);
  router.get('/set-password', setPassword.show);
  router.post('/set-password', setPassword.submit);
  router.all('/set-password', notAllowed('GET, POST'));
  router.get('/password-changed', passwordChangedPage(gh));
  router.all('/password-changed', notAllowed('GET'));
  router.get('/logged-out', loggedOutStep);
  router.all('/logged-out', notAllowed('GET'));
  // Not part of a sign-in: the target of the link in a code mail (no authRequestID).
  const verifyEmail = verifyEmailStep(gh);
  router.get('/verify-email', verifyEmail.show);
  router.post('/verify-email', verifyEmail.submit);
  router.all('/verify-email', notAllowed('GET, POST'));
  const logout = logoutStep(gh);
  router.get('/logout', (req, res, next) => void logout.show(req, res).catch(next));
  router.post('/logout', (req, res, next) => void logout.submit(req, res).catch(next));
  router.all('/logout', notAllowed('GET, POST'));
  router.get('/logout/cancelled', logoutCancelledPage);
  router.all('/logout/cancelled', notAllowed('GET'));
  router.get('/assets/gatehouse.css', serveStylesheet);
  router.get('/assets/passkey.js', servePasskeyScript);
  router.get('/assets/favicon.svg', serveFavicon);
  // An organization's colours (login/branding.ts): a stylesheet, so the pages' CSP stays style-src 'self'.
  const brandingStylesheet = serveBrandingStylesheet(gh);
  router.get(BRANDING_STYLESHEET_ROUTE, (req, res, next) => void brandingStylesheet(req, res).catch(next));

  router.use((req: Request, res: Response) => {
    const m = messagesFor(negotiateLocale([], req.headers['accept-language']));
    showErrorPage(res, m, { status: 404, error: 'not_found', description: 'no such page' });
  });
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const oauth = toOAuthError(error);
    logAnswer(gh.log, oauth, error, { path: req.path }, 'login request');
    if (res.headersSent) return void res.end();
    if (oauth instanceof RetryLater) res.set('Retry-After', String(oauth.retryAfterSeconds));
    const m = messagesFor(negotiateLocale([], req.headers['accept-language']));
    showErrorPage(res, m, { status: oauth.status, error: oauth.error, description: oauth.description });
  });
  return router;
}
