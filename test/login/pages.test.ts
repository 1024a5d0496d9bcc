/**
 * What every login page shares: security headers, `<html lang>` in the chosen language, labelled
 * inputs, escaping, the stylesheet, the error page (also as used by /authorize), the logged-out
 * page, and bad input answered with an HTML error page rather than JSON.
 */
import http from 'node:http';
import express from 'express';
import { renderErrorPage } from '../../src/http/error-page.ts';
import { renderLoggedOutPage } from '../../src/login/routes.ts';
import { ALICE, authRequest, Browser, csrfIn, startLoginServer, stepOf, submit, type LoginServer, type Reply } from './support.ts';

let ls: LoginServer;
beforeAll(async () => {
  ls = await startLoginServer();
});
afterAll(() => ls?.stop());

const STEP_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' http://localhost:3000; frame-ancestors 'none'; base-uri 'none'";
const PLAIN_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function expectSecurityHeaders(reply: Reply, csp = PLAIN_CSP): void {
  expect({
    csp: reply.headers.get('content-security-policy'),
    nosniff: reply.headers.get('x-content-type-options'),
    referrer: reply.headers.get('referrer-policy'),
    cache: reply.headers.get('cache-control'),
    frames: reply.headers.get('x-frame-options'),
  }).toEqual({ csp, nosniff: 'nosniff', referrer: 'no-referrer', cache: 'no-store', frames: 'DENY' }); // docs/security.md 10.14
}

/** Every visible input has a label whose `for` names it. */
function expectLabelledInputs(page: string): void {
  const inputs = [...page.matchAll(/<input ([^>]*)>/g)].map((m) => m[1]!).filter((attrs) => !/type="hidden"|\shidden(\s|$)/.test(attrs));
  for (const attrs of inputs) {
    const id = /id="([^"]+)"/.exec(attrs)?.[1];
    expect(id).toBeDefined();
    expect(page).toContain(`<label for="${id}">`);
  }
}

