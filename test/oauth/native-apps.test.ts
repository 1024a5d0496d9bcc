/**
 * Native applications (RFC 8252): registered through the bootstrap file, REST and gRPC with a
 * private-use scheme and loopback redirect URIs; their loopback URIs match on any port at the
 * authorization endpoint and at end session, while a web application's stay exact; `*` and user
 * information are refused naming the field. A sign-in through the real login UI ends at a listener
 * on a port chosen at run time, as git-credential-oauth's does, and its code is redeemed with that
 * very redirect URI.
 */
import { Code, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AppService } from '@zitadel/proto/zitadel/app/v2beta/app_service_pb.js';
import { OIDCAppType, OIDCAuthMethodType, OIDCGrantType, OIDCResponseType } from '@zitadel/proto/zitadel/app/v2beta/oidc_pb.js';
import { postForm } from '../support/http.ts';
import { base64Verifier, loopbackListener, s256 } from '../support/native-client.ts';
import { apiTokens, failure, managementDocument, MGMT, rest, withToken, type Caller } from '../support/management.ts';
import { Browser, callbackOf, csrfIn, signIn, startLoginServer, type LoginServer } from '../login/support.ts';

const NATIVE = { id: '630000000000000001', clientId: 'git-cli' } as const;
const WEB = { id: '630000000000000002', clientId: 'loopback-web' } as const;
const ALICE = { loginName: 'alice@managed.test', password: 'Correct-Horse-9' } as const;

let ls: LoginServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  const document = managementDocument({
    projects: [
      {
        name: 'tools',
        apps: [
          {
            id: NATIVE.id,
            name: 'git',
            clientId: NATIVE.clientId,
            appType: 'native',
            authMethod: 'none',
            redirectUris: ['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost:8080/cb'],
            postLogoutRedirectUris: ['http://127.0.0.1/signed-out', 'com.example.app:/signed-out'],
            grantTypes: ['authorization_code', 'refresh_token'],
          },
          {
            id: WEB.id,
            name: 'loopback web',
            clientId: WEB.clientId,
            authMethod: 'none',
            redirectUris: ['http://127.0.0.1/cb'],
            postLogoutRedirectUris: ['http://127.0.0.1/signed-out'],
          },
        ],
      },
    ],
  });
  ls = await startLoginServer({}, document);
  tokens = await apiTokens(ls.server);
});
afterAll(() => ls?.stop());

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function codeRequest(clientId: string, redirectUri: string): Record<string, string> {
  return { client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 's-1', code_challenge: CHALLENGE, code_challenge_method: 'S256' };
}

/** The authorization endpoint's first answer to a browser without a session. */
function authorize(params: Record<string, string>): Promise<Response> {
  return fetch(`${ls.server.url}/oauth/v2/authorize?${new URLSearchParams(params).toString()}`, { redirect: 'manual' });
}

/** Accepted: on to the login page. Refused before the redirect URI is trusted: our error page. */
async function expectAccepted(response: Response): Promise<void> {
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toMatch(/\/ui\/login\/login\?authRequestID=\d+$/);
  await response.arrayBuffer();
}

async function expectUntrusted(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  expect(await response.text()).toContain('redirect_uri is not registered for this client');
}

