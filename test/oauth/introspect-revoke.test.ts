/**
 * Introspection (RFC 7662) and revocation (RFC 7009) with openid-client, across
 * client authentication methods, the audience rule, and revoked tokens.
 */
import { randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { signAssertion } from '../support/assertions.ts';
import { cryptoKey, fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';

let server: TestServer;
let fx: Fixture;
const projectScope = () => `openid profile email urn:gatehouse:iam:org:project:id:${IDS.project}:aud`;

async function discover(clientId: string, auth: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(server.url), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

async function machineToken(user: 'reporter' | 'opaque-bot', scope = projectScope()): Promise<string> {
  const secret = user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot;
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  return String(reply.json['access_token']);
}

beforeAll(async () => {
  fx = fixture();
  server = await startTestServer(fx.document);
});
afterAll(() => server.stop());

describe('introspection', () => {
  it.each(['reporter', 'opaque-bot'] as const)('an API app in the audience sees an active %s token with the user claims', async (user) => {
    const access = await machineToken(user);
    const config = await discover('shop-api', client.ClientSecretBasic(SECRETS.api));
    const result = await client.tokenIntrospection(config, access);
    expect(result).toMatchObject({
      active: true,
      client_id: user,
      token_type: 'Bearer',
      iss: server.url,
      scope: projectScope(),
      username: `${user}@acme.test`,
      sub: user === 'reporter' ? IDS.reporter : IDS.opaqueBot,
      aud: [user, IDS.project],
    });
    for (const claim of ['exp', 'iat', 'nbf', 'jti']) expect(result[claim]).toBeDefined();
  });

  it('an app authenticating with private_key_jwt may introspect', async () => {
    const access = await machineToken('reporter');
    const config = await discover('shop-api-jwt', client.PrivateKeyJwt({ key: await cryptoKey(fx.apiKey), kid: fx.apiKey.id }));
    const result = await client.tokenIntrospection(config, access);
    expect(result.active).toBe(true);
  });

  it('an app outside the audience sees the token inactive', async () => {
    const access = await machineToken('reporter');
    const config = await discover('other-api', client.ClientSecretBasic(SECRETS.otherApi));
    expect(await client.tokenIntrospection(config, access)).toEqual({ active: false });
  });

  it.each([
    ['garbage', 'not-a-token'],
    ['a forged JWT', 'eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0.eyJzdWIiOiJ4In0.'],
  ])('%s is inactive', async (_name, value) => {
    const config = await discover('shop-api', client.ClientSecretBasic(SECRETS.api));
    expect(await client.tokenIntrospection(config, value)).toEqual({ active: false });
  });

  it('a wrong secret is 401 invalid_client', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token: 'x' }, { authorization: basic('shop-api', 'wrong') });
    expect(reply.status).toBe(401);
    expect(reply.json['error']).toBe('invalid_client');
  });

  it('client_secret_post is not accepted at introspection (docs/endpoints.md#introspection-endpoint)', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token: 'x', client_id: 'shop-post', client_secret: SECRETS.post });
    expect(reply.status).toBe(401);
  });

  it('a replayed client assertion is refused', async () => {
    const assertion = await signAssertion({
      issuer: 'shop-api-jwt',
      audience: server.url,
      key: fx.apiKey.privateKey,
      kid: fx.apiKey.id,
      jti: randomUUID(),
    });
    const body = {
      token: 'x',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    };
    expect((await postForm(`${server.url}/oauth/v2/introspect`, body)).status).toBe(200);
    const replay = await postForm(`${server.url}/oauth/v2/introspect`, body);
    expect(replay.status).toBe(401);
    expect(replay.json['error']).toBe('invalid_client');
  });

  it('an assertion without jti is refused', async () => {
    const assertion = await signAssertion({ issuer: 'shop-api-jwt', audience: server.url, key: fx.apiKey.privateKey, kid: fx.apiKey.id, jti: null });
    const reply = await postForm(`${server.url}/oauth/v2/introspect`, {
      token: 'x',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    expect(reply.status).toBe(401);
  });

  it('a wrong client_assertion_type is invalid_request', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token: 'x', client_assertion_type: 'x', client_assertion: 'a.b.c' });
    expect(reply.json).toEqual({
      error: 'invalid_request',
      error_description: 'client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    });
  });

  it('token is required', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/introspect`, {}, { authorization: basic('shop-api', SECRETS.api) });
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'token is required' });
  });
});

describe('revocation', () => {
  it.each(['reporter', 'opaque-bot'] as const)('a revoked %s token introspects inactive', async (user) => {
    const access = await machineToken(user);
    const secret = user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot;
    const owner = await discover(user, client.ClientSecretBasic(secret));
    await client.tokenRevocation(owner, access);
    const api = await discover('shop-api', client.ClientSecretBasic(SECRETS.api));
    expect(await client.tokenIntrospection(api, access)).toEqual({ active: false });
  });

  it('another client cannot revoke a token; the answer is still 200', async () => {
    const access = await machineToken('reporter');
    const reply = await postForm(`${server.url}/oauth/v2/revoke`, { token: access }, { authorization: basic('opaque-bot', SECRETS.opaqueBot) });
    expect(reply.status).toBe(200);
    const api = await discover('shop-api', client.ClientSecretBasic(SECRETS.api));
    expect((await client.tokenIntrospection(api, access)).active).toBe(true);
  });

  it('a public client authenticates with its client_id alone (none)', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/revoke`, { token: 'unknown', client_id: 'shop-spa' });
    expect(reply.status).toBe(200);
  });

  it('an unknown token_type_hint is ignored (RFC 7009 §2.1)', async () => {
    const reply = await postForm(`${server.url}/oauth/v2/revoke`, { token: 'x', token_type_hint: 'id_token', client_id: 'shop-spa' });
    expect(reply.status).toBe(200);
  });

  it('a private_key_jwt client authenticates with an assertion', async () => {
    const config = await discover('shop-backend', client.PrivateKeyJwt({ key: await cryptoKey(fx.backendKey), kid: fx.backendKey.id }));
    await expect(client.tokenRevocation(config, 'unknown')).resolves.toBeUndefined();
  });
});
