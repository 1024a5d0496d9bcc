/**
 * Bad input, black box (docs/errors.md): every endpoint answers malformed, oversized,
 * mis-typed or forged input with a clear 4xx in its own error shape (RFC 6749 JSON at the OAuth
 * endpoints, the generic `{code, message, details}` body over REST, Connect error JSON, gRPC status),
 * never a 500, a stack trace or a library's wording; expired and forged tokens are refused.
 * Each describe runs its own server and ends by checking that it is still healthy and never
 * answered with a 5xx (from /metrics).
 *
 * Every case here once found a defect (listed in the commit history); they stay as regression tests.
 */
import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JSONWebKeySet } from 'jose';
import { signAssertion } from '../support/assertions.ts';
import { fixture, IDS, SECRETS, type Fixture } from '../support/fixtures.ts';
import { rsaKeyPair } from '../support/key-pool.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm, request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { TOKEN_EXCHANGE, TOKEN_TYPE } from '../support/token-exchange.ts';

const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
const FULL_SCOPE = `${API_SCOPE} urn:gatehouse:iam:org:project:id:${IDS.project}:aud`;
const FEATURES = '/v2/features/instance';
const SET_FEATURES = '/zitadel.feature.v2.FeatureService/SetInstanceFeatures';
const GET_FEATURES = '/zitadel.feature.v2.FeatureService/GetInstanceFeatures';
const FORM_TYPE = 'application/x-www-form-urlencoded';
const KIB = 1024;

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

interface Ctx {
  server: TestServer;
  fx: Fixture;
  url: string;
}

/** One server for the enclosing describe; `shape` may change the bootstrap document first. */
function serverFor(env: Record<string, string> = {}, shape: (document: Record<string, unknown>) => Record<string, unknown> = (d) => d): Ctx {
  const ctx = {} as Ctx;
  beforeAll(async () => {
    ctx.fx = fixture();
    ctx.server = await startTestServer(shape(structuredClone(ctx.fx.document)), env);
    ctx.url = ctx.server.url;
  });
  afterAll(async () => {
    await ctx.server?.stop();
  });
  return ctx;
}

/** The request counters with a 5xx status, by label set, from /metrics. */
async function serverErrorCounts(ctx: Ctx): Promise<Map<string, number>> {
  const metrics = await request(`${ctx.url}/metrics`);
  expect(metrics.status).toBe(200);
  const counts = new Map<string, number>();
  for (const line of metrics.text.split('\n')) {
    const match = /^gatehouse_http_requests_total(\{.*status="5\d\d".*\}) (\d+)$/.exec(line);
    if (match) counts.set(match[1]!, Number(match[2]));
  }
  return counts;
}

/**
 * The last tests of a describe: nothing crashed, and no request of this describe got a 5xx (counted
 * from /metrics against a baseline taken before the describe's tests, as describes share a server).
 */
function stillHealthy(ctx: Ctx): void {
  let baseline = new Map<string, number>();
  beforeAll(async () => {
    baseline = await serverErrorCounts(ctx);
  });
  it('the server still answers /healthz 200', async () => {
    const health = await request(`${ctx.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
  });
  it('no request of this describe was answered with a 5xx', async () => {
    const now = await serverErrorCounts(ctx);
    const added = [...now].filter(([labels, count]) => count > (baseline.get(labels) ?? 0)).map(([labels]) => labels);
    expect(added).toEqual([]);
  });
}

/** Wording that must never reach a client: stack traces, exception names, parser and library messages. */
const LEAKS: readonly RegExp[] = [
  /\n\s+at\s/, // stack frames
  /node_modules|\.[cm]?[jt]s:\d+/,
  /\b(?:Error|SyntaxError|TypeError|RangeError|URIError|ReferenceError):/,
  /Unexpected (?:token|end|non-whitespace)|at position \d+|Expected property name|Bad control character/, // JSON.parse
  /cannot decode (?:message|field)|expected \w+, got|Array\(\d+\)|premature EOF|parse binary|readMaxBytes/, // protobuf-es / connect-es
  /\uFFFD/, // undecodable input echoed back
];

function expectNoLeak(text: string): void {
  for (const pattern of LEAKS) expect(text).not.toMatch(pattern);
}

/** RFC 6749 §5.2 error: exact status and error, only `error` and `error_description`, never cached. */
function expectOAuthError(reply: Reply, status: number, error: string, description?: string): void {
  expect({ status: reply.status, error: reply.json['error'] }).toEqual({ status, error });
  expect(Object.keys(reply.json).sort()).toEqual(['error', 'error_description']);
  expect(reply.json['error_description']).toEqual(description ?? expect.any(String));
  expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/);
  expect(reply.headers.get('cache-control')).toBe('no-store');
  expectNoLeak(reply.text);
}

/** The generic API error body (docs/errors.md#the-api): `{code, message, details[{"@type", ...}]}`. */
function expectApiError(reply: Reply, status: number, code: number, message?: string): void {
  expect({ status: reply.status, code: reply.json['code'] }).toEqual({ status, code });
  expect(Object.keys(reply.json).sort()).toEqual(['code', 'details', 'message']);
  expect(reply.json['message']).toEqual(message ?? expect.any(String));
  const details = reply.json['details'];
  expect(Array.isArray(details)).toBe(true);
  for (const detail of details as Array<Record<string, unknown>>) expect(detail['@type']).toEqual(expect.any(String));
  expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/);
  expectNoLeak(reply.text);
}

/** Connect unary error JSON: `{code, message[, details]}` with a Connect code name. */
function expectConnectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.json['code'] }).toEqual({ status, code });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/);
  for (const key of Object.keys(reply.json)) expect(['code', 'message', 'details']).toContain(key);
  expect(reply.json['message']).toEqual(expect.any(String));
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = text ? JSON.parse(text) : {};
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function machineToken(url: string, user: 'reporter' | 'opaque-bot' | 'plain-bot', scope = FULL_SCOPE): Promise<string> {
  const secret = user === 'reporter' ? SECRETS.reporter : user === 'opaque-bot' ? SECRETS.opaqueBot : SECRETS.plainBot;
  const reply = await postForm(`${url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

function introspect(url: string, token: string): Promise<Reply> {
  return postForm(`${url}/oauth/v2/introspect`, { token }, { authorization: basic('shop-api', SECRETS.api) });
}

function getFeatures(url: string, token: string): Promise<Reply> {
  return request(`${url}${FEATURES}`, { headers: { authorization: `Bearer ${token}` } });
}

/** An API refusal of the token itself: 401, a Bearer challenge with invalid_token, the generic body. */
function expectInvalidToken(reply: Reply): void {
  expectApiError(reply, 401, 16);
  expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b.*error="invalid_token"/);
}

/**
 * A request whose body is sent with Transfer-Encoding: chunked, chunk after chunk, until the server
 * answers or `maxBytes` were sent.
 */
function sendChunked(
  method: string,
  url: string,
  headers: Record<string, string>,
  head: string,
  maxBytes: number,
): Promise<Reply & { sent: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'transfer-encoding': 'chunked', ...headers } });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') replyHeaders.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: replyHeaders, text, json: parseJson(text), sent });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(new Error(`no answer after ${sent} bytes: ${error.message}`));
    });
    const pump = (): void => {
      if (answered) return;
      if (sent >= maxBytes) {
        req.end();
        return;
      }
      req.write(Buffer.alloc(8 * KIB, 0x61));
      sent += 8 * KIB;
      setTimeout(pump, 2);
    };
    req.write(head);
    pump();
  });
}

