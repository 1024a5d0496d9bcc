/**
 * Signing in at an external provider (src/domain/federation/upstream.ts) against real upstreams on
 * this machine: node-oidc-provider (OpenID Certified) as an OpenID provider and as a plain OAuth 2.0
 * server, a second Gatehouse as an OpenID provider, and a small provider that
 * misbehaves on purpose, one way per test. The upstreams listen on 127.0.0.1, so the tests allow
 * private networks, except the one that shows the rule.
 */
import { finishUpstream, startUpstream, UpstreamRefused, type UpstreamConfig } from '../../src/domain/federation/upstream.ts';
import { mapOidcClaims } from '../../src/domain/federation/claims.ts';
import { IDS, SECRETS } from '../support/fixtures.ts';
import { authorizeAtOidcProvider as authorizeAt, startMisbehavingUpstream, startOidcUpstream, type MisbehavingUpstream, type Misbehaviour, type OidcUpstream } from '../support/upstreams.ts';
import { ALICE, Browser, callbackOf, REDIRECT_URI, signIn, startLoginServer, type LoginServer } from '../login/support.ts';

const REDIRECT = 'http://127.0.0.1:9/idps/callback';
const fetchOptions = { allowPrivateNetworks: true };

/** Drives node-oidc-provider's development login and consent forms until it redirects to REDIRECT. */
async function authorizeAtOidcProvider(authorizationUrl: string, account: string): Promise<URLSearchParams> {
  return (await authorizeAt(authorizationUrl, account, REDIRECT)).searchParams;
}

