/**
 * The user grants at the token endpoint (docs/endpoints.md#token-endpoint): authorization_code with
 * every client authentication method and PKCE, and refresh_token with rotation and reuse detection.
 * openid-client is the relying party; its strict ID-token validation must pass. The sign-in before
 * the code (the authorization request, the session, the code) is made directly through the domain
 * functions.
 */
import * as client from 'openid-client';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { sha256 } from '../../src/domain/kernel/crypto.ts';
import { endBrowserSessions } from '../../src/domain/sign-in/sessions.ts';
import { cryptoKey, fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { signedInCode, type IssuedCode } from '../support/sign-in.ts';
import { basic, postForm } from '../support/http.ts';

const WEB_CALLBACK = 'http://localhost:3000/callback';
const SPA_CALLBACK = 'http://localhost:3000/spa-callback';
const POST_CALLBACK = 'http://localhost:3000/post-callback';
const BACKEND_CALLBACK = 'http://localhost:4000/cb';
const ASSERT_CALLBACK = 'http://localhost:3000/assert-callback';

let server: TestServer;
let fx: Fixture;
let tokenUrl: string;

beforeAll(async () => {
  fx = fixture();
  const document = structuredClone(fx.document) as { orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> };
  // An application that wants the user claims in its ID tokens even with an access token (docs/endpoints.md#authorization-endpoint).
  document.orgs[0]!.projects![0]!.apps.push({
    name: 'assert',
    clientId: 'shop-assert',
    clientSecret: 'shop-assert-secret',
    authMethod: 'client_secret_basic',
    redirectUris: [ASSERT_CALLBACK],
    responseTypes: ['code'],
    grantTypes: ['authorization_code'],
    accessTokenType: 'jwt',
    idTokenUserinfoAssertion: true,
  });
  server = await startTestServer(document);
  tokenUrl = `${server.url}/oauth/v2/token`;
});
afterAll(() => server.stop());

interface SignInOptions {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  pkce?: boolean;
  /** Issue the code as of this time (an expired code). */
  codeAt?: Date;
}

type SignedIn = IssuedCode;

/** Alice signs in with her password in a new browser; the request is answered with a code. */
function signIn(options: SignInOptions): Promise<SignedIn> {
  const authTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
  return signedInCode(server, { ...options, userId: IDS.alice, authTime });
}

async function discover(clientId: string, auth: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(server.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

const web = () => discover('shop-web', client.ClientSecretBasic(SECRETS.web));
const spa = () => discover('shop-spa', client.None());

/** The code exchange through openid-client, with every check it offers. */
function exchange(config: client.Configuration, signedIn: SignedIn) {
  return client.authorizationCodeGrant(config, signedIn.callback, {
    expectedState: signedIn.state,
    expectedNonce: signedIn.nonce,
    ...(signedIn.verifier ? { pkceCodeVerifier: signedIn.verifier } : {}),
    idTokenExpected: true,
  });
}

async function jwks() {
  const response = await fetch(`${server.url}/oauth/v2/keys`);
  return createLocalJWKSet((await response.json()) as Parameters<typeof createLocalJWKSet>[0]);
}

async function introspect(token: string): Promise<Record<string, unknown>> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
  return reply.json;
}

const INVALID_GRANT = { error: 'invalid_grant', error_description: 'grant request is invalid' };
/** invalid_grant with the reason the code's own client may hear (oauth/errors.ts GRANT_REFUSALS). */
const refused = (description: string) => ({ error: 'invalid_grant', error_description: description });
const UNKNOWN_CODE = refused('code is unknown, or was issued to another client');

describe('grant_type=authorization_code', () => {
  it('a confidential client (client_secret_basic) gets a JWT access token and a strict ID token', async () => {
    const signedIn = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid', 'profile', 'email'] });
    const tokens = await exchange(await web(), signedIn);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(43200);
    expect(tokens.scope).toBe('openid profile email');
    expect(tokens.refresh_token).toBeUndefined();

    const { payload } = await jwtVerify(tokens.id_token!, await jwks(), { issuer: server.url, audience: 'shop-web' });
    expect(payload).toMatchObject({
      sub: IDS.alice,
      azp: 'shop-web',
      nonce: signedIn.nonce,
      auth_time: signedIn.authTime.getTime() / 1000,
      amr: ['pwd'],
      sid: signedIn.sessionId,
      at_hash: expect.any(String),
    });
    // docs/endpoints.md#authorization-endpoint: with an access token, the user claims stay out of the ID token
    for (const claim of ['name', 'given_name', 'family_name', 'preferred_username', 'email', 'email_verified']) expect(payload[claim]).toBeUndefined();

    const access = await jwtVerify(tokens.access_token, await jwks(), { issuer: server.url, typ: 'at+jwt' });
    expect(access.payload).toMatchObject({ sub: IDS.alice, client_id: 'shop-web', aud: ['shop-web', IDS.project], scope: 'openid profile email' });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: IDS.alice, email: 'alice@acme.test', given_name: 'Alice' });
  });

  it('an application with id_token_userinfo_assertion gets the user claims in the ID token', async () => {
    const signedIn = await signIn({ clientId: 'shop-assert', redirectUri: ASSERT_CALLBACK, scopes: ['openid', 'profile', 'email'] });
    const tokens = await exchange(await discover('shop-assert', client.ClientSecretBasic('shop-assert-secret')), signedIn);
    expect(tokens.claims()).toMatchObject({ given_name: 'Alice', family_name: 'Example', email: 'alice@acme.test', email_verified: true });
  });

  it('a public client (none) with PKCE gets an opaque access token', async () => {
    const signedIn = await signIn({ clientId: 'shop-spa', redirectUri: SPA_CALLBACK, scopes: ['openid'], pkce: true });
    const tokens = await exchange(await spa(), signedIn);
    expect(tokens.access_token).not.toContain('.');
    expect(tokens.claims()).toMatchObject({ sub: IDS.alice, aud: ['shop-spa'], nonce: signedIn.nonce });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, client_id: 'shop-spa', aud: ['shop-spa', IDS.project] });
  });

  it('a confidential client may use PKCE too', async () => {
    const signedIn = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'], pkce: true });
    const tokens = await exchange(await web(), signedIn);
    expect(tokens.claims()?.sub).toBe(IDS.alice);
  });

  it('a private_key_jwt client authenticates with its registered key', async () => {
    const signedIn = await signIn({ clientId: 'shop-backend', redirectUri: BACKEND_CALLBACK, scopes: ['openid', 'email'] });
    const config = await discover('shop-backend', client.PrivateKeyJwt({ key: await cryptoKey(fx.backendKey), kid: fx.backendKey.id }));
    const tokens = await exchange(config, signedIn);
    expect(tokens.claims()).toMatchObject({ sub: IDS.alice, aud: ['shop-backend'] });
  });

  it('a client_secret_post client asking offline_access without the refresh_token grant gets no refresh token', async () => {
    const signedIn = await signIn({ clientId: 'shop-post', redirectUri: POST_CALLBACK, scopes: ['openid', 'offline_access'] });
    const tokens = await exchange(await discover('shop-post', client.ClientSecretPost(SECRETS.post)), signedIn);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('openid');
  });

  it('a reused code is invalid_grant and revokes what the first exchange issued', async () => {
    const signedIn = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid', 'offline_access'] });
    const first = await exchange(await web(), signedIn);
    expect(await introspect(first.access_token)).toMatchObject({ active: true });
    const again = await postForm(tokenUrl, { grant_type: 'authorization_code', code: signedIn.code, redirect_uri: WEB_CALLBACK }, { authorization: basic('shop-web', SECRETS.web) });
    expect(again.status).toBe(400);
    expect(again.json).toEqual(refused('code was already used; the tokens it issued are revoked'));
    expect(await introspect(first.access_token)).toEqual({ active: false });
    const refresh = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, { authorization: basic('shop-web', SECRETS.web) });
    expect(refresh.json).toEqual(INVALID_GRANT);
  });

  describe('refusals', () => {
    const webAuth = () => ({ authorization: basic('shop-web', SECRETS.web) });
    const grant = (code: string, extra: Record<string, string> = {}) => ({ grant_type: 'authorization_code', code, redirect_uri: WEB_CALLBACK, ...extra });

    it('an unknown code is invalid_grant', async () => {
      const reply = await postForm(tokenUrl, grant('no-such-code'), webAuth());
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual(UNKNOWN_CODE);
    });

    it('a missing redirect_uri is invalid_request', async () => {
      const { code } = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'] });
      const reply = await postForm(tokenUrl, { grant_type: 'authorization_code', code }, webAuth());
      expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'redirect_uri is required' });
    });

    it.each([
      ['another redirect_uri', 'http://localhost:3000/other'],
      ['a redirect_uri with a trailing slash', `${WEB_CALLBACK}/`],
    ])('%s is invalid_grant', async (_name, redirectUri) => {
      const { code } = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'] });
      const reply = await postForm(tokenUrl, grant(code, { redirect_uri: redirectUri }), webAuth());
      expect(reply.json).toEqual(refused('redirect_uri does not match the authorization request'));
    });

    it('a code of another client is invalid_grant, worded as an unknown code', async () => {
      const { code } = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'] });
      const reply = await postForm(tokenUrl, { ...grant(code), client_id: 'shop-post', client_secret: SECRETS.post });
      expect(reply.json).toEqual(UNKNOWN_CODE);
    });

    it('an expired code is invalid_grant', async () => {
      const { code } = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'], codeAt: new Date(Date.now() - 11 * 60_000) });
      const reply = await postForm(tokenUrl, grant(code), webAuth());
      expect(reply.json).toEqual(refused('code has expired'));
    });

    it('a code whose session has ended is invalid_grant', async () => {
      const signedIn = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'] });
      await endBrowserSessions(server.running.gh.db, server.running.gh.instanceId, signedIn.browser);
      const reply = await postForm(tokenUrl, grant(signedIn.code), webAuth());
      expect(reply.json).toEqual(refused('the sign-in of the code has ended'));
    });

    const spaGrant = (signedIn: SignedIn, verifier: string | undefined) => ({
      grant_type: 'authorization_code',
      code: signedIn.code,
      redirect_uri: SPA_CALLBACK,
      client_id: 'shop-spa',
      ...(verifier !== undefined ? { code_verifier: verifier } : {}),
    });

    const WRONG_VERIFIER = 'code_verifier does not match the code_challenge';
    const MALFORMED_VERIFIER = 'code_verifier must be 43 to 128 printable ASCII characters';
    it.each([
      ['a wrong code_verifier', () => client.randomPKCECodeVerifier(), WRONG_VERIFIER],
      ['a wrong code_verifier in standard base64', () => Buffer.alloc(32, 0xfb).toString('base64'), WRONG_VERIFIER],
      ['the challenge itself as the verifier (what plain would compare)', () => 'CHALLENGE', WRONG_VERIFIER],
      ['a missing code_verifier', () => undefined, 'code_verifier is required: the authorization request had a code_challenge'],
      ['a code_verifier of 42 characters', () => 'a'.repeat(42), MALFORMED_VERIFIER],
      ['a code_verifier of 129 characters', () => 'a'.repeat(129), MALFORMED_VERIFIER],
      ['a code_verifier with a space', () => `${'a'.repeat(21)} ${'a'.repeat(21)}`, MALFORMED_VERIFIER],
      ['a code_verifier with a character beyond ASCII', () => `${'a'.repeat(42)}é`, MALFORMED_VERIFIER],
    ])('%s is invalid_grant, and the code stays redeemable', async (_name, verifier, description) => {
      const signedIn = await signIn({ clientId: 'shop-spa', redirectUri: SPA_CALLBACK, scopes: ['openid'], pkce: true });
      const challenge = await client.calculatePKCECodeChallenge(signedIn.verifier!);
      const given = verifier();
      const reply = await postForm(tokenUrl, spaGrant(signedIn, given === 'CHALLENGE' ? challenge : given));
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual(refused(description));
      expect((await postForm(tokenUrl, spaGrant(signedIn, signedIn.verifier))).status).toBe(200);
    });

    it('a code_verifier without a code_challenge is invalid_grant', async () => {
      const { code } = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes: ['openid'] });
      const reply = await postForm(tokenUrl, grant(code, { code_verifier: client.randomPKCECodeVerifier() }), webAuth());
      expect(reply.json).toEqual(refused('code_verifier was sent, but the authorization request had no code_challenge'));
    });

    it('a public client without PKCE is invalid_grant', async () => {
      const signedIn = await signIn({ clientId: 'shop-spa', redirectUri: SPA_CALLBACK, scopes: ['openid'] });
      const reply = await postForm(tokenUrl, spaGrant(signedIn, undefined));
      expect(reply.json).toEqual(refused('a public client must use PKCE'));
    });

    it('a client not allowed the grant is unauthorized_client', async () => {
      const reply = await postForm(tokenUrl, grant('x'), { authorization: basic('shop-api', SECRETS.api) });
      expect(reply.json['error']).toBe('unauthorized_client');
    });
  });
});

