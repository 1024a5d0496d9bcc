/**
 * A user who signed in in a browser, set up through the domain functions the login UI uses: an
 * authorization request, a session, and the code the request is answered with. For suites that test
 * what happens after the login UI (grants, userinfo, end session) without driving its pages.
 */
import * as client from 'openid-client';
import { attachSession, createAuthRequest, issueCode } from '../../src/domain/sign-in/auth-requests.ts';
import { randomToken } from '../../src/domain/kernel/ids.ts';
import { browserHash, newBrowserId, recordAuthentication } from '../../src/domain/sign-in/sessions.ts';
import type { TestServer } from './gatehouse.ts';

export interface CodeOptions {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  userId: string;
  /** The browser's gh_browser cookie value; a new browser when absent. */
  browserCookie?: string;
  pkce?: boolean;
  /** When the user authenticated (default: now). */
  authTime?: Date;
  /** Issue the code as of this time (an expired code). */
  codeAt?: Date;
  /** How the user authenticated (default: ['pwd']; with the OTP step: ['pwd', 'otp', 'mfa']). */
  amr?: string[];
}

export interface IssuedCode {
  code: string;
  state: string;
  nonce: string;
  verifier: string | undefined;
  sessionId: string;
  /** The browser hash. */
  browser: string;
  authTime: Date;
  /** The authorization response as the browser brings it to the client. */
  callback: URL;
}

export async function signedInCode(server: TestServer, options: CodeOptions): Promise<IssuedCode> {
  const { db, instanceId } = server.running.gh;
  const browser = browserHash(options.browserCookie ?? newBrowserId(server.running.gh.masterKey));
  const state = randomToken(12);
  const nonce = randomToken(12);
  const verifier = options.pkce ? client.randomPKCECodeVerifier() : undefined;
  const request = await createAuthRequest(db, {
    instanceId,
    browser,
    clientId: options.clientId,
    redirectUri: options.redirectUri,
    responseType: 'code',
    responseMode: 'query',
    scopes: options.scopes,
    state,
    nonce,
    codeChallenge: verifier ? await client.calculatePKCECodeChallenge(verifier) : undefined,
    prompt: [],
    maxAge: undefined,
    loginHint: undefined,
    hintUserId: undefined,
    uiLocales: [],
  });
  const session = await recordAuthentication(db, { instanceId, browser, userId: options.userId, amr: options.amr ?? ['pwd'], ...(options.authTime ? { at: options.authTime } : {}) });
  await attachSession(db, request.id, options.userId, session.id);
  const { code } = await issueCode(db, request.id, server.config.lifetimes.authCode, options.codeAt);
  const callback = new URL(options.redirectUri);
  callback.search = new URLSearchParams({ code, state, iss: server.url }).toString();
  return { code, state, nonce, verifier, sessionId: session.id, browser, authTime: session.authTime, callback };
}
