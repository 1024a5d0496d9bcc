/**
 * gRPC interop with the ecosystem's own client, @grpc/grpc-js: a working call,
 * and every error raised before a handler runs answered trailers-only with the right code, over
 * h2c and over TLS.
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { fixture, IDS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { bearer, errorDetail, protoClient, rawUnary, reporterToken, selfSigned, unary } from './grpc-support.ts';

interface Setup {
  server: TestServer;
  address: string;
  credentials: grpc.ChannelCredentials;
  ca?: string;
  cleanup(): void;
}

async function h2c(): Promise<Setup> {
  const server = await startTestServer(fixture().document);
  return { server, address: `127.0.0.1:${server.running.listener.port}`, credentials: grpc.credentials.createInsecure(), cleanup: () => {} };
}

async function overTls(): Promise<Setup> {
  const tls = selfSigned();
  const port = await freePort();
  const server = await startTestServer(fixture().document, {
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_EXTERNAL_URL: `https://127.0.0.1:${port}`,
    GATEHOUSE_TLS_CERT: tls.certFile,
    GATEHOUSE_TLS_KEY: tls.keyFile,
  });
  return {
    server,
    address: `127.0.0.1:${port}`,
    credentials: grpc.credentials.createSsl(Buffer.from(tls.cert)),
    ca: tls.cert,
    cleanup: () => fs.rmSync(tls.dir, { recursive: true, force: true }),
  };
}

describe.each([
  ['h2c', h2c],
  ['TLS', overTls],
])('gRPC errors before a handler runs, over %s', (_name, setUp) => {
  let setup: Setup;
  let features: grpc.Client;
  let token: string;

  beforeAll(async () => {
    setup = await setUp();
    features = protoClient('zitadel/feature/v2/feature_service.proto', 'zitadel.feature.v2.FeatureService', setup.address, setup.credentials);
    token = await reporterToken(setup.server.url, setup.ca);
  });
  afterAll(async () => {
    features.close();
    await setup.server.stop();
    setup.cleanup();
  });

  it('serves zitadel.feature.v2.FeatureService/GetInstanceFeatures to a reporter token', async () => {
    const reply = await unary<{ details: unknown; oidcTokenExchange: { enabled: boolean } | null }>(features, 'GetInstanceFeatures', { inheritance: true }, bearer(token));
    expect(reply.error).toBeUndefined();
    expect(reply.value?.details).toBeDefined();
  });

  // Every call of every served service, through grpc-js clients built from the project's own protos.
  it('serves every API call: the feature, user and auth services', async () => {
    const users = protoClient('zitadel/user/v3alpha/user_service.proto', 'zitadel.user.v3alpha.UserService', setup.address, setup.credentials);
    const auth = protoClient('zitadel/auth.proto', 'zitadel.auth.v1.AuthService', setup.address, setup.credentials);
    try {
      expect((await unary(features, 'SetInstanceFeatures', { oidcTokenExchange: true }, bearer(token))).error).toBeUndefined();
      const got = await unary<{ oidcTokenExchange: { enabled: boolean } }>(features, 'GetInstanceFeatures', {}, bearer(token));
      expect(got.value?.oidcTokenExchange.enabled).toBe(true);
      expect((await unary(features, 'ResetInstanceFeatures', {}, bearer(token))).error).toBeUndefined();

      // the IAM_OWNER machine user acting on alice: codes returned to it (docs/security.md 10.1)
      const set = await unary<{ verificationCode: string }>(users, 'SetContactEmail', { userId: IDS.alice, email: { address: 'alice.new@acme.test', returnCode: {} } }, bearer(token));
      expect(set.error).toBeUndefined();
      const resent = await unary<{ verificationCode: string }>(users, 'ResendContactEmailCode', { userId: IDS.alice, returnCode: {} }, bearer(token));
      expect(resent.value?.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
      const verified = await unary(users, 'VerifyContactEmail', { userId: IDS.alice, verificationCode: resent.value!.verificationCode }, bearer(token));
      expect(verified.error).toBeUndefined();

      // a machine user has no second factor: each call reaches its handler and says so
      for (const [method, request] of [['AddMyAuthFactorOTP', {}], ['VerifyMyAuthFactorOTP', { code: '123456' }], ['RemoveMyAuthFactorOTP', {}]] as const) {
        const reply = await unary(auth, method, request, bearer(token));
        expect(reply.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
      }
    } finally {
      users.close();
      auth.close();
    }
  });

  it('answers UNIMPLEMENTED for an unknown method of a served service', async () => {
    const reply = await rawUnary(features, '/zitadel.feature.v2.FeatureService/NoSuchMethod', bearer(token));
    expect(reply.error?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(reply.error?.details).toBe('no such procedure: zitadel.feature.v2.FeatureService/NoSuchMethod');
  });

  it('answers UNIMPLEMENTED for an unknown service', async () => {
    const reply = await rawUnary(features, '/nope.v1.NoSuchService/Call');
    expect(reply.error?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('answers UNAUTHENTICATED without a token, with the zitadel.v1.ErrorDetail in the status details', async () => {
    const reply = await unary(features, 'GetInstanceFeatures', {});
    expect(reply.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(reply.error?.details).toBe('authentication required');
    const { status, detail } = errorDetail(reply.error!);
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.message).toBe('authentication required');
    expect(detail).toMatchObject({ id: 'AUTH-NoToken', message: 'authentication required' });
  });

  it('sends these errors as one HEADERS frame with END_STREAM (trailers-only)', async () => {
    const session = http2.connect(setup.server.url, setup.ca === undefined ? {} : { ca: setup.ca });
    const frame = (path: string) =>
      new Promise<{ endStream: boolean; status: unknown; details: unknown }>((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
        stream.on('response', (headers, flags) => {
          // nghttp2 flag 0x1 on the response HEADERS: the stream ended with them.
          resolve({ endStream: (flags & 0x1) === 0x1, status: headers['grpc-status'], details: headers['grpc-status-details-bin'] });
        });
        stream.on('error', reject);
        // An empty message, framed: 0 (uncompressed), length 0.
        stream.end(Buffer.alloc(5));
        stream.resume();
      });
    try {
      expect(await frame('/nope.v1.NoSuchService/Call')).toMatchObject({ endStream: true, status: '12' });
      expect(await frame('/zitadel.feature.v2.FeatureService/NoSuchMethod')).toMatchObject({ endStream: true, status: '12' });
      const unauthenticated = await frame('/zitadel.feature.v2.FeatureService/GetInstanceFeatures');
      expect(unauthenticated).toMatchObject({ endStream: true, status: '16' });
      expect(typeof unauthenticated.details).toBe('string');
    } finally {
      session.close();
    }
  });

  it('answers a malformed frame with INTERNAL or INVALID_ARGUMENT, trailers-only', async () => {
    const session = http2.connect(setup.server.url, setup.ca === undefined ? {} : { ca: setup.ca });
    try {
      const answer = await new Promise<{ endStream: boolean; status: unknown }>((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': '/zitadel.feature.v2.FeatureService/GetInstanceFeatures', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${token}` });
        stream.on('response', (headers, flags) => resolve({ endStream: (flags & 0x1) === 0x1, status: headers['grpc-status'] }));
        stream.on('error', reject);
        stream.end(Buffer.from([0, 0, 0, 0, 9, 1])); // announces 9 bytes, carries 1
        stream.resume();
      });
      expect(answer.endStream).toBe(true);
      expect(['3', '13']).toContain(answer.status);
    } finally {
      session.close();
    }
  });
});