interface GrpcReply {
  httpStatus: number;
  contentType: string | undefined;
  grpcStatus: string | undefined;
  grpcMessage: string;
  body: Buffer;
}

/** One unary gRPC call over h2c with a raw body, on an existing session. */
function grpcCall(session: http2.ClientHttp2Session, path: string, body: Buffer, headers: Record<string, string> = {}): Promise<GrpcReply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (head = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('end', () => {
      const status = trailers['grpc-status'] ?? head['grpc-status'];
      const message = trailers['grpc-message'] ?? head['grpc-message'];
      resolve({
        httpStatus: Number(head[':status']),
        contentType: typeof head['content-type'] === 'string' ? head['content-type'] : undefined,
        grpcStatus: typeof status === 'string' ? status : undefined,
        grpcMessage: typeof message === 'string' ? decodeURIComponent(message) : '',
        body: Buffer.concat(chunks),
      });
    });
    stream.end(body);
  });
}

/** A gRPC length-prefixed message: flag byte, 4-byte big-endian length, payload. */
function envelope(payload: Buffer, flags = 0, declaredLength = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(declaredLength, 1);
  return Buffer.concat([head, payload]);
}

function connectSession(url: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The server every describe with the default configuration shares. Starting one costs about a
 * second, but stopping one waits out the 10 s shutdown grace period while fetch keeps a keep-alive
 * connection open (see the report), so describes share it rather than each starting its own.
 */
const shared = serverFor();

// ---------------------------------------------------------------------------------------------
// 1. Expired tokens
// ---------------------------------------------------------------------------------------------

describe('expired access tokens (GATEHOUSE_ACCESS_TOKEN_SECONDS=1)', () => {
  const ctx = serverFor({ GATEHOUSE_ACCESS_TOKEN_SECONDS: '1' });
  const tokens: Record<'jwt' | 'opaque', string> = { jwt: '', opaque: '' };

  beforeAll(async () => {
    for (const [kind, user] of [['jwt', 'reporter'], ['opaque', 'opaque-bot']] as const) {
      const reply = await postForm(
        `${ctx.url}/oauth/v2/token`,
        { grant_type: 'client_credentials', scope: FULL_SCOPE },
        { authorization: basic(user, user === 'reporter' ? SECRETS.reporter : SECRETS.opaqueBot) },
      );
      expect(reply.status).toBe(200);
      expect(reply.json['expires_in']).toBe(1);
      tokens[kind] = String(reply.json['access_token']);
    }
    expect(tokens.jwt.split('.')).toHaveLength(3);
    expect(tokens.opaque).not.toContain('.');
    await new Promise((resolve) => setTimeout(resolve, 2200));
  });

  it.each(['jwt', 'opaque'] as const)('introspection of an expired %s token answers {"active":false}', async (kind) => {
    const reply = await introspect(ctx.url, tokens[kind]);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ active: false });
    expect(reply.headers.get('cache-control')).toBe('no-store');
  });

  it.each(['jwt', 'opaque'] as const)('the REST API refuses an expired %s token with 401 invalid_token', async (kind) => {
    expectInvalidToken(await getFeatures(ctx.url, tokens[kind]));
  });

  it.each(['jwt', 'opaque'] as const)('Connect refuses an expired %s token with unauthenticated', async (kind) => {
    const reply = await request(`${ctx.url}${GET_FEATURES}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[kind]}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expectConnectError(reply, 401, 'unauthenticated');
    expect(reply.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it.each(['jwt', 'opaque'] as const)('revoking an expired %s token is a quiet 200 (RFC 7009 §2.2)', async (kind) => {
    const user = kind === 'jwt' ? 'reporter' : 'opaque-bot';
    const reply = await postForm(`${ctx.url}/oauth/v2/revoke`, { token: tokens[kind] }, { authorization: basic(user, kind === 'jwt' ? SECRETS.reporter : SECRETS.opaqueBot) });
    expect(reply.status).toBe(200);
  });

  // An expired JWT-profile assertion (invalid_grant) is covered in test/oauth/machine-grants.test.ts.

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 2. Forged tokens at the API and at introspection
// ---------------------------------------------------------------------------------------------

describe('forged access tokens', () => {
  const ctx = shared;
  const forged = new Map<string, string>();
  let genuine = '';

  const FORGERIES = [
    'one byte of the signature changed',
    'one byte of the payload changed, signature kept',
    'alg none and no signature',
    'alg none with the original signature',
    'HS256 keyed with our public key (algorithm confusion)',
    'an ID token from the JWT profile grant (typ JWT)',
    'the claims of a real access token signed by our key with typ JWT',
    'a token signed by our key for another issuer',
    'a token signed by our key that is not valid before next hour',
    'a JWT signed by a key we do not know, carrying our kid',
    'a JWT without a kid',
    'a 10 KB token',
    'a JWT with four segments',
  ] as const;

  beforeAll(async () => {
    genuine = await machineToken(ctx.url, 'reporter');
    // Baseline: the genuine token works, so every refusal below is due to the forgery.
    expect((await getFeatures(ctx.url, genuine)).status).toBe(200);
    expect((await introspect(ctx.url, genuine)).json['active']).toBe(true);

    const [h, p, s] = genuine.split('.') as [string, string, string];
    const header = decodeProtectedHeader(genuine);
    const payload = decodeJwt(genuine);
    const kid = String(header.kid);
    const jwks = (await request(`${ctx.url}/oauth/v2/keys`)).json as unknown as JSONWebKeySet;
    const ourKey = jwks.keys.find((k) => k.kid === kid)!;
    expect(ourKey).toBeDefined();
    const sign = ctx.server.running.gh.tokens.sign.bind(ctx.server.running.gh.tokens);

    const signature = Buffer.from(s, 'base64url');
    signature[20] = signature[20]! ^ 0x01;
    forged.set('one byte of the signature changed', `${h}.${p}.${signature.toString('base64url')}`);

    const tamperedPayload = Buffer.from(p, 'base64url').toString('utf8').replace(`"sub":"${IDS.reporter}"`, `"sub":"${IDS.reporter.slice(0, -1)}2"`);
    expect(tamperedPayload).not.toBe(Buffer.from(p, 'base64url').toString('utf8'));
    forged.set('one byte of the payload changed, signature kept', `${h}.${Buffer.from(tamperedPayload).toString('base64url')}.${s}`);

    const noneHeader = b64json({ alg: 'none', typ: 'at+jwt', kid });
    forged.set('alg none and no signature', `${noneHeader}.${p}.`);
    forged.set('alg none with the original signature', `${noneHeader}.${p}.${s}`);

    const publicPem = createPublicKey({ key: ourKey as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hsHeader = b64json({ alg: 'HS256', typ: 'at+jwt', kid });
    forged.set('HS256 keyed with our public key (algorithm confusion)', `${hsHeader}.${p}.${createHmac('sha256', publicPem).update(`${hsHeader}.${p}`).digest('base64url')}`);

    const assertion = await signAssertion({ issuer: IDS.reporter, audience: ctx.url, key: ctx.fx.reporterKey.privateKey, kid: ctx.fx.reporterKey.id });
    const grant = await postForm(`${ctx.url}/oauth/v2/token`, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion, scope: FULL_SCOPE });
    expect(grant.status).toBe(200);
    const idToken = String(grant.json['id_token']);
    // A genuine token of ours, only of the wrong type.
    expect(decodeProtectedHeader(idToken).typ).toBe('JWT');
    await jwtVerify(idToken, createLocalJWKSet(jwks), { issuer: ctx.url });
    forged.set('an ID token from the JWT profile grant (typ JWT)', idToken);

    // Signed in-process with the server's own key, to isolate one check at a time.
    forged.set('the claims of a real access token signed by our key with typ JWT', (await sign(payload, 'JWT')).jwt);
    forged.set('a token signed by our key for another issuer', (await sign({ ...payload, iss: 'https://evil.test' }, 'at+jwt')).jwt);
    const now = Math.floor(Date.now() / 1000);
    forged.set('a token signed by our key that is not valid before next hour', (await sign({ ...payload, nbf: now + 3600 }, 'at+jwt')).jwt);

    const { privateKey: strangerKey } = rsaKeyPair();
    forged.set('a JWT signed by a key we do not know, carrying our kid', await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid }).sign(strangerKey));
    forged.set('a JWT without a kid', await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt' }).sign(strangerKey));
    forged.set('a 10 KB token', `${'A'.repeat(4 * KIB)}.${'B'.repeat(4 * KIB)}.${'C'.repeat(2 * KIB)}`);
    forged.set('a JWT with four segments', `${genuine}.${s}`);
    for (const name of FORGERIES) expect(forged.get(name)).toEqual(expect.any(String));
  });

  it.each(FORGERIES)('the REST API refuses %s with 401 invalid_token', async (name) => {
    expectInvalidToken(await getFeatures(ctx.url, forged.get(name)!));
  });

  it.each(FORGERIES)('introspection answers {"active":false} for %s', async (name) => {
    const reply = await introspect(ctx.url, forged.get(name)!);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ active: false });
  });

  it('gRPC refuses every forgery with Unauthenticated (16)', async () => {
    const session = await connectSession(ctx.url);
    try {
      const statuses: Record<string, string | undefined> = {};
      for (const name of FORGERIES) {
        const reply = await grpcCall(session, GET_FEATURES, envelope(Buffer.alloc(0)), { authorization: `Bearer ${forged.get(name)!}` });
        statuses[name] = reply.grpcStatus;
      }
      expect(statuses).toEqual(Object.fromEntries(FORGERIES.map((name) => [name, '16'])));
    } finally {
      session.close();
    }
  });

  it('a 100 KB token in the Authorization header is a clear 4xx (431 or 401), not a 5xx', async () => {
    const reply = await getFeatures(ctx.url, 'A'.repeat(100 * KIB));
    expect([401, 431]).toContain(reply.status);
    expectNoLeak(reply.text);
  });

  it('a 100 KB token parameter at introspection is 413 invalid_request', async () => {
    expectOAuthError(await introspect(ctx.url, 'A'.repeat(100 * KIB)), 413, 'invalid_request', 'request body is too large');
  });

  it('a 60 KB token parameter at introspection (within the body limit) is inactive', async () => {
    const reply = await introspect(ctx.url, 'A'.repeat(60 * KIB));
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ active: false });
  });

  it('after all of this the genuine token still works', async () => {
    expect((await getFeatures(ctx.url, genuine)).status).toBe(200);
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 3. OAuth endpoints with malformed requests
// ---------------------------------------------------------------------------------------------

interface OAuthEndpoint {
  path: string;
  /** Valid client authentication for the endpoint. */
  authorization: string;
  /** A valid body (apart from the failure under test). */
  valid: Record<string, string>;
  /** The parameter the endpoint requires first. */
  key: string;
}

const OAUTH_ENDPOINTS: readonly OAuthEndpoint[] = [
  {
    path: '/oauth/v2/token',
    authorization: basic('reporter', SECRETS.reporter),
    valid: { grant_type: 'client_credentials', scope: 'openid' },
    key: 'grant_type',
  },
  { path: '/oauth/v2/introspect', authorization: basic('shop-api', SECRETS.api), valid: { token: 'some-token' }, key: 'token' },
  { path: '/oauth/v2/revoke', authorization: basic('reporter', SECRETS.reporter), valid: { token: 'some-token' }, key: 'token' },
];

describe('OAuth endpoints with malformed requests', () => {
  const ctx = shared;

  describe.each(OAUTH_ENDPOINTS)('POST $path', (endpoint) => {
    const url = (): string => `${ctx.url}${endpoint.path}`;
    const form = (): string => new URLSearchParams(endpoint.valid).toString();

    it('an empty body without a content type: the required parameter is missing', async () => {
      const reply = await request(url(), { method: 'POST', headers: { authorization: endpoint.authorization } });
      expectOAuthError(reply, 400, 'invalid_request', `${endpoint.key} is required`);
    });

    it('a JSON body is invalid_request', async () => {
      const reply = await request(url(), {
        method: 'POST',
        headers: { authorization: endpoint.authorization, 'content-type': 'application/json' },
        body: JSON.stringify(endpoint.valid),
      });
      expectOAuthError(reply, 400, 'invalid_request', `content type must be ${FORM_TYPE}`);
    });

    it('a multipart/form-data body is invalid_request', async () => {
      const body = new FormData();
      for (const [name, value] of Object.entries(endpoint.valid)) body.set(name, value);
      const reply = await request(url(), { method: 'POST', headers: { authorization: endpoint.authorization }, body });
      expectOAuthError(reply, 400, 'invalid_request', `content type must be ${FORM_TYPE}`);
    });

    it('a repeated parameter is invalid_request', async () => {
      const reply = await postForm(url(), `${form()}&${endpoint.key}=${endpoint.valid[endpoint.key]!}`, { authorization: endpoint.authorization });
      expectOAuthError(reply, 400, 'invalid_request', `${endpoint.key} is repeated`);
    });

    // URLSearchParams would decode "%E0%A4%A" leniently (WHATWG: "%A" stays literal, the broken UTF-8
    // sequence becomes U+FFFD); the form parser must refuse it instead.
    it('invalid percent-encoding (%E0%A4%A) is invalid_request', async () => {
      const body = new URLSearchParams({ ...endpoint.valid, [endpoint.key]: 'PLACEHOLDER' }).toString().replace('PLACEHOLDER', '%E0%A4%A');
      const reply = await postForm(url(), body, { authorization: endpoint.authorization });
      expectOAuthError(reply, 400, 'invalid_request');
    });

    it('invalid UTF-8 bytes are invalid_request', async () => {
      const reply = await request(url(), {
        method: 'POST',
        headers: { authorization: endpoint.authorization, 'content-type': FORM_TYPE },
        body: Buffer.concat([Buffer.from(`${form()}&x=`), Buffer.from([0xc3, 0x28, 0xff, 0xfe])]),
      });
      expectOAuthError(reply, 400, 'invalid_request', 'request body is not valid UTF-8');
    });

    it('a body over 64 KiB (Content-Length) is 413', async () => {
      const reply = await postForm(url(), `${form()}&x=${'a'.repeat(65 * KIB)}`, { authorization: endpoint.authorization });
      expectOAuthError(reply, 413, 'invalid_request', 'request body is too large');
    });

    it('a chunked body that grows beyond 64 KiB is 413, answered before the client finishes', async () => {
      const reply = await sendChunked('POST', url(), { authorization: endpoint.authorization, 'content-type': FORM_TYPE }, `${form()}&x=`, 512 * KIB);
      expectOAuthError(reply, 413, 'invalid_request', 'request body is too large');
      expect(reply.sent).toBeLessThan(512 * KIB);
    });

    it.each([
      ['not base64', 'Basic ###'],
      ['base64 without a colon', `Basic ${Buffer.from('reporter').toString('base64')}`],
      ['percent-garbage in id and secret', `Basic ${Buffer.from('%ZZ:%E0%A4%A').toString('base64')}`],
    ])('a Basic header that is %s is invalid_request', async (_name, authorization) => {
      const reply = await postForm(url(), endpoint.valid, { authorization });
      expectOAuthError(reply, 400, 'invalid_request', 'authorization header is malformed');
    });

    // PostgreSQL text cannot hold U+0000: a NUL once reached the database and came back as a 500.
    it('a NUL character in a parameter is invalid_request', async () => {
      const body = `${new URLSearchParams(endpoint.valid).toString()}&client_id=a%00b`;
      const reply = await postForm(url(), body, { authorization: endpoint.authorization });
      expectOAuthError(reply, 400, 'invalid_request', 'request parameters must not contain NUL characters');
    });

    it('a Basic client id with a NUL character names no client: 401 invalid_client', async () => {
      const reply = await postForm(url(), endpoint.valid, { authorization: basic('shop\u0000api', SECRETS.api) });
      expectOAuthError(reply, 401, 'invalid_client', 'client authentication failed');
    });

    it('a Basic header whose credentials are not UTF-8 names no client: 401 invalid_client with a Basic challenge', async () => {
      const reply = await postForm(url(), endpoint.valid, { authorization: `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}` });
      expectOAuthError(reply, 401, 'invalid_client', 'client authentication failed');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="gatehouse"/);
    });
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 4. REST API with malformed requests
// ---------------------------------------------------------------------------------------------

describe('REST API with malformed requests', () => {
  const ctx = shared;
  let token = '';
  beforeAll(async () => {
    token = await machineToken(ctx.url, 'reporter', API_SCOPE);
  });

  const put = (body: RequestInit['body'], contentType = 'application/json', extra: Record<string, string> = {}): Promise<Reply> =>
    request(`${ctx.url}${FEATURES}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': contentType, ...extra }, body });

  it('the token works for a well-formed call', async () => {
    expect((await getFeatures(ctx.url, token)).status).toBe(200);
  });

  it.each([
    ['malformed JSON', '{"oidcTokenExchange": tru', 'request body is not valid JSON: line 1, column 23'],
    ['a JSON array instead of an object', '[{"oidcTokenExchange": true}]', 'request body must be a JSON object'],
    ['JSON null', 'null', 'request body must be a JSON object'],
    ['a JSON string', '"oidcTokenExchange"', 'request body must be a JSON object'],
    ['a field of the wrong type', '{"oidcTokenExchange": "yes"}', 'oidcTokenExchange: must be true or false'],
    ['deeply nested arrays', `${'['.repeat(20000)}${']'.repeat(20000)}`, 'request body must be a JSON object'],
  ])('%s is 400 InvalidArgument', async (_name, body, message) => {
    expectApiError(await put(body), 400, 3, message);
  });

  it('invalid UTF-8 is 400 InvalidArgument', async () => {
    expectApiError(await put(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])), 400, 3, 'request body is not valid UTF-8');
  });

  // PostgreSQL refuses U+0000 in text (SQLSTATE 22021); that once came back as a 500.
  it('a NUL character in a path parameter is 400 InvalidArgument', async () => {
    const reply = await request(`${ctx.url}/v3alpha/users/a%00b/email/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"returnCode":{}}',
    });
    expectApiError(reply, 400, 3, 'a value in the request cannot be processed');
  });

  it('an XML body is 415', async () => {
    expectApiError(await put('<oidcTokenExchange>true</oidcTokenExchange>', 'application/xml'), 415, 3, 'content type must be application/json');
  });

  it('a JSON body in another charset is 415', async () => {
    expectApiError(await put('{"oidcTokenExchange": true}', 'application/json; charset=iso-8859-1'), 415, 3, 'request body must be UTF-8');
  });

  it('a body over 64 KiB is 413', async () => {
    expectApiError(await put(JSON.stringify({ oidcTokenExchange: true, pad: 'a'.repeat(65 * KIB) })), 413, 8);
  });

  it('a chunked body that grows beyond 64 KiB is 413', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const reply = await sendChunked('PUT', `${ctx.url}${FEATURES}`, headers, '{"pad":"', 512 * KIB);
    expectApiError(reply, 413, 8);
    expect(reply.sent).toBeLessThan(512 * KIB);
  });

  // A plain-JSON body labelled gzip must not be read as identity-coded (it once answered 200 and set the flag).
  it('a body with a Content-Encoding the endpoint does not decode is 415, not read as plain JSON', async () => {
    expectApiError(await put('{"oidcTokenExchange": true}', 'application/json', { 'content-encoding': 'gzip' }), 415, 3);
  });

  it.each([
    ['an unknown query parameter', '?superUser=true', 'unknown query parameter "superUser"'],
    ['a repeated query parameter', '?inheritance=true&inheritance=false', 'query parameter "inheritance" must not repeat'],
    ['a query parameter of the wrong type', '?inheritance=maybe', 'query parameter "inheritance" must be true or false'],
    ['invalid percent-encoding in a query value', '?inheritance=%E0%A4%A', 'query parameter "inheritance" must be true or false'],
  ])('GET with %s is 400 InvalidArgument', async (_name, query, message) => {
    const reply = await request(`${ctx.url}${FEATURES}${query}`, { headers: { authorization: `Bearer ${token}` } });
    expectApiError(reply, 400, 3, message);
  });

  it('PATCH is 405 with Allow and the generic body (code Unimplemented)', async () => {
    const reply = await request(`${ctx.url}${FEATURES}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"oidcTokenExchange": true}',
    });
    expectApiError(reply, 405, 12);
    expect(reply.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'PUT']);
  });

  it('HEAD is 405 with Allow and no body', async () => {
    const reply = await request(`${ctx.url}${FEATURES}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toMatch(/\bGET\b/);
    expect(reply.text).toBe('');
  });

  // RFC 6750 §3.1: an unsupported authentication method is no credentials: a bare challenge, no error code
  it('an unknown authorization scheme is 401 with a bare Bearer challenge', async () => {
    const reply = await request(`${ctx.url}${FEATURES}`, { headers: { authorization: 'Basic cmVwb3J0ZXI6eA==' } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    expect(reply.json['error']).toBeUndefined();
  });

  it.each([
    ['"Bearer" without a token', 'Bearer'],
    ['a token with characters outside b64token', 'Bearer a b c'],
  ])('%s is 401 invalid_token', async (_name, authorization) => {
    const reply = await request(`${ctx.url}${FEATURES}`, { headers: { authorization } });
    expectInvalidToken(reply);
  });

  // Unknown paths under the API prefixes answer in the API's error shape, not OAuth's.
  it.each([['/v2/nothing'], ['/v2/features/instance/extra'], ['/v2/features']])(
    'GET %s (no such API path) is 404 with the generic body (code NotFound)',
    async (path) => {
      const reply = await request(`${ctx.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expectApiError(reply, 404, 5);
    },
  );

  it('GET of an unknown API path is at least a clean JSON 404', async () => {
    const reply = await request(`${ctx.url}/v2/nothing`, { headers: { authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/);
    expectNoLeak(reply.text);
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 5. Connect and gRPC with bad input
// ---------------------------------------------------------------------------------------------

describe('Connect and gRPC with bad input', () => {
  const ctx = shared;
  let token = '';
  beforeAll(async () => {
    token = await machineToken(ctx.url, 'reporter', API_SCOPE);
  });

  const connect = (path: string, body: RequestInit['body'], contentType = 'application/json'): Promise<Reply> =>
    request(`${ctx.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });

  it('a Connect JSON call with malformed JSON is HTTP 400 with the Connect error JSON', async () => {
    expectConnectError(await connect(SET_FEATURES, '{"oidcTokenExchange": tru'), 400, 'invalid_argument');
  });

  it.each([
    ['a JSON array', '[]'],
    ['a field of the wrong type', '{"oidcTokenExchange": "yes"}'],
  ])('a Connect JSON call with %s is HTTP 400 invalid_argument', async (_name, body) => {
    expectConnectError(await connect(SET_FEATURES, body), 400, 'invalid_argument');
  });

  // connect-es's JSON decoding messages ("cannot decode message ... from JSON: Unexpected end of JSON input")
  // must not reach the client, and invalid UTF-8 must not be decoded leniently and echoed as U+FFFD.
  it.each([
    ['malformed JSON', '{"oidcTokenExchange": tru'],
    ['a JSON array', '[]'],
    ['a field of the wrong type', '{"oidcTokenExchange": "yes"}'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ])('the Connect error for %s is in our words, without parser wording', async (_name, body) => {
    const reply = await connect(SET_FEATURES, body);
    expectConnectError(reply, 400, 'invalid_argument');
    expectNoLeak(reply.text);
  });

  it('a Connect call with a text/plain body is 415', async () => {
    const reply = await connect(SET_FEATURES, '{}', 'text/plain');
    expect(reply.status).toBe(415);
  });

  it('a Connect binary call with garbage protobuf is 400 invalid_argument in our words', async () => {
    const reply = await connect(SET_FEATURES, Buffer.from([0xff, 0xff, 0xff]), 'application/proto');
    expectConnectError(reply, 400, 'invalid_argument');
    expect(reply.json['message']).toBe('request message is not valid protobuf binary');
  });

  it('a Connect call with a body over 64 KiB is refused with resource_exhausted (429, as the Connect protocol maps it)', async () => {
    expectConnectError(await connect(SET_FEATURES, JSON.stringify({ oidcTokenExchange: true, pad: 'a'.repeat(65 * KIB) })), 429, 'resource_exhausted');
  });

  // The library's wording ("... larger than configured readMaxBytes 65536") names a connect-es option.
  it('the Connect error for a body over 64 KiB is in our words', async () => {
    const reply = await connect(SET_FEATURES, JSON.stringify({ oidcTokenExchange: true, pad: 'a'.repeat(65 * KIB) }));
    expectConnectError(reply, 429, 'resource_exhausted');
    expectNoLeak(reply.text);
  });

  it.each([
    ['an unknown method of a known service', '/zitadel.feature.v2.FeatureService/DropAllTables'],
    ['an unknown service', '/zitadel.nothing.v1.NothingService/Nothing'],
  ])('Connect: %s is 404 unimplemented', async (_name, path) => {
    expectConnectError(await connect(path, '{}'), 404, 'unimplemented');
  });

  describe('gRPC over h2c', () => {
    let session: http2.ClientHttp2Session;
    beforeAll(async () => {
      session = await connectSession(ctx.url);
    });
    afterAll(() => {
      session?.close();
    });
    const call = (path: string, body: Buffer, headers: Record<string, string> = {}): Promise<GrpcReply> =>
      grpcCall(session, path, body, { authorization: `Bearer ${token}`, ...headers });

    it.each([
      ['a frame declaring more bytes than sent', '3', envelope(Buffer.from([0x28, 0x01]), 0, 100)],
      ['garbage protobuf bytes', '3', envelope(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]))],
      ['a truncated frame header', '3', Buffer.from([0, 0, 0])],
      ['two messages for a unary method', '12', Buffer.concat([envelope(Buffer.alloc(0)), envelope(Buffer.alloc(0))])],
    ])('%s answers grpc-status %s, not Internal', async (_name, status, body) => {
      const reply = await call(SET_FEATURES, body);
      expect(reply.httpStatus).toBe(200);
      expect(reply.grpcStatus).toBe(status);
      expectNoLeak(reply.grpcMessage);
    });

    it('a frame declaring 4 GiB answers ResourceExhausted (8)', async () => {
      const reply = await call(SET_FEATURES, Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1]));
      expect(reply.grpcStatus).toBe('8');
    });

    // The library's wording ("message size 4294967295 is larger than configured readMaxBytes") names an option.
    it('the ResourceExhausted message for a frame declaring 4 GiB is in our words', async () => {
      const reply = await call(SET_FEATURES, Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1]));
      expect(reply.grpcStatus).toBe('8');
      expectNoLeak(reply.grpcMessage);
    });

    it('an unsupported grpc-encoding answers Unimplemented (12)', async () => {
      const reply = await call(SET_FEATURES, envelope(Buffer.from([0x28, 0x01])), { 'grpc-encoding': 'snappy' });
      expect(reply.grpcStatus).toBe('12');
    });

    // connect-es (like grpc-go) answers Internal (13) for a frame flagged compressed without grpc-encoding;
    // docs/errors.md says bad input never gets the 500-class answer.
    it('a frame flagged compressed without grpc-encoding is not Internal (13)', async () => {
      const reply = await call(SET_FEATURES, envelope(Buffer.from([0x28, 0x01]), 1));
      expect(reply.grpcStatus).toBe('3');
    });

    // The same as the Connect JSON wording above, through the gRPC JSON codec.
    it('application/grpc+json with malformed JSON is InvalidArgument in our words', async () => {
      const reply = await call(SET_FEATURES, envelope(Buffer.from('{bad')), { 'content-type': 'application/grpc+json' });
      expect(reply.grpcStatus).toBe('3');
      expectNoLeak(reply.grpcMessage);
    });

    it.each([
      ['an unknown method of a known service', '/zitadel.feature.v2.FeatureService/DropAllTables'],
      ['an unknown service', '/zitadel.nothing.v1.NothingService/Nothing'],
    ])('%s answers Unimplemented (12)', async (_name, path) => {
      const reply = await call(path, envelope(Buffer.alloc(0)));
      expect(reply.httpStatus).toBe(200);
      expect(reply.grpcStatus).toBe('12');
    });

    it('the same h2 session still serves a well-formed call afterwards', async () => {
      const reply = await call(GET_FEATURES, envelope(Buffer.alloc(0)));
      expect(reply.grpcStatus).toBe('0');
      expect(reply.body.length).toBeGreaterThan(5);
    });
  });

  it('gRPC-web over HTTP/1.1 with garbage protobuf answers grpc-status 3 in its trailer frame', async () => {
    const reply = await connect(SET_FEATURES, envelope(Buffer.from([0xff, 0xff, 0xff])), 'application/grpc-web+proto');
    expect(reply.status).toBe(200);
    expect(reply.text).toMatch(/grpc-status: ?3\r\n/);
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 5b. Compressed request bodies that do not decompress (they once answered 500)
// ---------------------------------------------------------------------------------------------

describe('Connect and gRPC with compressed bodies that do not decompress', () => {
  const ctx = shared;
  let token = '';
  beforeAll(async () => {
    token = await machineToken(ctx.url, 'reporter', API_SCOPE);
  });
  // A gzip stream cut short: zlib fails with Z_BUF_ERROR ("unexpected end of file"), which connect-node
  // maps to Internal (only Z_DATA_ERROR is InvalidArgument). Under Jest every zlib error is Internal
  // (connect-node's `instanceof Error` fails across the VM realm), so the truncated stream is used: it
  // answers 500 / grpc-status 13 under plain Node as well.
  const truncatedGzip = (): Buffer => gzipSync(Buffer.from('{"oidcTokenExchange": true}')).subarray(0, 12);

  // connect-node answers HTTP 500 {"code":"internal","message":"decompression failed"} unless rewritten.
  it('a Connect call whose gzip body is cut short is 400 invalid_argument', async () => {
    const reply = await request(`${ctx.url}${SET_FEATURES}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: truncatedGzip(),
    });
    expectConnectError(reply, 400, 'invalid_argument');
  });

  // connect-node answers grpc-status 13 (Internal) "decompression failed" unless rewritten.
  it('a gRPC frame whose gzip payload is cut short answers InvalidArgument (3), not Internal', async () => {
    const session = await connectSession(ctx.url);
    try {
      const reply = await grpcCall(session, SET_FEATURES, envelope(truncatedGzip(), 1), { authorization: `Bearer ${token}`, 'grpc-encoding': 'gzip' });
      expect(reply.grpcStatus).toBe('3');
    } finally {
      session.close();
    }
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 5b. Token exchange with bad tokens and parameters
// ---------------------------------------------------------------------------------------------

const ACCESS_TOKEN_TYPE = TOKEN_TYPE.access;
const ID_TOKEN_TYPE = TOKEN_TYPE.id;

describe('token exchange with bad tokens and parameters', () => {
  const ctx = serverFor({}, (document) => {
    const apps = (document as { orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> }).orgs[0]!.projects![0]!.apps;
    apps.push({
      name: 'exchange',
      clientId: 'shop-exchange',
      clientSecret: 'shop-exchange-secret',
      authMethod: 'client_secret_basic',
      grantTypes: [TOKEN_EXCHANGE],
      accessTokenType: 'jwt',
    });
    return { ...document, features: { oidcTokenExchange: true }, security: { enableImpersonation: true } };
  });
  const auth = { authorization: basic('shop-exchange', 'shop-exchange-secret') };
  let genuine = '';
  const exchange = (params: Record<string, string> | string): Promise<Reply> =>
    postForm(`${ctx.url}/oauth/v2/token`, typeof params === 'string' ? `grant_type=${encodeURIComponent(TOKEN_EXCHANGE)}&${params}` : { grant_type: TOKEN_EXCHANGE, ...params }, auth);

  beforeAll(async () => {
    // a machine token whose audience names the exchanging app's project
    genuine = await machineToken(ctx.url, 'reporter', `openid urn:gatehouse:iam:org:project:id:${IDS.project}:aud`);
  });

  it('the genuine token exchanges', async () => {
    const reply = await exchange({ subject_token: genuine, subject_token_type: ACCESS_TOKEN_TYPE, scope: 'openid' });
    expect(reply.status).toBe(200);
  });

  it.each([
    ['three dots', '...'],
    ['three segments of garbage', 'a.b.c'],
    ['a JWT whose payload is not JSON', `${b64json({ alg: 'RS256', typ: 'at+jwt', kid: 'x' })}.bm90IGpzb24.c2ln`],
    ['an unsigned JWT (alg none)', `${b64json({ alg: 'none', typ: 'at+jwt' })}.${b64json({ sub: IDS.alice, iss: 'x' })}.`],
    ['a JWT whose act is a string', `${b64json({ alg: 'RS256', typ: 'at+jwt', kid: 'x' })}.${b64json({ sub: IDS.alice, act: 'admin' })}.c2ln`],
    ['60 KB of letters', 'A'.repeat(60 * KIB)],
  ])('a subject token that is %s is invalid_request', async (_name, token) => {
    const reply = await exchange({ subject_token: token, subject_token_type: ACCESS_TOKEN_TYPE, scope: 'openid' });
    expectOAuthError(reply, 400, 'invalid_request', 'subject_token is invalid, expired, revoked or not meant for this client');
    const asId = await exchange({ subject_token: token, subject_token_type: ID_TOKEN_TYPE, scope: 'openid' });
    expectOAuthError(asId, 400, 'invalid_request', 'subject_token is invalid, expired, revoked or not meant for this client');
  });

  it('an access token presented as an ID token (type confusion) is invalid_request', async () => {
    const reply = await exchange({ subject_token: genuine, subject_token_type: ID_TOKEN_TYPE, scope: 'openid' });
    expectOAuthError(reply, 400, 'invalid_request', 'subject_token is invalid, expired, revoked or not meant for this client');
  });

  it('a garbage actor token is invalid_request', async () => {
    const reply = await exchange({ subject_token: genuine, subject_token_type: ACCESS_TOKEN_TYPE, actor_token: 'x.y.z', actor_token_type: ACCESS_TOKEN_TYPE, scope: 'openid' });
    expectOAuthError(reply, 400, 'invalid_request', 'actor_token is invalid, expired, revoked or not meant for this client');
  });

  it('a token type with a NUL character is invalid_request', async () => {
    const reply = await exchange(`subject_token=${genuine}&subject_token_type=urn%00x&scope=openid`);
    expectOAuthError(reply, 400, 'invalid_request', 'request parameters must not contain NUL characters');
  });

  it('a token type with quotes, backslashes and non-ASCII is refused with a description in RFC 6749 characters', async () => {
    const reply = await exchange({ subject_token: genuine, subject_token_type: 'urn:"evil"\\\u00e9\u2028', scope: 'openid' });
    expectOAuthError(reply, 400, 'invalid_request', "subject_token_type urn:'evil'/?? is not supported");
  });

  it('2,000 audience parameters within the body limit are answered, not choked on', async () => {
    const body = `subject_token=${genuine}&subject_token_type=${encodeURIComponent(ACCESS_TOKEN_TYPE)}&scope=openid${`&audience=${IDS.project}`.repeat(2000)}`;
    const reply = await exchange(body);
    expect(reply.status).toBe(200);
    const foreign = await exchange(`${body}&audience=${'x'.repeat(2000)}`);
    expectOAuthError(foreign, 400, 'invalid_target');
    expect(String(foreign.json['error_description']).length).toBeLessThanOrEqual(300);
  });

  it('an empty scope, an empty subject token and an empty type are each invalid_request', async () => {
    for (const params of [
      { subject_token: genuine, subject_token_type: ACCESS_TOKEN_TYPE, scope: '' },
      { subject_token: '', subject_token_type: ACCESS_TOKEN_TYPE, scope: 'openid' },
      { subject_token: genuine, subject_token_type: '', scope: 'openid' },
    ]) {
      expectOAuthError(await exchange(params), 400, 'invalid_request');
    }
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 5c. A native application's loopback redirect URIs and PKCE verifiers
// ---------------------------------------------------------------------------------------------

describe('native applications with malformed loopback redirect URIs and verifiers', () => {
  const ctx = serverFor({}, (document) => {
    const apps = (document as { orgs: Array<{ projects?: Array<{ apps: unknown[] }> }> }).orgs[0]!.projects![0]!.apps;
    apps.push({ name: 'native', clientId: 'shop-native', appType: 'native', authMethod: 'none', redirectUris: ['http://127.0.0.1/cb', 'http://[::1]/cb', 'com.example.app:/cb'] });
    return document;
  });
  const authorize = (redirectUri: string) =>
    fetch(`${ctx.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: 'shop-native', redirect_uri: redirectUri, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }).toString()}`, { redirect: 'manual' });

  it.each([
    ['a port beyond 65535', 'http://127.0.0.1:99999/cb'],
    ['port 0', 'http://127.0.0.1:0/cb'],
    ['an IPv6 port beyond 65535', 'http://[::1]:65536/cb'],
    ['a port in exponent notation', 'http://127.0.0.1:1e3/cb'],
    ['two ports', 'http://127.0.0.1:80:80/cb'],
    ['an unclosed IPv6 literal', 'http://[::1/cb'],
    ['dot segments after a private-use scheme', 'com.example.app:/cb/../../etc'],
    ['a path of 2,000 segments', `http://127.0.0.1:5/cb${'/x'.repeat(2000)}`],
  ])('a redirect URI with %s is refused on the error page, never a 5xx', async (_name, redirectUri) => {
    const response = await authorize(redirectUri);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const page = await response.text();
    expect(page).toContain('redirect_uri is not registered for this client');
    expect(page).not.toContain('/x/x');
  });

  it.each([
    ['129 characters', 'a'.repeat(129)],
    ['control characters', `${'a'.repeat(42)}\u0001`],
    ['characters beyond ASCII', `${'a'.repeat(42)}\u00e9<script>`],
  ])('a code_verifier of %s is invalid_grant with a fixed description that echoes nothing', async (_name, verifier) => {
    const issued = await signedInCode(ctx.server, { clientId: 'shop-native', redirectUri: 'http://127.0.0.1:5/cb', scopes: ['openid'], userId: IDS.alice, pkce: true });
    const reply = await postForm(`${ctx.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: 'http://127.0.0.1:5/cb', client_id: 'shop-native', code_verifier: verifier });
    expectOAuthError(reply, 400, 'invalid_grant', 'code_verifier must be 43 to 128 printable ASCII characters');
    expect(reply.text).not.toContain('aaaa');
  });

  stillHealthy(ctx);
});

// ---------------------------------------------------------------------------------------------
// 6. Discovery and key set
// ---------------------------------------------------------------------------------------------

describe('discovery and key set with unexpected requests', () => {
  const ctx = shared;
  const PATHS = ['/.well-known/openid-configuration', '/oauth/v2/keys'] as const;

  it.each(PATHS.flatMap((path) => ['POST', 'PUT', 'DELETE', 'PATCH'].map((method) => [method, path] as const)))(
    '%s %s is 405 with Allow: GET and an OAuth error body',
    async (method, path) => {
      const reply = await request(`${ctx.url}${path}`, { method, headers: { 'content-type': FORM_TYPE }, body: 'a=b' });
      expectOAuthError(reply, 405, 'invalid_request');
      expect(reply.headers.get('allow')).toBe('GET');
    },
  );

  it.each(PATHS)('GET %s ignores query strings, even malformed ones', async (path) => {
    const plain = await request(`${ctx.url}${path}`);
    const queried = await request(`${ctx.url}${path}?foo=bar&foo=baz&x=%E0%A4%A&%ZZ`);
    expect(queried.status).toBe(200);
    expect(queried.json).toEqual(plain.json);
    expect(queried.headers.get('cache-control')).toBe('max-age=300, must-revalidate');
  });

  it.each(PATHS)('HEAD %s answers 200 without a body', async (path) => {
    const reply = await request(`${ctx.url}${path}`, { method: 'HEAD' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(reply.text).toBe('');
  });

  stillHealthy(ctx);
});