describe('the authorization endpoint and a native application', () => {
  it.each([
    ['a loopback IPv4 URI on a port chosen at run time', 'http://127.0.0.1:54321/cb'],
    ['the same URI without a port', 'http://127.0.0.1/cb'],
    ['a loopback IPv6 URI on another port', 'http://[::1]:61000/cb'],
    ['the private-use scheme URI', 'com.example.app:/cb'],
    ['localhost on its registered port', 'http://localhost:8080/cb'],
  ])('accepts %s', async (_name, redirectUri) => {
    await expectAccepted(await authorize(codeRequest(NATIVE.clientId, redirectUri)));
  });

  it.each([
    ['another path on loopback', 'http://127.0.0.1:54321/other'],
    ['another loopback host', 'http://127.0.0.2:54321/cb'],
    ['a query the registered URI lacks', 'http://127.0.0.1:54321/cb?next=/admin'],
    ['https instead of http', 'https://127.0.0.1:54321/cb'],
    ['localhost on another port (no loopback IP: exact match only)', 'http://localhost:54321/cb'],
    ['a port beyond 65535', 'http://127.0.0.1:65536/cb'],
    ['user information before the loopback host', 'http://127.0.0.1:54321@evil.example/cb'],
    ['another private-use URI', 'com.example.app:/other'],
  ])('refuses %s on the error page', async (_name, redirectUri) => {
    await expectUntrusted(await authorize(codeRequest(NATIVE.clientId, redirectUri)));
  });

  it('a web application with the same loopback URI is matched exactly: another port is refused', async () => {
    await expectAccepted(await authorize(codeRequest(WEB.clientId, 'http://127.0.0.1/cb')));
    await expectUntrusted(await authorize(codeRequest(WEB.clientId, 'http://127.0.0.1:54321/cb')));
  });

  it('errors after the redirect URI is trusted go to the port the request named', async () => {
    const response = await authorize({ ...codeRequest(NATIVE.clientId, 'http://127.0.0.1:54321/cb'), scope: 'profile' });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:54321/cb');
    expect(location.searchParams.get('error')).toBe('invalid_scope');
    expect(location.searchParams.get('state')).toBe('s-1');
  });
});

/** Through the login UI in a new browser: the Location that sends the browser back to the client. */
async function signInThrough(params: Record<string, string>): Promise<{ browser: Browser; location: string }> {
  const browser = new Browser(ls.base);
  const start = await browser.get(`/oauth/v2/authorize?${new URLSearchParams(params).toString()}`);
  expect(start.status).toBe(303);
  const requestId = new URL(start.location!, ls.base).searchParams.get('authRequestID')!;
  expect(await signIn(browser, requestId, ALICE.loginName, ALICE.password)).toMatchObject({ status: 303, location: callbackOf(requestId) });
  const back = await browser.get(callbackOf(requestId));
  expect(back.status).toBe(303);
  return { browser, location: back.headers.get('location')! };
}

describe('a sign-in of a native application on a loopback port chosen at run time', () => {
  it('ends at the listener, and the code is redeemed with that redirect URI and a base64 verifier', async () => {
    const listener = await loopbackListener();
    try {
      const redirectUri = `http://127.0.0.1:${listener.port}/cb`;
      const verifier = base64Verifier();
      expect(verifier).toMatch(/^\+\+\+\+\/\/\/\/[A-Za-z0-9+/]{35}=$/);
      const challenge = s256(verifier);
      const { location } = await signInThrough({ ...codeRequest(NATIVE.clientId, redirectUri), code_challenge: challenge, scope: 'openid offline_access' });
      expect(location.startsWith(`${redirectUri}?`)).toBe(true);
      expect((await fetch(location)).status).toBe(200);
      const query = await listener.query;
      expect(query.get('state')).toBe('s-1');
      const code = query.get('code')!;

      const tokenUrl = `${ls.server.url}/oauth/v2/token`;
      const grant = (extra: Record<string, string>) => ({ grant_type: 'authorization_code', code, client_id: NATIVE.clientId, code_verifier: verifier, ...extra });
      // The registered URI without the port is not the one of the request: RFC 6749 §4.1.3 wants it exactly.
      const portless = await postForm(tokenUrl, grant({ redirect_uri: 'http://127.0.0.1/cb' }));
      expect(portless.json).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
      const redeemed = await postForm(tokenUrl, grant({ redirect_uri: redirectUri }));
      expect(redeemed.status).toBe(200);
      expect(redeemed.json).toMatchObject({ token_type: 'Bearer', scope: 'openid offline_access', refresh_token: expect.any(String), id_token: expect.any(String) });
    } finally {
      await listener.close();
    }
  });

  it('a private-use scheme receives the code in its query; form_post allows the scheme as the form target', async () => {
    const { browser, location } = await signInThrough(codeRequest(NATIVE.clientId, 'com.example.app:/cb'));
    expect(location).toMatch(/^com\.example\.app:\/cb\?code=[A-Za-z0-9_-]{43}&state=s-1&iss=/);
    const posted = await browser.get(`/oauth/v2/authorize?${new URLSearchParams({ ...codeRequest(NATIVE.clientId, 'com.example.app:/cb'), response_mode: 'form_post' }).toString()}`);
    expect(posted.status).toBe(200);
    expect(posted.text).toContain('<form method="post" action="com.example.app:/cb">');
    expect(posted.headers.get('content-security-policy')).toContain('form-action com.example.app:;');
  });
});

