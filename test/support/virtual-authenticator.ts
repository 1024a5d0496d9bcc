/**
 * A browser page with a WebAuthn virtual authenticator of its own (Chromium's DevTools protocol,
 * the WebAuthn domain), for the browser suites that register and use passkeys.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

export interface Authenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/**
 * A page with an empty virtual authenticator and the DevTools session that drives it. Chromium's
 * virtual authenticator answers a conditional (autofill) request at once, as if the user had picked
 * the passkey from the autofill. So that a test can press the button, the page says it has no
 * autofill for passkeys (as browsers without conditional mediation do), unless the test is about
 * the autofill.
 */
export async function pageWithAuthenticator(
  browser: Browser,
  locale = 'en-US',
  options: { autofill?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; authenticator: Authenticator }> {
  const context = await browser.newContext({ locale, viewport: { width: 480, height: 760 } });
  if (options.autofill !== true) await context.addInitScript('if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = async () => false;');
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { context, page, authenticator: { cdp, authenticatorId } };
}
