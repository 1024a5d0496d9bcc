/**
 * Driving the login UI over plain HTTP like a browser without JavaScript: a cookie jar, GET and
 * form POST without following redirects, the CSRF token read from the page. Authorization requests
 * are created directly in the database for the browser's cookie, which the server issued (as
 * /authorize would have: the server ignores any other value, docs/security.md 10.7).
 */
import http from 'node:http';
import express from 'express';
import type { Gatehouse } from '../../src/context.ts';
import { createAuthRequest, type AuthRequest, type NewAuthRequest } from '../../src/domain/sign-in/auth-requests.ts';
import { hashSecret } from '../../src/domain/kernel/crypto.ts';
import { newId } from '../../src/domain/kernel/ids.ts';
import { browserHash, newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { browserCookieName } from '../../src/http/browser.ts';
import { loginRouter } from '../../src/login/routes.ts';
import type { UserState } from '../../src/store/schema.ts';
import { fixture, IDS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';

export const ALICE = { userName: 'alice', loginName: 'alice@acme.test', password: 'Correct-Horse-9' } as const;
export const REDIRECT_URI = 'http://localhost:3000/callback';
export const CALLBACK_PATH = '/oauth/v2/authorize/callback';

export interface LoginServer {
  server: TestServer;
  gh: Gatehouse;
  /** Where /ui/login is served. */
  base: string;
  stop(): Promise<void>;
}

/** The Gatehouse serving each base URL, so that a Browser of that base starts with a cookie it issued. */
const servers = new Map<string, Gatehouse>();

/**
 * A real Gatehouse with the shared fixture (or `document`). Until server/app.ts mounts the login
 * router, the router is served by a side listener on the same Gatehouse (same database and
 * configuration).
 */
export async function startLoginServer(env: Record<string, string> = {}, document: unknown = fixture().document): Promise<LoginServer> {
  const server = await startTestServer(document, env);
  const gh = server.running.gh;
  const probe = await fetch(`${server.url}/ui/login/assets/gatehouse.css`);
  await probe.arrayBuffer();
  if (probe.status === 200) {
    servers.set(server.url, gh);
    return { server, gh, base: server.url, stop: () => server.stop() };
  }

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use('/ui/login', loginRouter(gh));
  const side = http.createServer(app);
  await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
  const address = side.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  servers.set(`http://127.0.0.1:${port}`, gh);
  return {
    server,
    gh,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      side.closeAllConnections();
      await new Promise<void>((resolve) => side.close(() => resolve()));
      await server.stop();
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header as path and query (the host may be the external URL's). */
  location: string | undefined;
}

/** A browser: its cookies, and requests that do not follow redirects. */
export class Browser {
  readonly base: string;
  readonly cookies = new Map<string, string>();
  acceptLanguage: string | undefined;
  /** The browser cookie's name (`__Host-gh_browser` under an https external URL). */
  readonly cookieName: string;

  /**
   * A browser that has been to /authorize of the server at `base`: it holds a cookie that server
   * issued, unless `browserCookie` names another value (one the server never issued, say).
   */
  constructor(base: string, browserCookie?: string) {
    const gh = servers.get(base);
    if (!gh) throw new Error(`no login server at ${base}`);
    this.base = base;
    this.cookieName = browserCookieName(gh);
    this.cookies.set(this.cookieName, browserCookie ?? newBrowserId(gh.masterKey));
  }

  /** The browser cookie's value as the jar holds it now (a completed sign-in replaces it). */
  get browserCookie(): string | undefined {
    return this.cookies.get(this.cookieName);
  }

  /** The browser hash the auth requests and sessions of this browser carry. */
  get hash(): string {
    return browserHash(this.browserCookie ?? '');
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.cookies.size > 0) headers['cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.acceptLanguage !== undefined) headers['accept-language'] = this.acceptLanguage;
    return headers;
  }

  private async reply(response: Response): Promise<Reply> {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
    const location = response.headers.get('location') ?? undefined;
    const relative = location === undefined ? undefined : ((u) => `${u.pathname}${u.search}`)(new URL(location, this.base));
    return { status: response.status, headers: response.headers, text: await response.text(), location: relative };
  }

  async get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
    return this.reply(await fetch(`${this.base}${path}`, { method, redirect: 'manual', headers: this.headers(headers) }));
  }

  async post(path: string, form: Record<string, string> | string | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
    const body = typeof form === 'string' || form instanceof Uint8Array ? form : new URLSearchParams(form).toString();
    return this.reply(
      await fetch(`${this.base}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', ...headers }),
        body,
      }),
    );
  }
}

/** A pending authorization request of this browser, as /authorize would have stored it. */
export function authRequest(gh: Gatehouse, browser: Browser, overrides: Partial<NewAuthRequest> = {}): Promise<AuthRequest> {
  return createAuthRequest(gh.db, {
    instanceId: gh.instanceId,
    browser: browser.hash,
    clientId: 'shop-web',
    redirectUri: REDIRECT_URI,
    responseType: 'code',
    responseMode: 'query',
    scopes: ['openid'],
    state: 'state-1',
    nonce: undefined,
    codeChallenge: undefined,
    prompt: [],
    maxAge: undefined,
    loginHint: undefined,
    hintUserId: undefined,
    uiLocales: [],
    ...overrides,
  });
}

export function csrfIn(page: string): string {
  const match = /name="csrfToken" value="([^"]+)"/.exec(page);
  if (!match) throw new Error(`no CSRF field in page:\n${page}`);
  return match[1]!;
}

export function callbackOf(requestId: string): string {
  return `${CALLBACK_PATH}?authRequestID=${requestId}`;
}

export function stepOf(step: string, requestId: string): string {
  return `/ui/login/${step}?authRequestID=${requestId}`;
}

/** GET a step page and POST its form with `fields` (plus the hidden fields the page carries). */
export async function submit(browser: Browser, step: string, requestId: string, fields: Record<string, string>): Promise<Reply> {
  const page = await browser.get(stepOf(step, requestId));
  if (page.status !== 200) throw new Error(`GET ${step} answered ${page.status}:\n${page.text}`);
  return browser.post(`/ui/login/${step}`, { authRequestID: requestId, csrfToken: csrfIn(page.text), ...fields });
}

/** Login name step then password step; returns the password step's answer. */
export async function signIn(browser: Browser, requestId: string, loginName: string, password: string): Promise<Reply> {
  const named = await submit(browser, 'login', requestId, { loginName });
  if (named.status !== 303 || named.location !== stepOf('password', requestId)) throw new Error(`login step answered ${named.status} ${named.location}`);
  return submit(browser, 'password', requestId, { password });
}

/** A human user inserted directly (the fixture has only alice). */
export async function addHuman(
  gh: Gatehouse,
  input: { userName: string; password?: string; orgId?: string; state?: UserState; givenName?: string; familyName?: string },
): Promise<string> {
  const id = newId();
  await gh.db
    .insertInto('users')
    .values({
      id,
      instance_id: gh.instanceId,
      org_id: input.orgId ?? IDS.org,
      kind: 'human',
      user_name: input.userName,
      state: input.state ?? 'active',
      password_hash: input.password === undefined ? null : await hashSecret(input.password),
      given_name: input.givenName ?? null,
      family_name: input.familyName ?? null,
      email: `${input.userName}@example.test`,
    })
    .execute();
  return id;
}

/** A page with the per-request values (request id, CSRF token) replaced, for byte comparisons. */
export function normalized(page: string, requestId: string, csrf: string): string {
  return page.replaceAll(requestId, '{request}').replaceAll(csrf, '{csrf}');
}
