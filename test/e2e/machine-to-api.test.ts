/**
 * The machine-to-machine slice end to end: a service account gets a token from the real token
 * endpoint and calls the API on the same port over gRPC (h2c), gRPC-web, Connect (HTTP/1.1 and h2c)
 * and REST; the interceptor verifies real tokens, scopes and roles.
 */
import { createClient, ConnectError, Code, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { Source } from '../../gen/zitadel/feature/v2/feature_pb.js';
import { signAssertion } from '../support/assertions.ts';
import { fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request } from '../support/http.ts';

const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
let server: TestServer;
let fx: Fixture;

async function clientCredentials(user: string, secret: string, scope = API_SCOPE): Promise<string> {
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

function withToken(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

beforeAll(async () => {
  fx = fixture();
  server = await startTestServer(fx.document);
});
afterAll(() => server.stop());

const transports: Array<[string, () => Transport]> = [
  ['gRPC over h2c', () => createGrpcTransport({ baseUrl: server.url })],
  ['gRPC-web over HTTP/1.1', () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: '1.1' })],
  ['Connect JSON over HTTP/1.1', () => createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: false })],
  ['Connect binary over h2c', () => createConnectTransport({ baseUrl: server.url, httpVersion: '2', useBinaryFormat: true })],
];

describe.each(transports)('FeatureService over %s', (_name, transport) => {
  it('sets, reads and resets the token-exchange flag with a JWT token from client_credentials', async () => {
    const token = await clientCredentials('reporter', SECRETS.reporter);
    const features = createClient(FeatureService, transport());
    const set = await features.setInstanceFeatures({ oidcTokenExchange: true }, withToken(token));
    expect(set.details?.sequence).toBeGreaterThan(0n);
    const got = await features.getInstanceFeatures({ inheritance: true }, withToken(token));
    expect(got.oidcTokenExchange).toMatchObject({ enabled: true, source: Source.INSTANCE });
    await features.resetInstanceFeatures({}, withToken(token));
    const reset = await features.getInstanceFeatures({ inheritance: true }, withToken(token));
    expect(reset.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.SYSTEM });
  });

  it('accepts an opaque token', async () => {
    const token = await clientCredentials('opaque-bot', SECRETS.opaqueBot);
    const features = createClient(FeatureService, transport());
    await expect(features.getInstanceFeatures({}, withToken(token))).resolves.toBeDefined();
  });

  it('refuses a missing, forged or revoked token with Unauthenticated', async () => {
    const features = createClient(FeatureService, transport());
    const token = await clientCredentials('reporter', SECRETS.reporter);
    await postForm(`${server.url}/oauth/v2/revoke`, { token }, { authorization: basic('reporter', SECRETS.reporter) });
    for (const options of [{}, withToken('forged'), withToken(`${token.slice(0, -4)}AAAA`), withToken(token)]) {
      const error = await features.getInstanceFeatures({}, options).catch((e: unknown) => e);
      expect(ConnectError.from(error).code).toBe(Code.Unauthenticated);
    }
  });

  it('refuses a token without the API audience scope with PermissionDenied', async () => {
    const token = await clientCredentials('reporter', SECRETS.reporter, 'openid');
    const error = await createClient(FeatureService, transport()).getInstanceFeatures({}, withToken(token)).catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.PermissionDenied);
  });

  it('refuses a machine user without IAM_OWNER with PermissionDenied', async () => {
    const token = await clientCredentials('plain-bot', SECRETS.plainBot);
    const error = await createClient(FeatureService, transport()).setInstanceFeatures({ oidcTokenExchange: true }, withToken(token)).catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.PermissionDenied);
  });
});

describe('FeatureService over REST', () => {
  it('works with a token from the JWT profile grant', async () => {
    const assertion = await signAssertion({ issuer: IDS.reporter, audience: server.url, key: fx.reporterKey.privateKey, kid: fx.reporterKey.id });
    const grant = await postForm(`${server.url}/oauth/v2/token`, {
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
      scope: API_SCOPE,
    });
    const token = String(grant.json['access_token']);
    const put = await request(`${server.url}/v2/features/instance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ oidcTokenExchange: true }),
    });
    expect(put.status).toBe(200);
    expect(put.json['details']).toMatchObject({ sequence: expect.stringMatching(/^\d+$/), changeDate: expect.any(String) });
    const get = await request(`${server.url}/v2/features/instance?inheritance=true`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.json['oidcTokenExchange']).toEqual({ enabled: true, source: 'SOURCE_INSTANCE' });
    const del = await request(`${server.url}/v2/features/instance`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(del.status).toBe(200);
  });

  it('answers 401 with WWW-Authenticate and the generic error body without a token', async () => {
    const reply = await request(`${server.url}/v2/features/instance`);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(reply.json).toMatchObject({ code: 16, message: expect.any(String), details: expect.any(Array) });
  });

  it('answers 403 for a caller without the role', async () => {
    const token = await clientCredentials('plain-bot', SECRETS.plainBot);
    const reply = await request(`${server.url}/v2/features/instance`, { headers: { authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(403);
    expect(reply.json).toMatchObject({ code: 7 });
  });

  it('answers 400 for malformed JSON and 415-or-400 for a wrong content type, never 500', async () => {
    const token = await clientCredentials('reporter', SECRETS.reporter);
    const malformed = await request(`${server.url}/v2/features/instance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"oidcTokenExchange": tru',
    });
    expect(malformed.status).toBe(400);
    const wrongType = await request(`${server.url}/v2/features/instance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
      body: '<oidcTokenExchange>true</oidcTokenExchange>',
    });
    expect([400, 415]).toContain(wrongType.status);
    const wrongField = await request(`${server.url}/v2/features/instance`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"oidcTokenExchange": "yes"}',
    });
    expect(wrongField.status).toBe(400);
  });
});

it('the machine user of a token is its subject', async () => {
  const token = await clientCredentials('reporter', SECRETS.reporter, `openid urn:gatehouse:iam:org:project:id:${IDS.project}:aud`);
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
  expect(reply.json['sub']).toBe(IDS.reporter);
});
