/**
 * zitadel.feature.v2.FeatureService end to end: the API handler behind a real h2c server and a real
 * HTTP/1.1 server, a real migrated database, and real clients for gRPC, gRPC-web, Connect and REST.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { Source } from '../../gen/zitadel/feature/v2/feature_pb.js';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { ErrorDetailSchema } from '../../gen/zitadel/message_pb.js';
import { createApiHandler } from '../../src/server/api-handler.ts';
import { respond } from '../../src/http/node-types.ts';
import { apiAudienceScope } from '../../src/config/index.ts';
import { HashingBusy } from '../../src/domain/kernel/crypto.ts';
import { newId } from '../../src/domain/kernel/ids.ts';
import type { Principal } from '../../src/domain/kernel/principal.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const SERVICE = 'gatehouse';
const API_SCOPE = apiAudienceScope(SERVICE);
const API_AUDIENCE = 'https://gatehouse.test';
const instanceId = newId();

// Test fixture for the authenticator the server gets from src/domain: fixed bearer strings.
function principal(overrides: Partial<Principal>): Principal {
  return {
    instanceId,
    userId: 'user-1',
    orgId: 'org-1',
    kind: 'human',
    clientId: 'client-1',
    scopes: new Set(['openid', API_SCOPE]),
    audience: ['client-1', API_AUDIENCE],
    roles: [],
    tokenId: 'token-1',
    ...overrides,
  };
}
const PRINCIPALS: Record<string, Principal> = {
  'owner-token': principal({ userId: 'owner', roles: [{ role: 'IAM_OWNER', orgId: '' }] }),
  'member-token': principal({ userId: 'member', roles: [{ role: 'ORG_OWNER', orgId: 'org-1' }] }),
  'openid-only-token': principal({ userId: 'owner', roles: [{ role: 'IAM_OWNER', orgId: '' }], scopes: new Set(['openid']) }),
  // the API scope, but an audience without the API (as a token exchange narrows it)
  'narrowed-token': principal({ userId: 'owner', roles: [{ role: 'IAM_OWNER', orgId: '' }], audience: ['client-1'] }),
};
async function authenticate(token: string): Promise<Principal> {
  if (token === 'busy-token') throw new HashingBusy();
  const found = PRINCIPALS[token];
  if (found === undefined) throw new Error('unknown token');
  return found;
}

const MAX_BODY = 2048;
let database: FreshDatabase;
let db: DB;
let h2Server: http2.Http2Server;
let h1Server: http.Server;
let h2Url: string;
let h1Url: string;
let sessionManager: Http2SessionManager;
const h2Sessions = new Set<http2.ServerHttp2Session>();

function listen(server: http.Server | http2.Http2Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
  await db.insertInto('instances').values({ id: instanceId, name: 'api test' }).execute();

  const api = createApiHandler({ db, instanceId: () => instanceId, serviceName: SERVICE, apiAudience: API_AUDIENCE, maxBodyBytes: MAX_BODY, authenticate });
  const listener = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void => {
    void api.handle(req, res).then((handled) => {
      if (!handled) respond(res, 404, { 'content-type': 'text/plain' }, 'not handled');
    });
  };
  h2Server = http2.createServer(listener);
  h2Server.on('session', (session) => {
    h2Sessions.add(session);
    session.on('close', () => h2Sessions.delete(session));
  });
  h1Server = http.createServer(listener);
  [h2Url, h1Url] = await Promise.all([listen(h2Server), listen(h1Server)]);
  sessionManager = new Http2SessionManager(h2Url);
});

afterAll(async () => {
  sessionManager?.abort();
  for (const session of h2Sessions) session.destroy();
  h1Server?.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => (h2Server ? h2Server.close(resolve) : resolve(undefined))),
    new Promise((resolve) => (h1Server ? h1Server.close(resolve) : resolve(undefined))),
  ]);
  await database?.close();
});

const transports: Record<string, () => Transport> = {
  'gRPC (h2c)': () => createGrpcTransport({ baseUrl: h2Url, sessionManager }),
  'gRPC-web (HTTP/1.1)': () => createGrpcWebTransport({ baseUrl: h1Url, httpVersion: '1.1' }),
  'Connect JSON (HTTP/1.1)': () => createConnectTransport({ baseUrl: h1Url, httpVersion: '1.1' }),
  'Connect binary (HTTP/1.1)': () => createConnectTransport({ baseUrl: h1Url, httpVersion: '1.1', useBinaryFormat: true }),
};
const protocols = Object.keys(transports);

function featureClient(protocol: string): Client<typeof FeatureService> {
  const transport = transports[protocol];
  if (transport === undefined) throw new Error(protocol);
  return createClient(FeatureService, transport());
}

function bearer(token: string): { headers: Record<string, string> } {
  return { headers: { authorization: `Bearer ${token}` } };
}

async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error('expected the call to fail');
}

describe.each(protocols)('FeatureService over %s', (protocol) => {
  const client = (): Client<typeof FeatureService> => featureClient(protocol);

  it('sets, gets and resets the instance features', async () => {
    const set = await client().setInstanceFeatures({ oidcTokenExchange: true }, bearer('owner-token'));
    expect(set.details?.sequence).toBeGreaterThan(0n);
    expect(set.details?.resourceOwner).toBe(instanceId);
    expect(set.details?.changeDate).toBeDefined();

    const got = await client().getInstanceFeatures({ inheritance: true }, bearer('owner-token'));
    expect(got.oidcTokenExchange).toMatchObject({ enabled: true, source: Source.INSTANCE });
    expect(got.details?.sequence).toBe(set.details?.sequence);

    const reset = await client().resetInstanceFeatures({}, bearer('owner-token'));
    expect(reset.details?.sequence).toBeGreaterThan(set.details?.sequence ?? 0n);

    const inherited = await client().getInstanceFeatures({ inheritance: true }, bearer('owner-token'));
    expect(inherited.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.SYSTEM });
    const own = await client().getInstanceFeatures({ inheritance: false }, bearer('owner-token'));
    expect(own.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.UNSPECIFIED });
    expect(own.details?.sequence).toBe(reset.details?.sequence);
  });

  it('refuses a caller without IAM_OWNER with PermissionDenied and an error detail', async () => {
    const error = await rejection(client().setInstanceFeatures({ oidcTokenExchange: true }, bearer('member-token')));
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.findDetails(ErrorDetailSchema)).toEqual([expect.objectContaining({ id: 'FEAT-Permission', message: 'IAM_OWNER role required' })]);
  });

  it('refuses a token without the API audience scope with PermissionDenied', async () => {
    const error = await rejection(client().getInstanceFeatures({}, bearer('openid-only-token')));
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.findDetails(ErrorDetailSchema)[0]?.id).toBe('AUTH-Scope');
  });

  // docs/security.md 10.5: the API scope is not enough, the audience must name the API
  it('refuses a token whose audience lacks the API with Unauthenticated "invalid audience"', async () => {
    const error = await rejection(client().getInstanceFeatures({}, bearer('narrowed-token')));
    expect(error.code).toBe(Code.Unauthenticated);
    expect(error.rawMessage).toBe('invalid audience');
    expect(error.findDetails(ErrorDetailSchema)[0]?.id).toBe('AUTH-Audience');
  });

  it('answers Unavailable with a static message while the password-hashing queue is full', async () => {
    const error = await rejection(client().getInstanceFeatures({}, bearer('busy-token')));
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toBe('the server is busy; try again shortly');
  });

  it.each([
    ['no token', {}],
    ['an unknown token', bearer('nope')],
    ['another scheme', { headers: { authorization: 'Basic b3duZXI6cHc=' } }],
  ])('answers Unauthenticated for %s', async (_name, options) => {
    const error = await rejection(client().getInstanceFeatures({}, options));
    expect(error.code).toBe(Code.Unauthenticated);
  });

  it('answers Unimplemented for a service that is not registered', async () => {
    const transport = transports[protocol];
    if (transport === undefined) throw new Error(protocol);
    const error = await rejection(createClient(AuthService, transport()).addMyAuthFactorOTP({}, bearer('owner-token')));
    expect(error.code).toBe(Code.Unimplemented);
  });
});

describe('FeatureService over REST', () => {
  const url = (suffix = ''): string => `${h1Url}/v2/features/instance${suffix}`;
  const owner = { authorization: 'Bearer owner-token' };
  const json = { 'content-type': 'application/json' };

  async function call(method: string, target: string, init: { headers?: Record<string, string>; body?: string | Uint8Array } = {}): Promise<{ status: number; headers: Headers; body: unknown }> {
    const response = await fetch(target, { method, headers: init.headers ?? {}, ...(init.body === undefined ? {} : { body: init.body }) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
  }

  function errorBody(code: Code, id: string, message: string): unknown {
    return { code, message, details: [{ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail', id, message }] };
  }

  it('PUT, GET and DELETE /v2/features/instance with proto3 JSON', async () => {
    const set = await call('PUT', url(), { headers: { ...owner, ...json }, body: JSON.stringify({ oidcTokenExchange: true }) });
    expect(set.status).toBe(200);
    expect(set.headers.get('content-type')).toBe('application/json');
    expect(set.body).toEqual({ details: { sequence: expect.stringMatching(/^[1-9]\d*$/), changeDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), resourceOwner: instanceId } });

    const got = await call('GET', url('?inheritance=true'), { headers: owner });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ details: (set.body as { details: unknown }).details, oidcTokenExchange: { enabled: true, source: 'SOURCE_INSTANCE' } });

    const reset = await call('DELETE', url(), { headers: owner });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ details: expect.objectContaining({ resourceOwner: instanceId }) });

    // Fields with default values are omitted, as ZITADEL's gateway does: enabled false, source unspecified.
    const own = await call('GET', url(), { headers: owner });
    expect(own.body).toEqual({ details: (reset.body as { details: unknown }).details, oidcTokenExchange: {} });
    const inherited = await call('GET', url('?inheritance=true'), { headers: owner });
    expect(inherited.body).toMatchObject({ oidcTokenExchange: { source: 'SOURCE_SYSTEM' } });
  });

  it('accepts an empty body and a charset parameter', async () => {
    const empty = await call('PUT', url(), { headers: owner });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(errorBody(Code.InvalidArgument, 'FEAT-NoChanges', 'no feature to set'));
    const charset = await call('PUT', url(), { headers: { ...owner, 'content-type': 'application/json; charset=utf-8' }, body: '{"oidcTokenExchange":false}' });
    expect(charset.status).toBe(200);
  });

  it.each([
    ['no token', {}, 401, errorBody(Code.Unauthenticated, 'AUTH-NoToken', 'authentication required'), 'Bearer'],
    ['an unknown token', { authorization: 'Bearer nope' }, 401, errorBody(Code.Unauthenticated, 'AUTH-InvalidToken', 'invalid or expired token'), 'Bearer error="invalid_token"'],
    ['a member token', { authorization: 'Bearer member-token' }, 403, errorBody(Code.PermissionDenied, 'FEAT-Permission', 'IAM_OWNER role required'), null],
    [
      'a token without the API scope',
      { authorization: 'Bearer openid-only-token' },
      403,
      errorBody(Code.PermissionDenied, 'AUTH-Scope', `token lacks required scope: ${API_SCOPE}`),
      `Bearer error="insufficient_scope", scope="openid ${API_SCOPE}"`,
    ],
    // docs/security.md 10.5
    ['a token without the API audience', { authorization: 'Bearer narrowed-token' }, 401, errorBody(Code.Unauthenticated, 'AUTH-Audience', 'invalid audience'), 'Bearer error="invalid_token"'],
  ])('answers GET with %s by the error body', async (_name, headers, status, body, challenge) => {
    const response = await call('GET', url(), { headers });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
    expect(response.headers.get('www-authenticate')).toBe(challenge);
  });

  it('answers 503 with Retry-After and a static body while the password-hashing queue is full (docs/security.md 10.11)', async () => {
    const response = await call('GET', url(), { headers: { authorization: 'Bearer busy-token' } });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body).toEqual(errorBody(Code.Unavailable, 'API-Busy', 'the server is busy; try again shortly'));
  });

  it.each([
    ['malformed JSON', json, '{"oidcTokenExchange":', 400, errorBody(Code.InvalidArgument, 'REST-Json', 'request body is not valid JSON: line 1, column 22')],
    ['a wrong value type', json, '{"oidcTokenExchange":"on"}', 400, errorBody(Code.InvalidArgument, 'REST-InvalidArgument', 'oidcTokenExchange: must be true or false')],
    ['a JSON array', json, '[]', 400, errorBody(Code.InvalidArgument, 'REST-InvalidArgument', 'request body must be a JSON object')],
    // a form's type is read as JSON, as ZITADEL's gateway reads it: form fields are not JSON
    ['a form body', { 'content-type': 'application/x-www-form-urlencoded' }, 'oidcTokenExchange=true', 400, errorBody(Code.InvalidArgument, 'REST-Json', 'request body is not valid JSON: line 1, column 1')],
    ['a multipart body', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\n\r\n{}\r\n--x--', 415, errorBody(Code.InvalidArgument, 'REST-ContentType', 'content type must be application/json')],
    ['another charset', { 'content-type': 'application/json; charset=latin1' }, '{}', 415, errorBody(Code.InvalidArgument, 'REST-Charset', 'request body must be UTF-8')],
    ['invalid UTF-8', json, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 400, errorBody(Code.InvalidArgument, 'REST-Utf8', 'request body is not valid UTF-8')],
    ['an oversized body', json, `{"oidcTokenExchange":true${' '.repeat(MAX_BODY)}}`, 413, errorBody(Code.ResourceExhausted, 'REST-TooLarge', `request body exceeds ${MAX_BODY} bytes`)],
  ])('answers PUT with %s by a clear 4xx', async (_name, headers, body, status, expected) => {
    const response = await call('PUT', url(), { headers: { ...owner, ...headers }, body });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(expected);
  });

  it.each([['POST'], ['PATCH'], ['OPTIONS']])('answers %s on a REST path with 405 and the error body', async (method) => {
    const response = await call(method, url(), { headers: owner });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('PUT, DELETE, GET');
    expect(response.body).toEqual(errorBody(Code.Unimplemented, 'REST-MethodNotAllowed', 'Method Not Allowed'));
  });

  it('answers HEAD on a REST path with 405 and no body', async () => {
    const response = await call('HEAD', url(), { headers: owner });
    expect(response.status).toBe(405);
    expect(response.body).toBeUndefined();
  });

  it('has no route for a service that is not registered', async () => {
    const response = await fetch(`${h1Url}/auth/v1/users/me/auth_factors/otp`, { method: 'POST', headers: { ...owner, ...json }, body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('not handled');
  });
});

describe('REST over h2c', () => {
  function h2Request(headers: http2.OutgoingHttpHeaders, body?: string): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(h2Url);
      session.on('error', reject);
      const stream = session.request(headers);
      let text = '';
      let responseHeaders: http2.IncomingHttpHeaders = {};
      stream.setEncoding('utf8');
      stream.on('response', (h) => (responseHeaders = h));
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => {
        session.close();
        resolve({ status: Number(responseHeaders[':status']), headers: responseHeaders, body: text });
      });
      stream.on('error', reject);
      stream.end(body);
    });
  }

  it('serves the same routes and errors', async () => {
    const got = await h2Request({ ':method': 'GET', ':path': '/v2/features/instance?inheritance=true', authorization: 'Bearer owner-token' });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toMatchObject({ details: { resourceOwner: instanceId }, oidcTokenExchange: { source: expect.any(String) } });

    const big = await h2Request(
      { ':method': 'PUT', ':path': '/v2/features/instance', authorization: 'Bearer owner-token', 'content-type': 'application/json' },
      `{"oidcTokenExchange":true${' '.repeat(MAX_BODY)}}`,
    );
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({ code: Code.ResourceExhausted });
  });
});

describe('malformed protobuf binary', () => {
  const procedure = (): string => `${h1Url}/zitadel.feature.v2.FeatureService/SetInstanceFeatures`;
  const garbage = new Uint8Array([0xff, 0xff, 0xff]);

  it('is InvalidArgument (400) in the Connect protocol, not Internal', async () => {
    const response = await fetch(procedure(), { method: 'POST', headers: { authorization: 'Bearer owner-token', 'content-type': 'application/proto' }, body: garbage });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 'invalid_argument', message: 'request message is not valid protobuf binary' });
  });

  it('is InvalidArgument in gRPC-web', async () => {
    const envelope = new Uint8Array([0, 0, 0, 0, garbage.length, ...garbage]);
    const response = await fetch(procedure(), { method: 'POST', headers: { authorization: 'Bearer owner-token', 'content-type': 'application/grpc-web+proto' }, body: envelope });
    const text = Buffer.from(await response.arrayBuffer()).subarray(5).toString('latin1');
    expect(text).toContain('grpc-status: 3\r\n');
    expect(text).toContain('grpc-message: request%20message%20is%20not%20valid%20protobuf%20binary\r\n');
  });

  it('is InvalidArgument in gRPC', async () => {
    const status = await new Promise<{ status: string | undefined; message: string | undefined }>((resolve, reject) => {
      const session = http2.connect(h2Url);
      session.on('error', reject);
      const stream = session.request({ ':method': 'POST', ':path': '/zitadel.feature.v2.FeatureService/SetInstanceFeatures', 'content-type': 'application/grpc', te: 'trailers', authorization: 'Bearer owner-token' });
      // An error before any message is trailers-only: the status is in the headers.
      stream.on('response', (headers) => resolve({ status: headers['grpc-status'] as string, message: headers['grpc-message'] as string }));
      stream.on('end', () => session.close());
      stream.on('error', reject);
      stream.resume();
      stream.end(new Uint8Array([0, 0, 0, 0, garbage.length, ...garbage]));
    });
    expect(status).toEqual({ status: '3', message: 'request message is not valid protobuf binary' });
  });
});

describe('Connect JSON input', () => {
  it('ignores unknown fields, as connect-go and ZITADEL\'s gateway do', async () => {
    const response = await fetch(`${h1Url}/zitadel.feature.v2.FeatureService/SetInstanceFeatures`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner-token', 'content-type': 'application/json' },
      body: '{"oidcTokenExchange":true,"loginDefaultOrg":true}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ details: expect.anything() });
  });

  it('answers an unknown procedure with Connect Unimplemented', async () => {
    const response = await fetch(`${h1Url}/zitadel.user.v3alpha.UserService/ResendContactEmailCode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: 'unimplemented', message: 'no such procedure: zitadel.user.v3alpha.UserService/ResendContactEmailCode' });
  });
});
