/**
 * The token endpoint's machine grants (docs/endpoints.md#token-endpoint): client_credentials and
 * the JWT profile grant, with openid-client as the relying party, and every error row of the token
 * endpoint's table in docs/errors.md.
 */
import * as client from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { signAssertion } from '../support/assertions.ts';
import { fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request } from '../support/http.ts';

let server: TestServer;
let fx: Fixture;
let token: string;

async function discover(clientId: string, auth: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(server.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

async function jwks() {
  const reply = await request(`${server.url}/oauth/v2/keys`);
  return createLocalJWKSet(reply.json as unknown as Parameters<typeof createLocalJWKSet>[0]);
}

beforeAll(async () => {
  fx = fixture();
  server = await startTestServer(fx.document);
  token = `${server.url}/oauth/v2/token`;
});
afterAll(() => server.stop());

describe('grant_type=client_credentials', () => {
  it('issues an RS256 JWT access token to a machine user over client_secret_basic', async () => {
    const config = await discover('reporter', client.ClientSecretBasic(SECRETS.reporter));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'openid profile' });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(43200);
    expect(tokens.scope).toBe('openid profile');
    expect(tokens.refresh_token).toBeUndefined();
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const { payload } = await jwtVerify(tokens.access_token, await jwks(), { issuer: server.url });
    expect(payload).toMatchObject({ sub: IDS.reporter, client_id: 'reporter', aud: ['reporter'], scope: 'openid profile' });
  });

  it('issues an opaque token over client_secret_post', async () => {
    const config = await discover('opaque-bot', client.ClientSecretPost(SECRETS.opaqueBot));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'openid' });
    expect(tokens.access_token).not.toContain('.');
    expect(tokens.access_token.length).toBeGreaterThanOrEqual(43);
  });

  it('adds project and API audiences named by scope, and drops offline_access', async () => {
    const scope = `openid urn:gatehouse:iam:org:project:id:${IDS.project}:aud urn:gatehouse:iam:org:project:id:gatehouse:aud offline_access`;
    const reply = await postForm(token, { grant_type: 'client_credentials', scope }, { authorization: basic('reporter', SECRETS.reporter) });
    expect(reply.status).toBe(200);
    expect(reply.json['refresh_token']).toBeUndefined();
    const { payload } = await jwtVerify(String(reply.json['access_token']), await jwks());
    expect(payload.aud).toEqual(['reporter', IDS.project, server.url]);
    expect(reply.headers.get('cache-control')).toBe('no-store');
  });
});

describe('grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer', () => {
  const grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

  it('exchanges a key-file assertion for an access token and an ID token', async () => {
    const config = await discover(IDS.reporter, client.None());
    const assertion = await signAssertion({ issuer: IDS.reporter, audience: server.url, key: fx.reporterKey.privateKey, kid: fx.reporterKey.id });
    const tokens = await client.genericGrantRequest(config, grant, { assertion, scope: 'openid profile' });
    expect(tokens.scope).toBe('openid profile');
    const { payload } = await jwtVerify(tokens.id_token!, await jwks(), { issuer: server.url, audience: IDS.reporter });
    expect(payload.sub).toBe(IDS.reporter);
    expect(payload['at_hash']).toEqual(expect.any(String));
    expect(payload['given_name']).toBeUndefined();
  });

  it.each([
    ['a wrong audience', { audience: 'https://elsewhere.test' }],
    ['an expired assertion', { iat: Math.floor(Date.now() / 1000) - 3600, expiresIn: 60 }],
    ['an unknown key id', { kid: '999' }],
  ])('refuses %s with invalid_grant', async (_name, change) => {
    const assertion = await signAssertion({
      issuer: IDS.reporter,
      audience: server.url,
      key: fx.reporterKey.privateKey,
      kid: fx.reporterKey.id,
      ...change,
    });
    const reply = await postForm(token, { grant_type: grant, assertion, scope: 'openid' });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'invalid_grant', error_description: 'grant request is invalid' });
  });

  it('refuses an assertion signed by another key', async () => {
    const assertion = await signAssertion({ issuer: IDS.reporter, audience: server.url, key: fx.backendKey.privateKey, kid: fx.reporterKey.id });
    const reply = await postForm(token, { grant_type: grant, assertion, scope: 'openid' });
    expect(reply.json['error']).toBe('invalid_grant');
  });

  it('refuses a malformed assertion with invalid_request', async () => {
    const reply = await postForm(token, { grant_type: grant, assertion: 'not-a-jwt', scope: 'openid' });
    expect(reply.status).toBe(400);
    expect(reply.json['error']).toBe('invalid_request');
  });
});