describe('node-oidc-provider as the upstream', () => {
  let issuer: string;
  let upstream: OidcUpstream;

  beforeAll(async () => {
    upstream = await startOidcUpstream(REDIRECT);
    issuer = upstream.issuer;
  });
  afterAll(() => upstream?.stop());

  const oidc = (overrides: Partial<Extract<UpstreamConfig, { kind: 'oidc' }>> = {}): UpstreamConfig => ({
    kind: 'oidc',
    id: 'idp-1',
    name: 'Upstream',
    issuer,
    clientId: 'gatehouse',
    clientSecret: 'upstream-secret-1',
    scopes: [],
    idTokenMapping: false,
    usePkce: false,
    ...overrides,
  });

  it('signs in with discovery, PKCE and a verified ID token, and maps userinfo', async () => {
    const config = oidc();
    const started = await startUpstream(config, { redirectUri: REDIRECT, loginHint: 'ada', fetchOptions });
    const sent = new URL(started.authorizationUrl);
    expect(sent.origin + sent.pathname).toBe(`${issuer}/auth`);
    expect(Object.fromEntries(sent.searchParams)).toEqual({
      client_id: 'gatehouse',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid profile email phone',
      state: started.state,
      nonce: started.nonce,
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: 'S256',
      login_hint: 'ada',
    });
    expect(started.state).toMatch(/^[\w-]{43}$/);
    expect(started.nonce).toMatch(/^[\w-]{43}$/);
    expect(started.codeVerifier).toMatch(/^[\w-]{43}$/);

    const callback = await authorizeAtOidcProvider(started.authorizationUrl, 'ada');
    expect(callback.get('iss')).toBe(issuer);
    const finished = await finishUpstream(config, {
      code: callback.get('code')!,
      state: callback.get('state')!,
      iss: callback.get('iss') ?? undefined,
      redirectUri: REDIRECT,
      expectedState: started.state,
      nonce: started.nonce!,
      codeVerifier: started.codeVerifier!,
      fetchOptions,
    });
    expect(finished.subject).toBe('ada');
    expect(finished.profile).toEqual({
      userName: 'ada.l',
      givenName: 'Ada',
      familyName: 'Lovelace',
      displayName: 'Ada Lovelace',
      nickName: 'Countess',
      email: 'ada@example.org',
      emailVerified: true,
      phone: '+41 79 000 00 00',
      phoneVerified: false,
      locale: 'en-GB',
    });
    expect(finished.raw).toMatchObject({ sub: 'ada', email: 'ada@example.org' });
    expect(finished.raw).not.toHaveProperty('nonce'); // userinfo, not the ID token
    expect(finished.tokens.accessToken).toEqual(expect.any(String));
    expect(finished.tokens.idToken!.split('.')).toHaveLength(3);
    expect(finished.amr).toEqual(['fed']);
  });

  it('maps the ID token instead of userinfo when told to, and appends openid to configured scopes', async () => {
    const config = oidc({ idTokenMapping: true, scopes: ['email'] });
    const started = await startUpstream(config, { redirectUri: REDIRECT, fetchOptions });
    expect(new URL(started.authorizationUrl).searchParams.get('scope')).toBe('email openid');
    const callback = await authorizeAtOidcProvider(started.authorizationUrl, 'ada');
    const finished = await finishUpstream(config, {
      code: callback.get('code')!,
      state: callback.get('state')!,
      iss: callback.get('iss') ?? undefined,
      redirectUri: REDIRECT,
      expectedState: started.state,
      nonce: started.nonce!,
      codeVerifier: started.codeVerifier!,
      fetchOptions,
    });
    expect(finished.subject).toBe('ada');
    // node-oidc-provider puts the scope's claims into the ID token only when no access token could fetch them; the ID token's own claims are what is mapped
    expect(finished.raw).toMatchObject({ sub: 'ada', iss: issuer, aud: 'gatehouse', nonce: started.nonce });
    expect(finished.profile).toEqual(mapOidcClaims(finished.raw));
  });

  it('refuses a callback without the iss the provider announces (RFC 9207) or with another one', async () => {
    const config = oidc();
    const started = await startUpstream(config, { redirectUri: REDIRECT, fetchOptions });
    const callback = await authorizeAtOidcProvider(started.authorizationUrl, 'ada');
    const input = { code: callback.get('code')!, state: callback.get('state')!, redirectUri: REDIRECT, expectedState: started.state, nonce: started.nonce!, codeVerifier: started.codeVerifier!, fetchOptions };
    await expect(finishUpstream(config, { ...input, iss: undefined })).rejects.toThrow('the answer is not from this provider (iss)');
    await expect(finishUpstream(config, { ...input, iss: 'https://elsewhere.example' })).rejects.toThrow('the answer is not from this provider (iss)');
  });

  it('signs in as a plain OAuth 2.0 client, the user id from a numeric attribute, no profile', async () => {
    const config: UpstreamConfig = {
      kind: 'oauth',
      id: 'idp-2',
      name: 'Plain OAuth',
      clientId: 'gatehouse-oauth',
      clientSecret: 'upstream-secret-2',
      authorizationEndpoint: `${issuer}/auth`,
      tokenEndpoint: `${issuer}/token`,
      userEndpoint: `${issuer}/me`,
      scopes: ['openid', 'email'],
      idAttribute: 'id',
      usePkce: true,
    };
    const started = await startUpstream(config, { redirectUri: REDIRECT, fetchOptions });
    expect(started.nonce).toBeUndefined();
    expect(new URL(started.authorizationUrl).searchParams.get('code_challenge_method')).toBe('S256');
    const callback = await authorizeAtOidcProvider(started.authorizationUrl, 'ada');
    const finished = await finishUpstream(config, {
      code: callback.get('code')!,
      state: callback.get('state')!,
      iss: callback.get('iss') ?? undefined,
      redirectUri: REDIRECT,
      expectedState: started.state,
      codeVerifier: started.codeVerifier!,
      fetchOptions,
    });
    expect(finished.subject).toBe('4711');
    // generic OAuth vouches for nothing: not even the verified address the user endpoint sends
    expect(finished.profile).toEqual({ emailVerified: false, phoneVerified: false });
    expect(finished.raw).toMatchObject({ id: 4711, email: 'ada@example.org', email_verified: true });
    expect(finished.tokens).toEqual({ accessToken: expect.any(String) }); // the ID token it sent along is dropped unread
    expect(finished.amr).toEqual(['fed']);
  });

  it('refuses the provider on 127.0.0.1 without the private-network switch', async () => {
    const strict = { allowPrivateNetworks: false };
    await expect(startUpstream(oidc(), { redirectUri: REDIRECT, fetchOptions: strict })).rejects.toMatchObject({
      reason: 'the provider is at an address Gatehouse may not reach',
      detail: expect.stringContaining('must be an https URL'),
    });
    await expect(startUpstream(oidc({ issuer: issuer.replace('http:', 'https:') }), { redirectUri: REDIRECT, fetchOptions: strict })).rejects.toMatchObject({
      reason: 'the provider is at an address Gatehouse may not reach',
      detail: 'resolves to a loopback address (127.0.0.1)',
    });
  });
});

