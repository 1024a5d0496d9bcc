/**
 * The full authorization code flow without a browser, as `npm run bench` measures it: authorize →
 * login name page → a sign-in → callback → token, with cookies kept per flow. The sign-in is a
 * function of the login name page: the password one here (login name, then password: every flow pays
 * one argon2id check), the passkey one in passkey-flow.ts. Each worker runs flows one after another;
 * the figure is completed flows per second.
 */
import http from 'node:http';

export interface FlowOptions {
  base: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Default: openid. */
  scope?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export interface Reply {
  status: number;
  location: string | undefined;
  cookies: string[];
  body: string;
}

function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const setCookie = res.headers['set-cookie'] ?? [];
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, cookies: setCookie.map((c) => c.split(';')[0]!), body });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export function expectRedirect(reply: Reply, step: string): string {
  if (reply.status !== 303 && reply.status !== 302) throw new Error(`${step}: expected a redirect, got ${reply.status}`);
  return reply.location!;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** One flow's browser: it keeps every cookie it is given (the sign-in renews it, docs/security.md 10.7) and sends them back. */
export class Browser {
  private readonly jar = new Map<string, string>();

  get(url: string): Promise<Reply> {
    return this.kept(send(url, { headers: this.cookieHeader() }));
  }

  /** A form post, as the login UI's forms (and its passkey script) send them. */
  post(url: string, fields: Record<string, string>): Promise<Reply> {
    return this.kept(send(url, { method: 'POST', headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' }, body: form(fields) }));
  }

  /** The Cookie header this browser sends (empty without cookies). */
  cookies(): string {
    return this.cookieHeader()['cookie'] ?? '';
  }

  private cookieHeader(): Record<string, string> {
    return this.jar.size === 0 ? {} : { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  private async kept(pending: Promise<Reply>): Promise<Reply> {
    const reply = await pending;
    for (const cookie of reply.cookies) {
      const eq = cookie.indexOf('=');
      this.jar.set(cookie.slice(0, eq), cookie.slice(eq + 1));
    }
    return reply;
  }
}

/** The login name page /authorize sent the browser to. */
export interface LoginPage {
  browser: Browser;
  /** Its URL, with the authRequestID. */
  url: string;
  requestId: string;
  csrf: string;
  body: string;
}

/** Signs in from the login name page; resolves with where the sign-in sent the browser (the callback). */
export type SignIn = (page: LoginPage) => Promise<string>;

/** Login name, then password. */
export function passwordSignIn(loginName: string, password: string): SignIn {
  return async ({ browser, url, requestId, csrf }) => {
    const named = await browser.post(url.split('?')[0]!, { authRequestID: requestId, csrfToken: csrf, loginName });
    const passwordUrl = expectRedirect(named, 'login name');
    const passed = await browser.post(passwordUrl.split('?')[0]!, { authRequestID: requestId, csrfToken: csrf, password });
    return expectRedirect(passed, 'password');
  };
}

/** A new browser at /authorize, sent on to the login name page, which it has loaded. */
export async function openLoginPage(options: FlowOptions): Promise<LoginPage> {
  const browser = new Browser();
  const authorize = `${options.base}/oauth/v2/authorize?${form({ client_id: options.clientId, redirect_uri: options.redirectUri, response_type: 'code', scope: options.scope ?? 'openid', state: 'bench' })}`;
  const url = expectRedirect(await browser.get(authorize), 'authorize');
  const requestId = new URL(url).searchParams.get('authRequestID')!;
  const page = await browser.get(url);
  const csrf = /name="csrfToken" value="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error('login page: no CSRF token');
  return { browser, url, requestId, csrf, body: page.body };
}

/** One complete flow; resolves with the access token once the token endpoint has answered 200. */
export async function codeFlow(options: FlowOptions, signIn: SignIn): Promise<string> {
  const page = await openLoginPage(options);
  const { browser } = page;
  const callback = await signIn(page);
  const answered = await browser.get(callback);
  const code = new URL(expectRedirect(answered, 'callback')).searchParams.get('code');
  if (!code) throw new Error('callback: no code');
  const token = await send(`${options.base}/oauth/v2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`,
    },
    body: form({ grant_type: 'authorization_code', code, redirect_uri: options.redirectUri }),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${token.body}`);
  return (JSON.parse(token.body) as { access_token: string }).access_token;
}

export interface FlowResult {
  flows: number;
  perSecond: number;
  p99: number;
  errors: number;
}

/** Runs `concurrency` workers for `seconds`, worker i signing in with `signInOf(i)`. */
export async function measureFlows(options: FlowOptions, signInOf: (worker: number) => SignIn, concurrency: number, seconds: number): Promise<FlowResult> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const signIn = signInOf(worker);
      while (Date.now() < deadline) {
        const t = performance.now();
        try {
          await codeFlow(options, signIn);
          latencies.push(performance.now() - t);
        } catch (error) {
          errors++;
          if (errors > 50) throw new Error('the code flow keeps failing', { cause: error });
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const elapsed = (Date.now() - started) / 1000;
  return {
    flows: latencies.length,
    perSecond: latencies.length / elapsed,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    errors,
  };
}
