/**
 * Interop: REST and Connect JSON read like ZITADEL's gateway and connect-go (unknown JSON
 * fields dropped, a body without a content type or as text/plain read as JSON), revocation treats
 * token_type_hint as advisory (RFC 7009 §2.1), 401s follow RFC 6750 §3, and oauth4webapi's
 * private_key_jwt works at introspection and revocation with either audience.
 */
import * as oauth from 'oauth4webapi';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { registerServices } from '../../src/api/services.ts';
import { createRecordingRouter } from '../../src/transport/rest/invoke.ts';
import { RestRoutes, type RestRoute } from '../../src/transport/rest/routes.ts';
import { cryptoKey, fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';

const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
const PROJECT_SCOPE = `openid urn:gatehouse:iam:org:project:id:${IDS.project}:aud`;

let server: TestServer;
let fx: Fixture;
let apiToken = '';

async function machineToken(user: 'reporter' | 'opaque-bot', scope: string): Promise<string> {
  const secret = user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot;
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

async function introspect(token: string): Promise<Reply> {
  return postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
}

/**
 * The server's REST routes, read from the transcoder's route table built as handler.ts builds it:
 * the FeatureService beside every service registerServices adds, so a new route is covered here
 * without editing this suite.
 */
function restRoutes(): readonly RestRoute[] {
  const { router, calls } = createRecordingRouter();
  router.service(FeatureService, {});
  registerServices(router, server.running.gh);
  return new RestRoutes(calls).routes;
}

/**
 * A concrete path for a route: every path variable names an id no object has, so that a call changes
 * nothing (the management API's lifecycle routes would otherwise deactivate or delete a user on the
 * first of the repeated calls) and every answer past the body's reading is the same NotFound.
 */
function pathOf(route: RestRoute): string {
  return route.template.source.replace(/\{[^}]*\}/g, '999999999999999999');
}

/** Status and error id of an answer: what must not change when only unknown fields are added. */
function outcome(reply: Reply): { status: number; id: unknown } {
  const details = reply.json['details'];
  const id = Array.isArray(details) ? (details[0] as { id?: unknown } | undefined)?.id : reply.json['code'];
  return { status: reply.status, id };
}

beforeAll(async () => {
  fx = fixture();
  server = await startTestServer(fx.document);
  apiToken = await machineToken('reporter', API_SCOPE);
});
afterAll(() => server.stop());

describe('REST and Connect JSON input, as ZITADEL reads it', () => {
  const UNKNOWN = '{"fieldOfANewerZitadel":{"enabled":true},"another_one":[1,2]}';

  async function rest(route: RestRoute, body: string, headers: Record<string, string>): Promise<Reply> {
    // A Buffer body makes fetch send no content type of its own.
    return request(`${server.url}${pathOf(route)}`, { method: route.httpMethod, headers: { authorization: `Bearer ${apiToken}`, ...headers }, body: Buffer.from(body) });
  }

  it('covers every REST route, and some of them take a body', () => {
    const routes = restRoutes();
    expect(routes.map((r) => `${r.httpMethod} ${r.template.source}`)).toEqual(expect.arrayContaining(['PUT /v2/features/instance', 'POST /v3alpha/users/{user_id}/email/resend']));
    expect(routes.filter((r) => r.body !== '').length).toBeGreaterThan(0);
  });

  it('answers every REST route with a body the same with and without unknown fields, whatever the JSON-ish content type, a form included', async () => {
    for (const route of restRoutes().filter((r) => r.body !== '')) {
      const name = `${route.httpMethod} ${route.template.source}`;
      // A route without path variables may act on the caller's own organization, and `{}` may be a
      // whole valid request there (AddCustomLoginPolicy): the first call changes the state, every
      // later one meets the same state. The baseline is the second.
      await rest(route, '{}', { 'content-type': 'application/json' });
      const baseline = outcome(await rest(route, '{}', { 'content-type': 'application/json' }));
      expect([name, baseline.status]).not.toEqual([name, 415]);
      const variants: Record<string, string>[] = [
        { 'content-type': 'application/json' },
        {},
        { 'content-type': 'text/plain' },
        { 'content-type': 'text/plain; charset=utf-8' },
        // what `curl -d` sends
        { 'content-type': 'application/x-www-form-urlencoded' },
      ];
      for (const headers of variants) {
        expect([name, headers, outcome(await rest(route, UNKNOWN, headers))]).toEqual([name, headers, baseline]);
      }
    }
  });

  it.each([
    ['multipart form data', 'multipart/form-data; boundary=x'],
    ['XML', 'application/xml'],
    ['XML as text', 'text/xml'],
  ])('still answers %s on every REST route with a body by 415', async (_name, type) => {
    for (const route of restRoutes().filter((r) => r.body !== '')) {
      const reply = await rest(route, '{}', { 'content-type': type });
      expect([route.template.source, reply.status, reply.json['message']]).toEqual([route.template.source, 415, 'content type must be application/json']);
    }
  });

  it('answers every method over Connect JSON the same with and without unknown fields', async () => {
    for (const route of restRoutes()) {
      const url = `${server.url}/${route.method.parent.typeName}/${route.method.name}`;
      const call = async (body: string): Promise<Reply> =>
        request(url, { method: 'POST', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' }, body });
      await call('{}'); // as above: the second call meets the state the first one left
      const baseline = await call('{}');
      const withUnknown = await call(UNKNOWN);
      expect([route.method.name, withUnknown.status, withUnknown.json['code']]).toEqual([route.method.name, baseline.status, baseline.json['code']]);
    }
  });

  it('sets the known fields of a body without a content type and with unknown fields', async () => {
    const url = `${server.url}/v2/features/instance`;
    const set = await request(url, { method: 'PUT', headers: { authorization: `Bearer ${apiToken}` }, body: Buffer.from(`{"oidcTokenExchange":true,${UNKNOWN.slice(1)}`) });
    expect(set.status).toBe(200);
    const got = await request(url, { headers: { authorization: `Bearer ${apiToken}` } });
    expect(got.json).toMatchObject({ oidcTokenExchange: { enabled: true, source: 'SOURCE_INSTANCE' } });
    const reset = await request(url, { method: 'PUT', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'text/plain' }, body: '{"oidcTokenExchange":false,"x":1}' });
    expect(reset.status).toBe(200);
    expect((await request(url, { headers: { authorization: `Bearer ${apiToken}` } })).json).toMatchObject({ oidcTokenExchange: {} });
  });

  it('sets the known fields over Connect JSON with unknown fields', async () => {
    const url = `${server.url}/zitadel.feature.v2.FeatureService/`;
    const headers = { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' };
    const set = await request(`${url}SetInstanceFeatures`, { method: 'POST', headers, body: '{"oidcTokenExchange":true,"loginDefaultOrg":true}' });
    expect(set.status).toBe(200);
    const got = await request(`${url}GetInstanceFeatures`, { method: 'POST', headers, body: '{"future":1}' });
    expect(got.json).toMatchObject({ oidcTokenExchange: { enabled: true, source: 'SOURCE_INSTANCE' } });
    await request(`${url}ResetInstanceFeatures`, { method: 'POST', headers, body: '{}' });
  });
});

describe('revocation with a token_type_hint (RFC 7009 §2.1: advisory)', () => {
  it.each([
    ['reporter', 'id_token'],
    ['reporter', 'urn:example:unknown'],
    ['reporter', 'refresh_token'],
    ['opaque-bot', 'id_token'],
    ['opaque-bot', 'urn:example:unknown'],
    ['opaque-bot', 'refresh_token'],
  ] as const)('a %s token revoked with hint %s is revoked', async (user, hint) => {
    const token = await machineToken(user, PROJECT_SCOPE);
    expect((await introspect(token)).json['active']).toBe(true);
    const secret = user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot;
    const reply = await postForm(`${server.url}/oauth/v2/revoke`, { token, token_type_hint: hint }, { authorization: basic(user, secret) });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect((await introspect(token)).json).toEqual({ active: false });
  });
});

describe('401 answers (RFC 6750 §3)', () => {
  const userinfo = (): string => `${server.url}/oidc/v1/userinfo`;

  it.each([
    ['GET', {}, undefined],
    ['POST', { 'content-type': 'application/x-www-form-urlencoded' }, 'scope=openid'],
    ['GET', { authorization: 'Basic cmVwb3J0ZXI6eA==' }, undefined],
  ] as const)('userinfo %s without a bearer token: a bare challenge and no error code (§3.1)', async (method, headers, body) => {
    const reply = await request(userinfo(), { method, headers, ...(body === undefined ? {} : { body }) });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    expect(reply.json).toEqual({});
  });

  it('userinfo with a bad token: error="invalid_token" in the challenge and the body', async () => {
    const reply = await request(userinfo(), { headers: { authorization: 'Bearer not-a-token' } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(reply.json).toEqual({ error: 'invalid_token', error_description: 'access token is invalid' });
  });

  it('every REST route without a token: a bare challenge and no OAuth error code', async () => {
    for (const route of restRoutes()) {
      const reply = await request(`${server.url}${pathOf(route)}`, { method: route.httpMethod, headers: { 'content-type': 'application/json' }, ...(route.body === '' ? {} : { body: '{}' }) });
      const name = `${route.httpMethod} ${route.template.source}`;
      expect([name, reply.status, reply.headers.get('www-authenticate')]).toEqual([name, 401, 'Bearer']);
      // The body is the gateway's status (code 16); it names no RFC 6750 error.
      expect([name, reply.json['error'], reply.json['code']]).toEqual([name, undefined, 16]);
    }
  });

  it('every REST route with a bad token: error="invalid_token"', async () => {
    for (const route of restRoutes()) {
      const reply = await request(`${server.url}${pathOf(route)}`, {
        method: route.httpMethod,
        headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' },
        ...(route.body === '' ? {} : { body: '{}' }),
      });
      const name = `${route.httpMethod} ${route.template.source}`;
      expect([name, reply.status, reply.headers.get('www-authenticate')]).toEqual([name, 401, 'Bearer error="invalid_token"']);
    }
  });
});

describe('oauth4webapi private_key_jwt at introspection and revocation', () => {
  async function authorizationServer(): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(server.url);
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
  }

  /** oauth4webapi's PrivateKeyJwt, with aud = the issuer (its default) or the token endpoint. */
  async function clientAuth(as: oauth.AuthorizationServer, audience: 'issuer' | 'token endpoint'): Promise<oauth.ClientAuth> {
    const key = { key: await cryptoKey(fx.backendKey), kid: fx.backendKey.id };
    if (audience === 'issuer') return oauth.PrivateKeyJwt(key);
    return oauth.PrivateKeyJwt(key, {
      [oauth.modifyAssertion]: (_header, payload) => {
        payload['aud'] = as.token_endpoint;
      },
    });
  }

  const client: oauth.Client = { client_id: 'shop-backend' };

  it.each(['issuer', 'token endpoint'] as const)('introspects with aud = the %s', async (audience) => {
    const as = await authorizationServer();
    const token = await machineToken('reporter', PROJECT_SCOPE);
    const response = await oauth.introspectionRequest(as, client, await clientAuth(as, audience), token, { [oauth.allowInsecureRequests]: true });
    const result = await oauth.processIntrospectionResponse(as, client, response);
    expect(result).toMatchObject({ active: true, client_id: 'reporter', sub: IDS.reporter });
  });

  it.each(['issuer', 'token endpoint'] as const)('revokes with aud = the %s', async (audience) => {
    const as = await authorizationServer();
    const response = await oauth.revocationRequest(as, client, await clientAuth(as, audience), 'unknown-token', { [oauth.allowInsecureRequests]: true });
    await expect(oauth.processRevocationResponse(response)).resolves.toBeUndefined();
  });

  it('a wrong audience is refused, so the audience is really checked', async () => {
    const as = await authorizationServer();
    const auth = oauth.PrivateKeyJwt(
      { key: await cryptoKey(fx.backendKey), kid: fx.backendKey.id },
      { [oauth.modifyAssertion]: (_header, payload) => { payload['aud'] = 'https://elsewhere.example/token'; } },
    );
    const response = await oauth.revocationRequest(as, client, auth, 'unknown-token', { [oauth.allowInsecureRequests]: true });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });
});