describe('end session and a native application', () => {
  const endSession = (params: Record<string, string>) =>
    fetch(`${ls.server.url}/oidc/v1/end_session?${new URLSearchParams(params).toString()}`, { redirect: 'manual' });

  it('a loopback post-logout URI on any port leads, after the confirmation, back to that port', async () => {
    const { browser } = await signInThrough(codeRequest(NATIVE.clientId, 'http://127.0.0.1:50000/cb'));
    const target = 'http://127.0.0.1:40000/signed-out';
    const asked = await browser.get(`/oidc/v1/end_session?${new URLSearchParams({ client_id: NATIVE.clientId, post_logout_redirect_uri: target, state: 'bye' }).toString()}`);
    expect(asked.status).toBe(303);
    expect(asked.location).toMatch(/^\/ui\/login\/logout\?/);
    const page = await browser.get(asked.location!);
    expect(page.status).toBe(200);
    const confirmed = await browser.post('/ui/login/logout', { csrfToken: csrfIn(page.text), client_id: NATIVE.clientId, post_logout_redirect_uri: target, state: 'bye' });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe(`${target}?state=bye`);
  });

  it.each([
    ['a private-use scheme', NATIVE.clientId, 'com.example.app:/signed-out'],
    ['a loopback URI on another port', NATIVE.clientId, 'http://127.0.0.1:41000/signed-out'],
  ])('accepts %s for the native application', async (_name, clientId, target) => {
    const response = await endSession({ client_id: clientId, post_logout_redirect_uri: target });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toContain('/ui/login/logout?');
  });

  it.each([
    ['a web application, another port', WEB.clientId, 'http://127.0.0.1:40000/signed-out'],
    ['the native application, another path', NATIVE.clientId, 'http://127.0.0.1:40000/elsewhere'],
  ])('refuses %s', async (_name, clientId, target) => {
    const response = await endSession({ client_id: clientId, post_logout_redirect_uri: target });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('post_logout_redirect_uri is not registered for the client');
  });
});

