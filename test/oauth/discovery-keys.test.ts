/**
 * Discovery (OIDC Discovery 1.0), the key set (docs/endpoints.md#key-set) and signing-key rotation
 * (docs/decisions.md#signing-keys).
 */
import * as client from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { rotateNow } from '../../src/domain/tokens/keys.ts';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request } from '../support/http.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(fixture().document, { GATEHOUSE_KEYS_RATE_LIMIT: '40' });
});
afterAll(() => server.stop());

async function reporterToken(): Promise<string> {
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('reporter', SECRETS.reporter) });
  return String(reply.json['access_token']);
}

async function keySet(): Promise<JSONWebKeySet> {
  return (await request(`${server.url}/oauth/v2/keys`)).json as unknown as JSONWebKeySet;
}

describe('discovery', () => {
  it('openid-client discovers the issuer and every endpoint', async () => {
    const config = await client.discovery(new URL(server.url), 'reporter', SECRETS.reporter, undefined, { execute: [client.allowInsecureRequests] });
    const metadata = config.serverMetadata();
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/v2/authorize`,
      token_endpoint: `${server.url}/oauth/v2/token`,
      introspection_endpoint: `${server.url}/oauth/v2/introspect`,
      revocation_endpoint: `${server.url}/oauth/v2/revoke`,
      jwks_uri: `${server.url}/oauth/v2/keys`,
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
    });
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['client_credentials', 'urn:ietf:params:oauth:grant-type:jwt-bearer']),
    );
  });

  it('has no OAuth authorization-server metadata', async () => {
    expect((await request(`${server.url}/.well-known/oauth-authorization-server`)).status).toBe(404);
  });

  it('answers POST with 405', async () => {
    expect((await request(`${server.url}/.well-known/openid-configuration`, { method: 'POST' })).status).toBe(405);
  });
});

describe('key set', () => {
  it('is cacheable for five minutes and every key has a kid, alg and use', async () => {
    const reply = await request(`${server.url}/oauth/v2/keys`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('max-age=300, must-revalidate');
    const keys = (reply.json as unknown as JSONWebKeySet).keys;
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const key of keys) {
      expect(key).toMatchObject({ kid: expect.any(String), alg: 'RS256', use: 'sig', kty: 'RSA' });
      expect(key['d']).toBeUndefined();
    }
  });

  it('publishes a rotated key before it signs, and old tokens keep verifying', async () => {
    const before = await reporterToken();
    const oldKid = decodeProtectedHeader(before).kid;
    const newKid = await rotateNow(server.running.gh.db, server.running.gh.masterKey, 'RS256');
    // within one change poll the new key is published, but the old one still signs
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await keySet()).keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect(decodeProtectedHeader(await reporterToken()).kid).toBe(oldKid);
    // once the lead time has passed the new key signs
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const after = await reporterToken();
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    const jwks = createLocalJWKSet(await keySet());
    await expect(jwtVerify(before, jwks, { issuer: server.url })).resolves.toBeDefined();
    await expect(jwtVerify(after, jwks, { issuer: server.url })).resolves.toBeDefined();
    const introspected = await postForm(`${server.url}/oauth/v2/introspect`, { token: before }, { authorization: basic('shop-api', SECRETS.api) });
    expect(introspected.status).toBe(200);
  }, 20000);

  it('limits requests per client address with 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) statuses.push((await request(`${server.url}/oauth/v2/keys`)).status);
    expect(statuses).toContain(429);
    const limited = await request(`${server.url}/oauth/v2/keys`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.json['error']).toBe('rate_limited');
  });
});