describe('every page', () => {
  it('sends the security headers, html lang, the stylesheet and labelled inputs', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    const pages: [string, Reply, string][] = [];
    for (const step of ['login', 'register']) pages.push([step, await b.get(stepOf(step, request.id)), STEP_CSP]);
    const named = await submit(b, 'login', request.id, { loginName: 'alice' });
    expectSecurityHeaders(named);
    pages.push(['password', await b.get(stepOf('password', request.id)), STEP_CSP]);
    const done = await submit(b, 'password', request.id, { password: ALICE.password });
    expect(done.status).toBe(303);
    expectSecurityHeaders(done);
    const second = await authRequest(ls.gh, b);
    pages.push(['accounts', await b.get(stepOf('accounts', second.id)), STEP_CSP]);
    pages.push(['logged-out', await b.get('/ui/login/logged-out'), PLAIN_CSP]);
    pages.push(['error (unknown request)', await b.get(stepOf('login', '1')), PLAIN_CSP]);
    pages.push(['error (not found)', await b.get('/ui/login/nowhere'), PLAIN_CSP]);
    pages.push(['error (csrf)', await b.post('/ui/login/login', { authRequestID: second.id }), PLAIN_CSP]);
    pages.push(['error (method)', await b.get('/ui/login/login', {}, 'PUT'), PLAIN_CSP]);

    const statuses = Object.fromEntries(pages.map(([name, reply]) => [name, reply.status]));
    expect(statuses).toEqual({
      login: 200,
      register: 200,
      password: 200,
      accounts: 200,
      'logged-out': 200,
      'error (unknown request)': 400,
      'error (not found)': 404,
      'error (csrf)': 403,
      'error (method)': 405,
    });
    for (const [, reply, csp] of pages) {
      expectSecurityHeaders(reply, csp);
      expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(reply.text).toMatch(/^<!doctype html>\n<html lang="en">/);
      expect(reply.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(reply.text).toMatch(/<link rel="stylesheet" href="\/ui\/login\/assets\/gatehouse\.css\?v=[0-9a-f]{12}">/);
      expect(reply.text).toContain('<div class="alert" role="alert">');
      expect(reply.text).not.toMatch(/<script|style="/);
      expectLabelledInputs(reply.text);
    }
  });

  it('serves the stylesheet with a long cache lifetime', async () => {
    const css = await fetch(`${ls.base}/ui/login/assets/gatehouse.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(css.headers.get('x-content-type-options')).toBe('nosniff');
    const text = await css.text();
    expect(text).toContain(':focus-visible');
    expect(text).toContain('@media (max-width: 30rem)');
  });

  it('escapes what it renders: a hostile login_hint stays text', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { loginHint: '"><script>alert(1)</script>' });
    const page = await b.get(stepOf('login', request.id));
    expect(page.text).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(page.text).not.toContain('<script>');
  });

  it('lists a custom-scheme redirect target by its scheme in form-action', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { redirectUri: 'com.example.app:/callback' });
    const page = await b.get(stepOf('login', request.id));
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' com.example.app:;");
  });
});

describe('under an https external URL', () => {
  let secure: LoginServer;
  beforeAll(async () => {
    secure = await startLoginServer({ GATEHOUSE_EXTERNAL_URL: 'https://login.example.test' });
  });
  afterAll(() => secure?.stop());

  it('uses the __Host- browser cookie (Secure, Path=/) and redirects to the external URL', async () => {
    const b = new Browser(secure.base);
    expect(b.cookieName).toBe('__Host-gh_browser');
    const request = await authRequest(secure.gh, b);
    const page = await b.get(stepOf('login', request.id));
    expect(page.status).toBe(200);
    expect(page.headers.getSetCookie()).toEqual([]);
    const named = await b.post('/ui/login/login', { authRequestID: request.id, csrfToken: csrfIn(page.text), loginName: 'alice' });
    expect(named.headers.get('location')).toBe(`https://login.example.test/ui/login/password?authRequestID=${request.id}`);
    const done = await submit(b, 'password', request.id, { password: ALICE.password });
    expect(done.status).toBe(303);
    expect(done.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^__Host-gh_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/),
    ]);
  });

  it('ignores the unprefixed cookie under https, even with a value it issued (docs/security.md 10.7)', async () => {
    const b = new Browser(secure.base);
    const request = await authRequest(secure.gh, b);
    const value = b.browserCookie!;
    b.cookies.clear();
    b.cookies.set('gh_browser', value);
    expect((await b.get(stepOf('login', request.id))).status).toBe(400);
  });
});