describe('token endpoint errors', () => {
  const auth = () => ({ authorization: basic('reporter', SECRETS.reporter) });

  it.each([
    ['grant_type is missing', { scope: 'openid' }, 'invalid_request', 'grant_type is required'],
    ['scope is missing', { grant_type: 'client_credentials' }, 'invalid_request', 'scope is required'],
    ['an unknown grant type', { grant_type: 'password', scope: 'openid' }, 'unsupported_grant_type', 'grant_type password is not supported'],
    ['an unknown scope', { grant_type: 'client_credentials', scope: 'openid admin' }, 'invalid_scope', 'scope admin is not supported'],
    [
      'an unknown project audience',
      { grant_type: 'client_credentials', scope: 'openid urn:gatehouse:iam:org:project:id:42:aud' },
      'invalid_scope',
      "scope urn:gatehouse:iam:org:project:id:42:aud names no project of the client's organization", // docs/security.md 10.6: no oracle
    ],
  ])('%s → %s', async (_name, body, error, description) => {
    const reply = await postForm(token, body, auth());
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error, error_description: description });
  });

  it('a repeated parameter is invalid_request', async () => {
    const reply = await postForm(token, 'grant_type=client_credentials&scope=openid&scope=profile', auth());
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'scope is repeated' });
  });

  it('several client authentication methods are invalid_request', async () => {
    const reply = await postForm(
      token,
      { grant_type: 'client_credentials', scope: 'openid', client_id: 'reporter', client_secret: SECRETS.reporter },
      auth(),
    );
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'several client authentication methods were used' });
  });

  it('a wrong secret over Basic is 401 invalid_client with a Basic challenge', async () => {
    const reply = await postForm(token, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('reporter', 'wrong') });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="gatehouse"/);
  });

  it.each([
    ['an unknown client', { client_id: 'nobody', client_secret: 'x' }],
    ['no client authentication', {}],
    ['a client_credentials request authenticated with none', { client_id: 'reporter' }],
  ])('%s is 401 invalid_client', async (_name, credentials) => {
    const reply = await postForm(token, { grant_type: 'client_credentials', scope: 'openid', ...credentials });
    expect(reply.status).toBe(401);
    expect(reply.json['error']).toBe('invalid_client');
    expect(reply.headers.get('www-authenticate')).toBeNull();
  });

  it('an application may not use client_credentials: unauthorized_client', async () => {
    const reply = await postForm(token, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('shop-web', SECRETS.web) });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: 'unauthorized_client', error_description: 'grant_type client_credentials is not allowed for this client' });
  });

  it('a client registered for client_secret_post may not use Basic', async () => {
    const reply = await postForm(token, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('shop-post', SECRETS.post) });
    expect(reply.status).toBe(401);
    expect(reply.json['error']).toBe('invalid_client');
  });

  it.each([
    ['a JSON body', { 'content-type': 'application/json' }, '{"grant_type":"client_credentials"}', 400, 'content type must be application/x-www-form-urlencoded'],
    ['a text body', { 'content-type': 'text/plain' }, 'grant_type=client_credentials', 400, 'content type must be application/x-www-form-urlencoded'],
    ['invalid UTF-8', {}, Buffer.from([0x67, 0x3d, 0xff, 0xfe]), 400, 'request body is not valid UTF-8'],
    ['an oversized body', {}, `grant_type=client_credentials&scope=${'a'.repeat(70 * 1024)}`, 413, 'request body is too large'],
  ])('%s is a clear 4xx', async (_name, headers, body, status, description) => {
    const response = await fetch(token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers, ...auth() },
      body,
    });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: description });
  });

  it('a malformed Basic header is invalid_request', async () => {
    const reply = await postForm(token, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: 'Basic ###' });
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'authorization header is malformed' });
  });

  it('GET is 405 with Allow: POST', async () => {
    const reply = await request(token);
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('POST');
  });
});