describe('registering native applications through the management API', () => {
  const admin = () => tokens.iamAdmin;
  const grpcApps = () => createClient(AppService, createGrpcTransport({ baseUrl: ls.server.url }));

  it('the bootstrap file\'s native application reads back with its type and URIs', async () => {
    const got = await rest(ls.server, 'GET', `/v2beta/applications/${NATIVE.id}`, admin());
    expect(got.status).toBe(200);
    expect(got.json['app']).toMatchObject({
      oidcConfig: { appType: 'OIDC_APP_TYPE_NATIVE', redirectUris: ['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost:8080/cb'] },
    });
  });

  it('REST creates one with a private-use scheme and a loopback URI, and the authorization endpoint takes any port at once', async () => {
    const created = await rest(ls.server, 'POST', '/v2beta/applications', admin(), {
      projectId: MGMT.project,
      name: 'rest native',
      oidcRequest: {
        redirectUris: ['com.example.rest:/cb', 'http://127.0.0.1/cb'],
        appType: 'OIDC_APP_TYPE_NATIVE',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      },
    });
    expect(created.status).toBe(200);
    const { clientId } = created.json['oidcResponse'] as { clientId: string };
    await expectAccepted(await authorize(codeRequest(clientId, 'http://127.0.0.1:54321/cb')));
    await expectAccepted(await authorize(codeRequest(clientId, 'com.example.rest:/cb')));
  });

  it('gRPC creates one; turning it into a web application is refused while it has a private-use scheme', async () => {
    const apps = grpcApps();
    const created = await apps.createApplication(
      {
        projectId: MGMT.project,
        name: 'grpc native',
        creationRequestType: {
          case: 'oidcRequest',
          value: {
            redirectUris: ['http://[::1]/cb', 'com.example.grpc:/cb'],
            postLogoutRedirectUris: ['com.example.grpc:/bye'],
            responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
            grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE],
            appType: OIDCAppType.OIDC_APP_TYPE_NATIVE,
            authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE,
          },
        },
      },
      withToken(admin()),
    );
    const answer = created.creationResponseType;
    if (answer.case !== 'oidcResponse') throw new Error('no OIDC answer');
    await expectAccepted(await authorize(codeRequest(answer.value.clientId, 'http://[::1]:54321/cb')));

    const toWeb = await failure(
      apps.updateApplication({ id: created.appId, updateRequestType: { case: 'oidcConfigurationRequest', value: { appType: OIDCAppType.OIDC_APP_TYPE_WEB } } }, withToken(admin())),
    );
    expect(toWeb.code).toBe(Code.InvalidArgument);
    expect(toWeb.message).toBe('redirectUris[1]: must use https (or http for localhost); a private-use scheme such as com.example.app:/callback needs appType native');
  });

  it.each([
    ['a "*" label', { redirectUris: ['https://*.evil.example/cb'] }, 'redirectUris[0]: must not contain "*": redirect URIs are compared exactly, never as patterns'],
    ['user information', { redirectUris: ['https://user:pw@app.example/cb'] }, 'redirectUris[0]: must not contain user information (user:password@)'],
    ['user information in a post-logout URI', { postLogoutRedirectUris: ['https://user@app.example/bye'] }, 'postLogoutRedirectUris[0]: must not contain user information (user:password@)'],
    ['a private-use scheme on a web application', { redirectUris: ['com.example.app:/cb'], appType: OIDCAppType.OIDC_APP_TYPE_WEB }, 'redirectUris[0]: must use https (or http for localhost); a private-use scheme such as com.example.app:/callback needs appType native'],
  ])('gRPC refuses %s, naming the field', async (_name, settings, message) => {
    const refused = await failure(
      grpcApps().createApplication(
        { projectId: MGMT.project, name: 'refused', creationRequestType: { case: 'oidcRequest', value: { redirectUris: ['https://app.example/cb'], appType: OIDCAppType.OIDC_APP_TYPE_NATIVE, ...settings } } },
        withToken(admin()),
      ),
    );
    expect(refused).toEqual({ code: Code.InvalidArgument, message });
  });

  it.each([
    ['a "*" label', 'https://*.evil.example/cb', 'redirectUris[0]: must not contain "*"'],
    ['user information', 'https://user:pw@app.example/cb', 'redirectUris[0]: must not contain user information'],
    ['javascript: on a native application', 'javascript:alert(1)//', 'redirectUris[0]: must use https, http on a loopback address, or a private-use scheme'],
  ])('REST refuses %s with 400 naming the field', async (_name, uri, message) => {
    const refused = await rest(ls.server, 'POST', '/v2beta/applications', admin(), {
      projectId: MGMT.project,
      name: 'refused rest',
      oidcRequest: { redirectUris: [uri], appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' },
    });
    expect(refused.status).toBe(400);
    expect(String(refused.json['message']).startsWith(message)).toBe(true);
  });
});
