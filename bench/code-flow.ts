/**
 * The full authorization code flow without a browser, as `npm run bench` measures it: authorize →
 * login name → password → callback → token, with cookies kept per flow. Each worker runs flows one
 * after another; the figure is completed flows per second (every flow pays one argon2id check).
 */
import http from 'node:http';

export interface FlowOptions {
  base: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  loginName: string;
  password: string;
  /** Default: openid. */
  scope?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Reply {
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

function expectRedirect(reply: Reply, step: string): string {
  if (reply.status !== 303 && reply.status !== 302) throw new Error(`${step}: expected a redirect, got ${reply.status}`);
  return reply.location!;
}

/** One complete flow; resolves with the access token once the token endpoint has answered 200. */
export async function codeFlow(options: FlowOptions): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (reply: Reply) => {
    for (const cookie of reply.cookies) {
      const eq = cookie.indexOf('=');
      jar.set(cookie.slice(0, eq), cookie.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const post = (url: string, fields: Record<string, string>) =>
    send(url, { method: 'POST', headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, body: form(fields) });

  const authorize = `${options.base}/oauth/v2/authorize?${form({ client_id: options.clientId, redirect_uri: options.redirectUri, response_type: 'code', scope: options.scope ?? 'openid', state: 'bench' })}`;
  const start = await send(authorize);
  keep(start);
  const loginUrl = expectRedirect(start, 'authorize');
  const requestId = new URL(loginUrl).searchParams.get('authRequestID')!;
  const page = await send(loginUrl, { headers: { cookie: cookie() } });
  keep(page);
  const csrf = /name="csrfToken" value="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error('login page: no CSRF token');
  const named = await post(loginUrl.split('?')[0]!, { authRequestID: requestId, csrfToken: csrf, loginName: options.loginName });
  const passwordUrl = expectRedirect(named, 'login name');
  const passed = await post(passwordUrl.split('?')[0]!, { authRequestID: requestId, csrfToken: csrf, password: options.password });
  keep(passed); // the sign-in renews the browser cookie (SPEC 10.7)
  const callback = expectRedirect(passed, 'password');
  const answered = await send(callback, { headers: { cookie: cookie() } });
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

/** Runs `concurrency` workers for `seconds`. */
export async function measureFlows(options: FlowOptions, concurrency: number, seconds: number): Promise<FlowResult> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const t = performance.now();
        try {
          await codeFlow(options);
          latencies.push(performance.now() - t);
        } catch {
          errors++;
          if (errors > 50) throw new Error('the code flow keeps failing');
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