describe('language', () => {
  it('speaks German for ui_locales=de, on pages and error pages', async () => {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b, { uiLocales: ['fr', 'de'] });
    const login = await b.get(stepOf('login', request.id));
    expect(login.text).toContain('<html lang="de">');
    expect(login.text).toContain('<h1 id="title">Anmelden</h1>');
    expect(login.text).toContain('<label for="f-loginName">Anmeldename</label>');
    await submit(b, 'login', request.id, { loginName: 'nobody' });
    const wrong = await submit(b, 'password', request.id, { password: 'nope' });
    expect(wrong.text).toContain('Anmeldename oder Passwort ist falsch.');
    const forged = await b.post('/ui/login/password', { authRequestID: request.id, csrfToken: 'forged', password: 'x' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('<html lang="de">');
    expect(forged.text).toContain('Das Formular ist abgelaufen');
  });

  it('prefers ui_locales over Accept-Language, and uses Accept-Language without them', async () => {
    const b = new Browser(ls.base);
    b.acceptLanguage = 'de-DE,de;q=0.9,en;q=0.5';
    const english = await authRequest(ls.gh, b, { uiLocales: ['en'] });
    expect((await b.get(stepOf('login', english.id))).text).toContain('<html lang="en">');
    const unspecified = await authRequest(ls.gh, b);
    expect((await b.get(stepOf('login', unspecified.id))).text).toContain('<html lang="de">');
    expect((await b.get(stepOf('login', '1'))).text).toContain('Diese Anmeldeanfrage ist unbekannt oder abgelaufen');
    expect((await b.get('/ui/login/logged-out')).text).toContain('<h1 id="title">Sie sind abgemeldet</h1>');
    expect((await b.get('/ui/login/logged-out?ui_locales=en')).text).toContain('<h1 id="title">You are signed out</h1>');
  });
});

describe('bad input gets an HTML error page', () => {
  async function prepared(): Promise<{ b: Browser; id: string; csrf: string }> {
    const b = new Browser(ls.base);
    const request = await authRequest(ls.gh, b);
    const page = await b.get(stepOf('login', request.id));
    return { b, id: request.id, csrf: csrfIn(page.text) };
  }

  it.each([
    ['a repeated field', (id: string, csrf: string) => `authRequestID=${id}&csrfToken=${csrf}&loginName=a&loginName=b`, {}, 400, 'loginName is repeated'],
    ['a wrong content type', (id: string, csrf: string) => JSON.stringify({ authRequestID: id, csrfToken: csrf }), { 'content-type': 'application/json' }, 400, 'content type must be application/x-www-form-urlencoded'],
    ['invalid UTF-8', () => new Uint8Array([0x61, 0x3d, 0xff, 0xfe]), {}, 400, 'request body is not valid UTF-8'],
    ['an oversized body', () => `loginName=${'a'.repeat(70 * 1024)}`, {}, 413, 'request body is too large'],
  ])('%s', async (_name, body, headers: Record<string, string>, status, description) => {
    const { b, id, csrf } = await prepared();
    const reply = await b.post('/ui/login/login', body(id, csrf), headers);
    expect(reply.status).toBe(status);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('<code>invalid_request</code>');
    expect(reply.text).toContain(`<dd>${description}</dd>`);
    expectSecurityHeaders(reply);
  });

  it('a repeated authRequestID in the query is refused', async () => {
    const { b, id } = await prepared();
    const reply = await b.get(`/ui/login/login?authRequestID=${id}&authRequestID=${id}`);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('<dd>authRequestID is repeated</dd>');
  });
});

describe('renderErrorPage and renderLoggedOutPage, as other endpoints use them', () => {
  let url: string;
  let server: http.Server;
  beforeAll(async () => {
    const app = express();
    app.get('/error', (req, res) => {
      renderErrorPage(res, {
        status: 400,
        error: 'invalid_client',
        description: 'client_id "<img src=x onerror=alert(1)>" is unknown',
        locales: typeof req.query['ui'] === 'string' ? [req.query['ui']] : [],
        acceptLanguage: req.headers['accept-language'],
      });
    });
    app.get('/bye', (req, res) => renderLoggedOutPage(res, { acceptLanguage: req.headers['accept-language'] }));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('names the error code, says a human sentence, and escapes the description', async () => {
    const reply = await fetch(`${url}/error`);
    const text = await reply.text();
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-security-policy')).toBe(PLAIN_CSP);
    expect(text).toContain('<p>The application is not known to this sign-in service.</p>');
    expect(text).toContain('<code>invalid_client</code>');
    expect(text).toContain('client_id &quot;&lt;img src=x onerror=alert(1)&gt;&quot; is unknown');
    expect(text).not.toContain('<img');
  });

  it('chooses the language from the locales, then Accept-Language', async () => {
    expect(await (await fetch(`${url}/error?ui=de`)).text()).toContain('Die Anwendung ist diesem Anmeldedienst nicht bekannt.');
    expect(await (await fetch(`${url}/error`, { headers: { 'accept-language': 'fr;q=1, de;q=0.8' } })).text()).toContain('<html lang="de">');
    expect(await (await fetch(`${url}/error`, { headers: { 'accept-language': 'de;q=0, en' } })).text()).toContain('<html lang="en">');
    expect(await (await fetch(`${url}/bye`, { headers: { 'accept-language': 'de' } })).text()).toContain('Sie wurden abgemeldet.');
  });
});
