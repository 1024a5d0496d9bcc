/**
 * The instance of the second outside review (its test instance), for the
 * suites that replay its attacks: ACME with its owner alice and the instance owner dave, Beta
 * `100000000000000002` with its owner frank and project `crm` `510000000000000001`, ACME's project
 * `shop` `500000000000000001` with its API application `shop-api`, the confidential clients `web`
 * (ACME, JWT access tokens) and `crm-web` (Beta, opaque), the IAM_OWNER machine `reporter` and ACME's
 * machine `worker`. Token exchange and impersonation are on (the review used a second instance for
 * them; here one instance serves every finding).
 *
 * Tokens come from the real token endpoint: a user's through a browser sign-in made with the domain
 * functions the login UI calls (support/sign-in.ts), a machine's through client_credentials.
 */
import { newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import type { TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE } from '../support/token-exchange.ts';

export const ACME = '100000000000000001';
export const BETA = '100000000000000002';
export const SHOP = '500000000000000001';
export const CRM = '510000000000000001';
export const PASSWORD = 'Correct-Horse-9';
export const CALLBACK = 'http://localhost:3000/callback';
/** The reserved scope that puts the Gatehouse API in a token's audience (docs/security.md 10.5). */
export const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
export const ROLES_SCOPE = 'urn:gatehouse:iam:org:project:roles';

export const ALICE = '200000000000000001';
export const DAVE = '200000000000000004';
export const FRANK = '200000000000000031';
export const GUSTAV = '200000000000000032';
export const REPORTER = { id: '300000000000000001', clientId: 'reporter', secret: 'reporter-secret' } as const;
export const WORKER = { id: '300000000000000002', clientId: 'worker', secret: 'worker-secret' } as const;

export interface Client {
  clientId: string;
  secret: string;
}
export const WEB: Client = { clientId: 'web', secret: 'web-secret' };
export const CRM_WEB: Client = { clientId: 'crm-web', secret: 'crm-web-secret' };
export const SHOP_API: Client = { clientId: 'shop-api', secret: 'shop-api-secret' };

/** A human user of the bootstrap file. */
export function human(id: string, userName: string, domain: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, userName, password: PASSWORD, email: `${userName}@${domain}`, emailVerified: true, givenName: userName, familyName: 'Test', ...extra };
}

/** A confidential web application signing users in with a code, refreshing, and exchanging tokens. */
export function webApp(client: Client, accessTokenType: 'jwt' | 'opaque', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: client.clientId,
    clientId: client.clientId,
    clientSecret: client.secret,
    authMethod: 'client_secret_basic',
    redirectUris: [CALLBACK],
    responseTypes: ['code'],
    grantTypes: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
    accessTokenType,
    ...extra,
  };
}

export interface Extra {
  acmeUsers?: unknown[];
  acmeMachines?: unknown[];
  betaUsers?: unknown[];
  acmeProjects?: unknown[];
  acmeShopApps?: unknown[];
}

/** The review's bootstrap, with a suite's own users, projects and applications added. */
export function reviewDocument(extra: Extra = {}): Record<string, unknown> {
  return {
    features: { oidcTokenExchange: true },
    security: { enableImpersonation: true },
    orgs: [
      {
        id: ACME,
        name: 'ACME',
        domain: 'acme.test',
        users: [
          human(ALICE, 'alice', 'acme.test', { roles: ['ORG_OWNER'] }),
          human(DAVE, 'dave', 'acme.test', { roles: ['IAM_OWNER'] }),
          ...(extra.acmeUsers ?? []),
        ],
        machines: [
          { id: REPORTER.id, userName: REPORTER.clientId, secret: REPORTER.secret, accessTokenType: 'jwt', roles: ['IAM_OWNER'] },
          { id: WORKER.id, userName: WORKER.clientId, secret: WORKER.secret, accessTokenType: 'jwt' },
          ...(extra.acmeMachines ?? []),
        ],
        projects: [
          {
            id: SHOP,
            name: 'shop',
            roleAssertion: true,
            roles: [{ key: 'shop-admin' }],
            apps: [
              webApp(WEB, 'jwt', { accessTokenRoleAssertion: true }),
              { name: 'shop-api', clientId: SHOP_API.clientId, clientSecret: SHOP_API.secret, type: 'api', authMethod: 'client_secret_basic' },
              ...(extra.acmeShopApps ?? []),
            ],
          },
          ...(extra.acmeProjects ?? []),
        ],
      },
      {
        id: BETA,
        name: 'Beta',
        domain: 'beta.test',
        users: [human(FRANK, 'frank', 'beta.test', { roles: ['ORG_OWNER'] }), human(GUSTAV, 'gustav', 'beta.test'), ...(extra.betaUsers ?? [])],
        projects: [{ id: CRM, name: 'crm', roles: [{ key: 'member' }], apps: [webApp(CRM_WEB, 'opaque')] }],
      },
    ],
  };
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string;
  /** The gh_browser cookie value of the browser the user signed in with. */
  browser: string;
  sessionId: string;
}

