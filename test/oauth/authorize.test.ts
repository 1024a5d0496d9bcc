/**
 * /oauth/v2/authorize without a browser (docs/endpoints.md#authorization-endpoint): every error
 * row, the error page for untrusted redirect URIs, response modes, prompt handling and single
 * sign-on from an existing session.
 */
import { recordAuthentication, browserHash, newBrowserId } from '../../src/domain/sign-in/sessions.ts';
import { fixture, IDS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';

let server: TestServer;
const WEB_CALLBACK = 'http://localhost:3000/callback';
const SPA_CALLBACK = 'http://localhost:3000/spa-callback';
const PORTAL_CALLBACK = 'http://localhost:3000/portal-callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

beforeAll(async () => {
  const document = fixture().document as { orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> };
  document.orgs[0]!.projects![0]!.apps.push({
    name: 'portal',
    clientId: 'shop-portal',
    authMethod: 'none',
    redirectUris: [PORTAL_CALLBACK],
    responseTypes: ['id_token token', 'id_token'],
    grantTypes: ['implicit'],
    accessTokenType: 'jwt',
  });
  server = await startTestServer(document);
});
afterAll(() => server.stop());

function authorizeUrl(params: Record<string, string>): string {
  return `${server.url}/oauth/v2/authorize?${new URLSearchParams(params).toString()}`;
}

async function authorize(params: Record<string, string> | string, cookie?: string): Promise<Response> {
  const url = typeof params === 'string' ? `${server.url}/oauth/v2/authorize?${params}` : authorizeUrl(params);
  return fetch(url, { redirect: 'manual', headers: cookie ? { cookie: `gh_browser=${cookie}` } : {} });
}

/** The parameters a redirect carries, from the query or the fragment. */
function answer(response: Response): URLSearchParams {
  const location = new URL(response.headers.get('location')!);
  return location.hash ? new URLSearchParams(location.hash.slice(1)) : location.searchParams;
}

const web = { client_id: 'shop-web', redirect_uri: WEB_CALLBACK, response_type: 'code', scope: 'openid profile', state: 's-1' };

describe('errors shown on the Gatehouse error page (redirect URI not trusted)', () => {
  it.each([
    ['client_id is missing', { redirect_uri: WEB_CALLBACK, response_type: 'code', scope: 'openid' }, 'invalid_request'],
    ['the client is unknown', { ...web, client_id: 'nobody' }, 'invalid_client'],
    ['redirect_uri is missing', { client_id: 'shop-web', response_type: 'code', scope: 'openid' }, 'invalid_request'],
    ['redirect_uri is not registered', { ...web, redirect_uri: 'https://evil.example/cb' }, 'invalid_request'],
    ['redirect_uri differs by a trailing slash', { ...web, redirect_uri: `${WEB_CALLBACK}/` }, 'invalid_request'],
    ['an API application', { ...web, client_id: 'shop-api' }, 'invalid_client'],
  ])('%s', async (_name, params, error) => {
    const response = await authorize(params);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain(error);
  });

  it('a repeated redirect_uri is not trusted', async () => {
    const response = await authorize(`client_id=shop-web&redirect_uri=${encodeURIComponent(WEB_CALLBACK)}&redirect_uri=x&response_type=code&scope=openid`);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });
});

describe('errors redirected to the client', () => {
  it.each([
    ['response_type is missing', { ...web, response_type: '' }, 'invalid_request'],
    ['an unsupported response_type', { ...web, response_type: 'token' }, 'unsupported_response_type'],
    ['a response_type the client may not use', { ...web, response_type: 'id_token', nonce: 'n' }, 'unauthorized_client'],
    ['scope without openid', { ...web, scope: 'profile' }, 'invalid_scope'],
    ['an unknown scope', { ...web, scope: 'openid admin' }, 'invalid_scope'],
    ['a public client without PKCE', { ...web, client_id: 'shop-spa', redirect_uri: SPA_CALLBACK }, 'invalid_request'],
    ['PKCE with plain', { ...web, code_challenge: CHALLENGE, code_challenge_method: 'plain' }, 'invalid_request'],
    ['a malformed code_challenge', { ...web, code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    ['implicit without nonce', { client_id: 'shop-portal', redirect_uri: PORTAL_CALLBACK, response_type: 'id_token', scope: 'openid', state: 's-1' }, 'invalid_request'],
    ['an unknown prompt', { ...web, prompt: 'consent-please' }, 'invalid_request'],
    ['prompt none with another value', { ...web, prompt: 'none login' }, 'invalid_request'],
    ['prompt none with consent', { ...web, prompt: 'none consent' }, 'invalid_request'],
    ['a negative max_age', { ...web, max_age: '-1' }, 'invalid_request'],
    ['a forged id_token_hint', { ...web, id_token_hint: 'eyJhbGciOiJub25lIn0.e30.' }, 'invalid_request'],
    ['a request object', { ...web, request: 'eyJ9.e30.' }, 'request_not_supported'],
    ['prompt none without a session', { ...web, prompt: 'none' }, 'login_required'],
  ])('%s → %s', async (_name, params, error) => {
    const response = await authorize(params);
    expect(response.status).toBe(303);
    const result = answer(response);
    expect(result.get('error')).toBe(error);
    expect(result.get('error_description')).toEqual(expect.any(String));
    expect(result.get('state')).toBe('s-1');
    expect(result.get('iss')).toBe(server.url);
  });

  it('a repeated parameter is invalid_request, redirected', async () => {
    const response = await authorize(`${new URLSearchParams(web).toString()}&scope=openid`);
    expect(answer(response).get('error')).toBe('invalid_request');
    expect(answer(response).get('error_description')).toBe('scope is repeated');
  });

  it('implicit errors travel in the fragment', async () => {
    const response = await authorize({ client_id: 'shop-portal', redirect_uri: PORTAL_CALLBACK, response_type: 'id_token token', scope: 'openid' });
    expect(new URL(response.headers.get('location')!).hash).toContain('error=invalid_request');
  });
});

describe('the login UI and single sign-on', () => {
  it('sends a browser without a session to the login page and sets the browser cookie', async () => {
    const response = await authorize(web);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(new RegExp(`^${server.url}/ui/login/login\\?authRequestID=\\d+$`));
    // docs/security.md 10.7: a value the server issued, `<random>.<mac>`
    expect(response.headers.get('set-cookie')).toMatch(/^gh_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
  });

  it.each([
    ['create', 'register'],
    ['select_account', 'accounts'],
    ['login', 'login'],
  ])('prompt=%s goes to the %s page', async (prompt, page) => {
    const response = await authorize({ ...web, prompt });
    expect(response.headers.get('location')).toContain(`/ui/login/${page}?authRequestID=`);
  });

  async function browserWithSession(ageSeconds = 0, users: string[] = [IDS.alice]): Promise<string> {
    const cookie = newBrowserId(server.running.gh.masterKey);
    for (const userId of users) {
      await recordAuthentication(server.running.gh.db, {
        instanceId: server.running.gh.instanceId,
        browser: browserHash(cookie),
        userId,
        amr: ['pwd'],
        at: new Date(Date.now() - ageSeconds * 1000),
      });
    }
    return cookie;
  }

  it('answers at once from the only session of the browser, in the query', async () => {
    const cookie = await browserWithSession();
    const response = await authorize(web, cookie);
    const result = answer(response);
    expect(response.headers.get('location')!.startsWith(`${WEB_CALLBACK}?`)).toBe(true);
    expect(result.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(result.get('state')).toBe('s-1');
    expect(result.get('iss')).toBe(server.url);
  });

  it('prompt=consent needs no screen: the login page without a session, at once from a session', async () => {
    expect((await authorize({ ...web, prompt: 'consent' })).headers.get('location')).toContain('/ui/login/login?authRequestID=');
    const cookie = await browserWithSession();
    const result = answer(await authorize({ ...web, prompt: 'consent', scope: 'openid offline_access' }, cookie));
    expect(result.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(result.get('error')).toBeNull();
    // with login, consent adds nothing: a fresh sign-in is still asked for
    expect((await authorize({ ...web, prompt: 'login consent' }, cookie)).headers.get('location')).toContain('/ui/login/login?authRequestID=');
  });

  it('prompt=none answers from the session, but login_required once max_age has passed', async () => {
    const cookie = await browserWithSession(120);
    expect(answer(await authorize({ ...web, prompt: 'none' }, cookie)).get('code')).toEqual(expect.any(String));
    expect(answer(await authorize({ ...web, prompt: 'none', max_age: '60' }, cookie)).get('error')).toBe('login_required');
    expect((await authorize({ ...web, max_age: '60' }, cookie)).headers.get('location')).toContain('/ui/login/login?');
  });

  it('sends a browser with two sessions to account selection; prompt=none is interaction_required', async () => {
    const bob = await server.running.gh.db
      .insertInto('users')
      .values({ id: '200000000000000099', instance_id: server.running.gh.instanceId, org_id: IDS.org, kind: 'human', user_name: 'bob', created_at: new Date(), changed_at: new Date(), password_hash: null, email: null, phone: null, given_name: null, family_name: null, nickname: null, display_name: null, preferred_language: null, gender: null, address: null, secret_hash: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const cookie = await browserWithSession(0, [IDS.alice, bob.id]);
    expect((await authorize(web, cookie)).headers.get('location')).toContain('/ui/login/accounts?');
    expect(answer(await authorize({ ...web, prompt: 'none' }, cookie)).get('error')).toBe('interaction_required');
    // login_hint picks one of them
    expect(answer(await authorize({ ...web, prompt: 'none', login_hint: 'alice@acme.test' }, cookie)).get('code')).toEqual(expect.any(String));
  });

  it('form_post answers with an auto-submitting form and a button fallback; invalid response_mode is ignored', async () => {
    const cookie = await browserWithSession();
    const posted = await authorize({ ...web, response_mode: 'form_post' }, cookie);
    expect(posted.status).toBe(200);
    const html = await posted.text();
    expect(html).toContain(`<form method="post" action="${WEB_CALLBACK}">`);
    expect(html).toMatch(/<input type="hidden" name="code" value="[A-Za-z0-9_-]{43}">/);
    expect(html).toContain('<noscript><button type="submit">');
    expect(posted.headers.get('content-security-policy')).toContain("script-src 'sha256-");
    const ignored = await authorize({ ...web, response_mode: 'carrier-pigeon' }, cookie);
    expect(answer(ignored).get('code')).toEqual(expect.any(String));
  });

  it('implicit id_token token answers in the fragment with tokens', async () => {
    const cookie = await browserWithSession();
    const response = await authorize({ client_id: 'shop-portal', redirect_uri: PORTAL_CALLBACK, response_type: 'token id_token', scope: 'openid profile', nonce: 'n-1', state: 's-1' }, cookie);
    const location = new URL(response.headers.get('location')!);
    expect(location.search).toBe('');
    const result = new URLSearchParams(location.hash.slice(1));
    expect(result.get('token_type')).toBe('Bearer');
    expect(result.get('access_token')).toEqual(expect.any(String));
    expect(result.get('id_token')).toEqual(expect.any(String));
    expect(Number(result.get('expires_in'))).toBeGreaterThan(0);
    const claims = JSON.parse(Buffer.from(result.get('id_token')!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ nonce: 'n-1', sub: IDS.alice, aud: ['shop-portal'], amr: ['pwd'] });
    expect(claims['at_hash']).toEqual(expect.any(String));
    expect(claims['given_name']).toBeUndefined(); // docs/endpoints.md#authorization-endpoint: no profile claims beside an access token
  });

  it('POST works like GET', async () => {
    const response = await fetch(`${server.url}/oauth/v2/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(web).toString(),
    });
    expect(response.headers.get('location')).toContain('/ui/login/login?authRequestID=');
  });
});

describe('id_token_hint', () => {
  it('answers only for the hinted subject', async () => {
    const { recordAuthentication: record, browserHash: hash } = await import('../../src/domain/sign-in/sessions.ts');
    const cookie = newBrowserId(server.running.gh.masterKey);
    await record(server.running.gh.db, { instanceId: server.running.gh.instanceId, browser: hash(cookie), userId: IDS.alice, amr: ['pwd'] });
    const implicit = { client_id: 'shop-portal', redirect_uri: PORTAL_CALLBACK, response_type: 'id_token', scope: 'openid', nonce: 'n' };
    const first = new URL((await authorize(implicit, cookie)).headers.get('location')!);
    const idToken = new URLSearchParams(first.hash.slice(1)).get('id_token')!;
    // the hint names alice, whose session this browser has: answered without interaction
    const hinted = answer(await authorize({ ...web, prompt: 'none', id_token_hint: idToken }, cookie));
    expect(hinted.get('code')).toEqual(expect.any(String));
    // another browser without alice's session: login_required
    const elsewhere = newBrowserId(server.running.gh.masterKey);
    expect(answer(await authorize({ ...web, prompt: 'none', id_token_hint: idToken }, elsewhere)).get('error')).toBe('login_required');
  });
});

describe('sessions from before an authenticator app was added', () => {
  it('no longer answer for the user: prompt=none is login_required, otherwise the login page', async () => {
    const { addOtpFactor } = await import('../../src/domain/credentials/otp.ts');
    const { recordAuthentication: record, browserHash: hash } = await import('../../src/domain/sign-in/sessions.ts');
    const gh = server.running.gh;
    const cookie = newBrowserId(server.running.gh.masterKey);
    await record(gh.db, { instanceId: gh.instanceId, browser: hash(cookie), userId: IDS.alice, amr: ['pwd'] });
    expect(answer(await authorize({ ...web, prompt: 'none' }, cookie)).get('code')).toEqual(expect.any(String));

    const added = await addOtpFactor(gh, { id: IDS.alice, orgId: IDS.org, loginName: 'alice@acme.test' });
    expect(added.kind).toBe('added');
    await gh.db.updateTable('otp_factors').set({ state: 'ready' }).where('user_id', '=', IDS.alice).execute();
    try {
      expect(answer(await authorize({ ...web, prompt: 'none' }, cookie)).get('error')).toBe('login_required');
      expect((await authorize(web, cookie)).headers.get('location')).toContain('/ui/login/login?');
      // a session that proved the second factor still answers
      await record(gh.db, { instanceId: gh.instanceId, browser: hash(cookie), userId: IDS.alice, amr: ['pwd', 'otp', 'mfa'] });
      expect(answer(await authorize({ ...web, prompt: 'none' }, cookie)).get('code')).toEqual(expect.any(String));
    } finally {
      await gh.db.deleteFrom('otp_factors').where('user_id', '=', IDS.alice).execute();
    }
  });
});