describe('grant_type=refresh_token', () => {
  async function offline(scopes = ['openid', 'profile', 'offline_access']) {
    const signedIn = await signIn({ clientId: 'shop-web', redirectUri: WEB_CALLBACK, scopes });
    const config = await web();
    return { signedIn, config, tokens: await exchange(config, signedIn) };
  }
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: token, ...extra }, { authorization: basic('shop-web', SECRETS.web) });

  it('offline_access yields an opaque refresh token that rotates on use', async () => {
    const { signedIn, config, tokens } = await offline();
    expect(tokens.scope).toBe('openid profile offline_access');
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(next.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.scope).toBe('openid profile offline_access');
    const claims = decodeJwt(next.id_token!);
    expect(claims).toMatchObject({ sub: IDS.alice, aud: ['shop-web'], azp: 'shop-web', auth_time: signedIn.authTime.getTime() / 1000, sid: signedIn.sessionId });
    expect(claims['nonce']).toBeUndefined(); // OIDC Core §12.2
    expect(await introspect(next.access_token)).toMatchObject({ active: true, sub: IDS.alice });

    const third = await client.refreshTokenGrant(config, next.refresh_token!);
    expect(third.refresh_token).not.toBe(next.refresh_token);
  });

  it('reusing a rotated refresh token revokes the whole family', async () => {
    const { tokens } = await offline();
    const rotated = await refresh(tokens.refresh_token!);
    expect(rotated.status).toBe(200);
    const newRefresh = String(rotated.json['refresh_token']);
    const newAccess = String(rotated.json['access_token']);

    const reused = await refresh(tokens.refresh_token!);
    expect(reused.status).toBe(400);
    expect(reused.json).toEqual(INVALID_GRANT);
    expect((await refresh(newRefresh)).json).toEqual(INVALID_GRANT);
    expect(await introspect(newAccess)).toEqual({ active: false });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it('a narrower scope applies to that access token; the grant keeps its original scope', async () => {
    const { tokens } = await offline();
    const narrow = await refresh(tokens.refresh_token!, { scope: 'openid' });
    expect(narrow.status).toBe(200);
    expect(narrow.json['scope']).toBe('openid');
    expect(await introspect(String(narrow.json['access_token']))).toMatchObject({ active: true, scope: 'openid' });
    const full = await refresh(String(narrow.json['refresh_token']));
    expect(full.json['scope']).toBe('openid profile offline_access');
  });

  it('a wider scope is invalid_scope and leaves the refresh token usable', async () => {
    const { tokens } = await offline();
    const wider = await refresh(tokens.refresh_token!, { scope: 'openid profile email' });
    expect(wider.status).toBe(400);
    expect(wider.json).toEqual({ error: 'invalid_scope', error_description: 'scope email was not granted originally' });
    expect((await refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('without scope openid there is no ID token', async () => {
    const { tokens } = await offline();
    const reply = await refresh(tokens.refresh_token!, { scope: 'profile' });
    expect(reply.status).toBe(200);
    expect(reply.json['id_token']).toBeUndefined();
    expect(reply.json['refresh_token']).toEqual(expect.any(String));
  });

  it('a refresh token of another client is invalid_grant', async () => {
    const { tokens } = await offline();
    const reply = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'shop-spa' });
    expect(reply.json).toEqual(INVALID_GRANT);
    expect((await refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('a public client refreshes with its client_id alone', async () => {
    const signedIn = await signIn({ clientId: 'shop-spa', redirectUri: SPA_CALLBACK, scopes: ['openid', 'offline_access'], pkce: true });
    const config = await spa();
    const tokens = await exchange(config, signedIn);
    const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(next.access_token).not.toContain('.');
    expect(next.claims()?.sub).toBe(IDS.alice);
  });

  it('an expired refresh token is invalid_grant', async () => {
    const { tokens } = await offline();
    await server.running.gh.db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256(tokens.refresh_token!)).execute();
    expect((await refresh(tokens.refresh_token!)).json).toEqual(INVALID_GRANT);
  });

  it('a refresh token whose session has ended is invalid_grant', async () => {
    const { signedIn, tokens } = await offline();
    await endBrowserSessions(server.running.gh.db, server.running.gh.instanceId, signedIn.browser);
    expect((await refresh(tokens.refresh_token!)).json).toEqual(INVALID_GRANT);
  });

  it('an unknown refresh token is invalid_grant, a missing one invalid_request', async () => {
    expect((await refresh('nope')).json).toEqual(INVALID_GRANT);
    const missing = await postForm(tokenUrl, { grant_type: 'refresh_token' }, { authorization: basic('shop-web', SECRETS.web) });
    expect(missing.json).toEqual({ error: 'invalid_request', error_description: 'refresh_token is required' });
  });
});