/** The user signs in at `client` in a browser (a new one unless given); the client redeems the code. */
export async function signIn(server: TestServer, userId: string, client: Client, scopes: string[], browser = newBrowserId(server.running.gh.masterKey)): Promise<SignedIn> {
  const issued = await signedInCode(server, { clientId: client.clientId, redirectUri: CALLBACK, scopes, userId, browserCookie: browser });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK }, {
    authorization: basic(client.clientId, client.secret),
  });
  if (reply.status !== 200) throw new Error(`sign-in of ${userId} at ${client.clientId}: ${reply.status} ${reply.text}`);
  const refreshToken = reply.json['refresh_token'];
  return {
    accessToken: String(reply.json['access_token']),
    refreshToken: typeof refreshToken === 'string' ? refreshToken : undefined,
    idToken: String(reply.json['id_token']),
    browser,
    sessionId: issued.sessionId,
  };
}

/** An API token of a user: signed in at `client` with the API audience. */
export async function userApiToken(server: TestServer, userId: string, client: Client = WEB): Promise<string> {
  return (await signIn(server, userId, client, ['openid', API_SCOPE])).accessToken;
}

/** A machine user's access token from client_credentials. */
export async function machineToken(server: TestServer, machine: { clientId: string; secret: string }, scope = `openid ${API_SCOPE}`): Promise<Reply> {
  return postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(machine.clientId, machine.secret) });
}

export function refresh(server: TestServer, client: Client, refreshToken: string): Promise<Reply> {
  return postForm(`${server.url}/oauth/v2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(client.clientId, client.secret) });
}

export function userinfo(server: TestServer, token: string): Promise<Reply> {
  return request(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
}

/** What a resource server learns at introspection (ACME's `shop-api` unless told). */
export async function introspect(server: TestServer, token: string, caller: Client = SHOP_API): Promise<Record<string, unknown>> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic(caller.clientId, caller.secret) });
  if (reply.status !== 200) throw new Error(`introspection: ${reply.status} ${reply.text}`);
  return reply.json;
}

/** A token exchange by `client` (RFC 8693). */
export function exchange(server: TestServer, client: Client, params: Record<string, string>): Promise<Reply> {
  return postForm(`${server.url}/oauth/v2/token`, { grant_type: TOKEN_EXCHANGE, ...params }, { authorization: basic(client.clientId, client.secret) });
}

/** `prompt=none` from the browser with this cookie: the authorization response's parameters. */
export async function silentSignIn(server: TestServer, client: Client, browser: string): Promise<URLSearchParams> {
  const query = new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', prompt: 'none', state: 'st' });
  const response = await fetch(`${server.url}/oauth/v2/authorize?${query.toString()}`, { redirect: 'manual', headers: { cookie: `gh_browser=${browser}` } });
  await response.text();
  if (response.status !== 303 && response.status !== 302) throw new Error(`authorize: ${response.status}`);
  return new URL(response.headers.get('location')!).searchParams;
}