describe('a second Gatehouse as the upstream', () => {
  let upstream: LoginServer;
  beforeAll(async () => {
    upstream = await startLoginServer();
  });
  afterAll(() => upstream?.stop());

  it('signs in through its login pages and maps its userinfo', async () => {
    const config: UpstreamConfig = {
      kind: 'oidc',
      id: 'idp-3',
      name: 'Other Gatehouse',
      issuer: upstream.server.config.externalUrl,
      clientId: 'shop-web',
      clientSecret: SECRETS.web,
      scopes: ['openid', 'profile', 'email'],
      idTokenMapping: false,
      usePkce: true,
    };
    const started = await startUpstream(config, { redirectUri: REDIRECT_URI, fetchOptions });
    const browser = new Browser(upstream.base);
    const authorize = new URL(started.authorizationUrl);
    const toLogin = await browser.get(`${authorize.pathname}${authorize.search}`);
    const requestId = /authRequestID=(\d+)/.exec(toLogin.location ?? '')?.[1];
    expect(requestId).toBeDefined();
    const signedIn = await signIn(browser, requestId!, ALICE.loginName, ALICE.password);
    expect(signedIn.status).toBe(303);
    const done = await browser.get(signedIn.location ?? callbackOf(requestId!));
    const callback = new URL(done.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);

    const finished = await finishUpstream(config, {
      code: callback.searchParams.get('code')!,
      state: callback.searchParams.get('state')!,
      iss: callback.searchParams.get('iss') ?? undefined,
      redirectUri: REDIRECT_URI,
      expectedState: started.state,
      nonce: started.nonce!,
      codeVerifier: started.codeVerifier!,
      fetchOptions,
    });
    expect(finished.subject).toBe(IDS.alice);
    expect(finished.profile).toEqual({
      userName: ALICE.loginName,
      givenName: 'Alice',
      familyName: 'Example',
      displayName: 'Alice Example',
      email: 'alice@acme.test',
      emailVerified: true,
      phoneVerified: false,
    });
    expect(finished.amr).toEqual(['fed']);
  });
});

