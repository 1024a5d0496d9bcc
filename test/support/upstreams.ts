/**
 * External identity providers for the federation tests, on 127.0.0.1: node-oidc-provider (OpenID
 * Certified) as an OpenID provider and as a plain OAuth 2.0 server, driven through its development
 * login and consent forms, and a small provider that misbehaves on purpose, one way at a time.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './ports.ts';

/** A cookie jar following redirects by hand. */
export class Jar {
  readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return response;
  }
}

/**
 * Drives node-oidc-provider's development login and consent forms until it redirects to a URL
 * starting with `stopAt`; that URL.
 */
export async function authorizeAtOidcProvider(authorizationUrl: string, account: string, stopAt: string): Promise<URL> {
  const jar = new Jar();
  let url = authorizationUrl;
  for (let hop = 0; hop < 12; hop++) {
    const response = await jar.fetch(url);
    const location = response.headers.get('location');
    if (location !== null) {
      await response.arrayBuffer();
      const next = new URL(location, url);
      if (next.href.startsWith(stopAt)) return next;
      url = next.href;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || action === undefined) throw new Error(`unexpected page ${response.status}:\n${page.slice(0, 500)}`);
    const fields: Record<string, string> = page.includes('name="login"') ? { prompt: 'login', login: account, password: 'any' } : { prompt: 'consent' };
    const posted = await jar.fetch(new URL(action, url).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    await posted.arrayBuffer();
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}

/** The account node-oidc-provider knows: `ada`, with every standard claim and a numeric `id` for OAuth. */
export const UPSTREAM_ACCOUNTS: Record<string, { sub: string } & Record<string, unknown>> = {
  ada: {
    sub: 'ada',
    id: 4711,
    preferred_username: 'ada.l',
    given_name: 'Ada',
    family_name: 'Lovelace',
    name: 'Ada Lovelace',
    nickname: 'Countess',
    email: 'ada@example.org',
    email_verified: true,
    phone_number: '+41 79 000 00 00',
    phone_number_verified: false,
    locale: 'en-GB',
  },
};

/** The clients node-oidc-provider has: an OpenID client (client_secret_basic) and a plain OAuth client (client_secret_post). */
export const UPSTREAM_CLIENTS = {
  oidc: { clientId: 'gatehouse', clientSecret: 'upstream-secret-1' },
  oauth: { clientId: 'gatehouse-oauth', clientSecret: 'upstream-secret-2' },
};

export interface OidcUpstream {
  issuer: string;
  stop(): Promise<void>;
}

/** node-oidc-provider on a free port (or `port`), its two clients registered for `redirectUri`. */
export async function startOidcUpstream(redirectUri: string, options: { port?: number } = {}): Promise<OidcUpstream> {
  const port = options.port ?? (await freePort());
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    clients: [
      { client_id: UPSTREAM_CLIENTS.oidc.clientId, client_secret: UPSTREAM_CLIENTS.oidc.clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
      // a plain OAuth client: client_secret_post, as generic OAuth sends it
      {
        client_id: UPSTREAM_CLIENTS.oauth.clientId, client_secret: UPSTREAM_CLIENTS.oauth.clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'upstream-1', use: 'sig', alg: 'RS256' }] },
    claims: {
      openid: ['sub', 'id'],
      profile: ['preferred_username', 'given_name', 'family_name', 'name', 'nickname', 'locale'],
      email: ['email', 'email_verified'],
      phone: ['phone_number', 'phone_number_verified'],
    },
    findAccount: (_ctx, id) => (UPSTREAM_ACCOUNTS[id] ? { accountId: id, claims: () => UPSTREAM_ACCOUNTS[id]! } : undefined),
    features: { devInteractions: { enabled: true } },
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What the misbehaving provider does wrong this time. */
export interface Misbehaviour {
  signWith?: crypto.KeyObject;
  nonce?: string;
  iss?: string;
  aud?: string | string[];
  azp?: string;
  expiresIn?: number;
  amr?: string[];
  userinfoSub?: string;
  slowMs?: number;
  hugeUserinfo?: boolean;
  userinfo?: Record<string, unknown>;
}

export interface MisbehavingUpstream {
  /** Its issuer and the base of its endpoints (`/authorize`, `/token`, `/userinfo`, `/user`, `/jwks`). */
  base: string;
  /** Client `rp`, secret `rp-secret`. */
  clientId: string;
  clientSecret: string;
  /** A key it does not publish, to sign with when told. */
  otherKey: crypto.KeyObject;
  /** What it does wrong from now on; `{}` for nothing. */
  misbehave(wrong: Misbehaviour): void;
  stop(): Promise<void>;
}

/**
 * A small OpenID provider (and OAuth server: `/user`) that redirects back at once from
 * `/authorize` with a code, for any redirect URI, and does wrong what it is told to.
 */
export async function startMisbehavingUpstream(): Promise<MisbehavingUpstream> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const key = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  let wrong: Misbehaviour = {};
  const codes = new Map<string, { nonce: string | undefined; challenge: string | undefined }>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url!, base);
    const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      void (async () => {
        if (url.pathname === '/.well-known/openid-configuration') {
          return json(200, {
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            userinfo_endpoint: `${base}/userinfo`,
            jwks_uri: `${base}/jwks`,
            response_types_supported: ['code'],
            id_token_signing_alg_values_supported: ['RS256'],
          });
        }
        if (url.pathname === '/jwks') return json(200, { keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] });
        if (url.pathname === '/authorize') {
          const code = crypto.randomBytes(16).toString('hex');
          codes.set(code, { nonce: url.searchParams.get('nonce') ?? undefined, challenge: url.searchParams.get('code_challenge') ?? undefined });
          const back = new URL(url.searchParams.get('redirect_uri')!);
          back.search = new URLSearchParams({ code, state: url.searchParams.get('state')! }).toString();
          return response.writeHead(302, { location: back.href }).end();
        }
        if (url.pathname === '/token') {
          if (wrong.slowMs) await new Promise((resolve) => setTimeout(resolve, wrong.slowMs).unref());
          const form = new URLSearchParams(body);
          const grant = codes.get(form.get('code') ?? '');
          const [id, secret] = Buffer.from((request.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':').map(decodeURIComponent);
          if (id !== 'rp' && form.get('client_id') !== 'rp') return json(401, { error: 'invalid_client' });
          // RFC 6749 §5.2: a client that authenticated with Basic is refused with a Basic challenge.
          if (id === 'rp' && secret !== 'rp-secret') {
            return response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="shady"' }).end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }));
          }
          if (!grant) return json(400, { error: 'invalid_grant', error_description: 'unknown code' });
          codes.delete(form.get('code')!);
          if (grant.challenge !== undefined && crypto.createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== grant.challenge) {
            return json(400, { error: 'invalid_grant', error_description: 'PKCE' });
          }
          const now = Math.floor(Date.now() / 1000);
          const idToken = await new SignJWT({
            nonce: wrong.nonce ?? grant.nonce,
            ...(wrong.azp ? { azp: wrong.azp } : {}),
            ...(wrong.amr ? { amr: wrong.amr } : {}),
          })
            .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
            .setIssuer(wrong.iss ?? base)
            .setSubject('user-1')
            .setAudience(wrong.aud ?? 'rp')
            .setIssuedAt(now + Math.min(0, wrong.expiresIn ?? 0) - 60)
            .setExpirationTime(now + (wrong.expiresIn ?? 300))
            .sign(wrong.signWith ?? key.privateKey);
          return json(200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 300, id_token: idToken });
        }
        if (url.pathname === '/userinfo' || url.pathname === '/user') {
          if (request.headers.authorization !== 'Bearer at-1') return json(401, { error: 'invalid_token' });
          if (wrong.hugeUserinfo) return json(200, { sub: 'user-1', padding: 'x'.repeat(1024 * 1024 + 10) });
          return json(200, wrong.userinfo ?? { sub: wrong.userinfoSub ?? 'user-1', email: 'u@example.org', email_verified: true });
        }
        json(404, { error: 'not_found' });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    base,
    clientId: 'rp',
    clientSecret: 'rp-secret',
    otherKey: otherKey.privateKey,
    misbehave(next) {
      wrong = next;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