describe('a provider that misbehaves', () => {
  let shady: MisbehavingUpstream;
  let base: string;
  let otherKey: MisbehavingUpstream['otherKey'];
  let wrong: Misbehaviour = {};

  beforeAll(async () => {
    shady = await startMisbehavingUpstream();
    base = shady.base;
    otherKey = shady.otherKey;
  });
  afterAll(() => shady?.stop());
  beforeEach(() => {
    wrong = {};
    shady.misbehave(wrong);
  });
  const config = (): UpstreamConfig => ({ kind: 'oidc', id: 'idp-x', name: 'Shady', issuer: base, clientId: 'rp', clientSecret: 'rp-secret', scopes: [], idTokenMapping: false, usePkce: false });

  /** Starts a sign-in, follows the provider's instant redirect back, and finishes it. */
  async function roundTrip(upstream: UpstreamConfig = config(), options: { timeoutMs?: number; state?: string } = {}) {
    shady.misbehave(wrong);
    const started = await startUpstream(upstream, { redirectUri: REDIRECT, fetchOptions });
    const back = await fetch(started.authorizationUrl, { redirect: 'manual' });
    const callback = new URL(back.headers.get('location')!).searchParams;
    return finishUpstream(upstream, {
      code: callback.get('code')!,
      state: options.state ?? callback.get('state')!,
      iss: undefined,
      redirectUri: REDIRECT,
      expectedState: started.state,
      ...(started.nonce ? { nonce: started.nonce } : {}),
      ...(started.codeVerifier ? { codeVerifier: started.codeVerifier } : {}),
      fetchOptions: { ...fetchOptions, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) },
    });
  }

  async function refusal(promise: Promise<unknown>): Promise<UpstreamRefused> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamRefused);
    return error as UpstreamRefused;
  }

  it('is accepted when it behaves, and an mfa in its amr carries over', async () => {
    wrong = { amr: ['pwd', 'otp', 'mfa'] };
    const finished = await roundTrip();
    expect(finished.subject).toBe('user-1');
    expect(finished.profile).toEqual({ email: 'u@example.org', emailVerified: true, phoneVerified: false });
    expect(finished.amr).toEqual(['fed', 'mfa']);
  });

  it('is refused when it signs with another key', async () => {
    wrong = { signWith: otherKey };
    expect((await refusal(roundTrip())).reason).toBe("the ID token's signature does not verify with the provider's keys");
  });

  it('is refused when it echoes a wrong nonce', async () => {
    wrong = { nonce: 'not-the-nonce' };
    expect((await refusal(roundTrip())).reason).toBe('wrong nonce');
  });

  it('is refused when its ID token claims another issuer', async () => {
    wrong = { iss: 'https://accounts.example.com' };
    expect((await refusal(roundTrip())).reason).toBe('the ID token is not from this provider');
  });

  it('is refused when its ID token is for another client, or for several without naming us as azp', async () => {
    wrong = { aud: 'someone-else' };
    expect((await refusal(roundTrip())).reason).toBe('the ID token is for another client');
    wrong = { aud: ['rp', 'someone-else'] };
    expect((await refusal(roundTrip())).reason).toBe('the ID token is for another client');
    wrong = { aud: ['rp', 'someone-else'], azp: 'someone-else' };
    expect((await refusal(roundTrip())).reason).toBe('the ID token is for another client');
    wrong = { aud: ['rp', 'someone-else'], azp: 'rp' };
    expect((await roundTrip()).subject).toBe('user-1');
  });

  it('is refused when its ID token has expired', async () => {
    wrong = { expiresIn: -120 };
    expect((await refusal(roundTrip())).reason).toBe('the ID token has expired or is not valid yet');
  });

  it('is refused when the callback carries another state, before the code is spent', async () => {
    const error = await refusal(roundTrip(config(), { state: 'forged-state' }));
    expect(error.reason).toBe('the answer does not belong to this sign-in (wrong state)');
  });

  it('is given up on when it answers too slowly', async () => {
    wrong = { slowMs: 1500 };
    const error = await refusal(roundTrip(config(), { timeoutMs: 300 }));
    expect(error.reason).toBe('the provider did not answer in time');
    expect(error.detail).toMatch(/did not answer within 0.3 s/);
  });

  it('is given up on when its answer is larger than 1 MiB', async () => {
    wrong = { hugeUserinfo: true };
    const error = await refusal(roundTrip());
    expect(error.reason).toBe('the provider answered with too much data');
  });

  it('is refused when its userinfo is about another user than its ID token', async () => {
    wrong = { userinfoSub: 'user-2' };
    expect((await refusal(roundTrip())).reason).toBe("the provider's user information is about another user");
  });

  it('answers a refused code with the provider error, and never puts a token into a message', async () => {
    const started = await startUpstream(config(), { redirectUri: REDIRECT, fetchOptions });
    const error = await refusal(
      finishUpstream(config(), { code: 'made-up', state: started.state, iss: undefined, redirectUri: REDIRECT, expectedState: started.state, nonce: started.nonce!, codeVerifier: started.codeVerifier!, fetchOptions }),
    );
    expect(error.reason).toBe('the provider answered invalid_grant');
    expect(error.detail).toBe('invalid_grant: unknown code');
  });

  it('names invalid_client when it refuses the client secret with an HTTP Basic challenge', async () => {
    const error = await refusal(roundTrip({ ...config(), clientSecret: 'not-the-secret' }));
    expect(error.reason).toBe('the provider answered invalid_client');
    expect(error.detail).toBe('invalid_client: client authentication failed');
    expect(`${error.reason} ${error.detail}`).not.toContain('not-the-secret');
  });

  describe('as a plain OAuth 2.0 server', () => {
    const oauthConfig = (idAttribute: string): UpstreamConfig => ({
      kind: 'oauth',
      id: 'idp-y',
      name: 'Shady OAuth',
      clientId: 'rp',
      clientSecret: 'rp-secret',
      authorizationEndpoint: `${base}/authorize`,
      tokenEndpoint: `${base}/token`,
      userEndpoint: `${base}/user`,
      scopes: ['read:user'],
      idAttribute,
      usePkce: false,
    });

    it('takes a string or a number as the user id and nothing else from it', async () => {
      wrong = { userinfo: { login: 'octo', uid: 'abc-1', score: 1.5, email: 'o@example.org', email_verified: true } };
      expect((await roundTrip(oauthConfig('uid'))).subject).toBe('abc-1');
      const finished = await roundTrip(oauthConfig('score'));
      expect(finished.subject).toBe('1.5');
      expect(finished.profile).toEqual({ emailVerified: false, phoneVerified: false });
    });

    it('is refused when its user endpoint lacks the id attribute', async () => {
      wrong = { userinfo: { login: 'octo', email: 'o@example.org' } };
      const error = await refusal(roundTrip(oauthConfig('id')));
      expect(error.reason).toBe("the provider's user information has no user id");
      expect(error.detail).toBe('the user endpoint\'s answer has no attribute "id"');
      wrong = { userinfo: { id: { nested: true } } };
      expect((await refusal(roundTrip(oauthConfig('id')))).detail).toBe('the user endpoint\'s answer has an unusable attribute "id"');
    });
  });
});
