/**
 * Operations (docs/operations.md): health, readiness and metrics; TLS with ALPN on the one port; a
 * database outage answered with 503 and healed without a restart.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { openDatabaseProxy, type DatabaseProxy } from '../support/database-proxy.ts';
import { basic, postForm, request } from '../support/http.ts';

describe('health, readiness and metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document);
  });
  afterAll(() => server.stop());

  it('answers /healthz and /ready', async () => {
    expect(await request(`${server.url}/healthz`)).toMatchObject({ status: 200, json: { status: 'ok' } });
    expect(await request(`${server.url}/ready`)).toMatchObject({ status: 200, json: { status: 'ready' } });
  });

  it('counts requests by route and status, latency, and tokens issued', async () => {
    await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('reporter', SECRETS.reporter) });
    await request(`${server.url}/oauth/v2/keys`);
    const metrics = await request(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('gatehouse_http_requests_total{route="/oauth/v2/token",method="POST",status="200"}');
    expect(metrics.text).toContain('gatehouse_http_request_duration_seconds_bucket{le="0.005",route="/oauth/v2/keys"}');
    expect(metrics.text).toMatch(/gatehouse_tokens_issued_total\{grant="client_credentials",type="jwt"\} [1-9]/);
  });

  it('answers unknown paths with a JSON 404', async () => {
    const reply = await request(`${server.url}/nope`);
    expect(reply.status).toBe(404);
    expect(reply.json['error']).toBe('not_found');
  });
});

// docs/security.md 10.14: /metrics is open only to the metrics token once one is configured
describe('metrics behind GATEHOUSE_METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document, { GATEHOUSE_METRICS_TOKEN: 'metrics-token-7f3a' });
  });
  afterAll(() => server.stop());

  it('refuses /metrics without the token, or with another one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: 'Basic bWV0cmljczp4' }] as Record<string, string>[]) {
      const reply = await request(`${server.url}/metrics`, { headers });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(reply.text).not.toContain('gatehouse_http_requests_total');
    }
  });

  it('serves /metrics to the token, and sends no HSTS over plain http', async () => {
    const reply = await request(`${server.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-7f3a' } });
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('gatehouse_http_requests_total');
    expect(reply.headers.get('strict-transport-security')).toBeNull();
  });
});

describe('TLS with ALPN on one port', () => {
  let server: TestServer;
  let dir: string;
  let cert: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const port = await freePort();
    server = await startTestServer(fixture().document, {
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_EXTERNAL_URL: `https://127.0.0.1:${port}`,
      GATEHOUSE_TLS_CERT: path.join(dir, 'cert.pem'),
      GATEHOUSE_TLS_KEY: path.join(dir, 'key.pem'),
    });
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const alpn = (protocols: string[]) =>
    new Promise<string | false>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.running.listener.port, ca: cert, ALPNProtocols: protocols }, () => {
        resolve(socket.alpnProtocol ?? false);
        socket.end();
      });
      socket.on('error', reject);
    });

  // docs/security.md 10.14: under https every response, HTTP/1.1 or HTTP/2, carries HSTS
  it('sends Strict-Transport-Security on every response, over HTTP/1.1 and HTTP/2', async () => {
    const base = `https://127.0.0.1:${server.running.listener.port}`;
    const https = await import('node:https');
    const h1 = await new Promise<string | undefined>((resolve, reject) => {
      https.get(`${base}/nope`, { ca: cert }, (res) => {
        res.resume();
        resolve(res.headers['strict-transport-security']);
      }).on('error', reject);
    });
    expect(h1).toBe('max-age=31536000');
    const http2 = await import('node:http2');
    const session = http2.connect(base, { ca: cert });
    const h2 = await new Promise<unknown>((resolve, reject) => {
      const stream = session.request({ ':path': '/zitadel.feature.v2.FeatureService/GetInstanceFeatures', ':method': 'POST', 'content-type': 'application/grpc' });
      stream.on('response', (headers) => resolve(headers['strict-transport-security']));
      stream.on('error', reject);
      stream.end();
      stream.resume();
    });
    session.close();
    expect(h2).toBe('max-age=31536000');
  });

  it('chooses h2 for h2-only clients and http/1.1 for browsers that offer both', async () => {
    expect(await alpn(['h2'])).toBe('h2');
    expect(await alpn(['h2', 'http/1.1'])).toBe('http/1.1');
  });

  it('serves gRPC over h2 and the OAuth endpoints over HTTP/1.1 on the same port', async () => {
    const base = `https://127.0.0.1:${server.running.listener.port}`;
    const https = await import('node:https');
    const issued = await new Promise<{ access_token: string }>((resolve, reject) => {
      const req = https.request(
        `${base}/oauth/v2/token`,
        { method: 'POST', ca: cert, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('reporter', SECRETS.reporter) } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(JSON.parse(body) as { access_token: string }));
        },
      );
      req.on('error', reject);
      req.end('grant_type=client_credentials&scope=openid%20urn%3Agatehouse%3Aiam%3Aorg%3Aproject%3Aid%3Agatehouse%3Aaud');
    });
    const features = createClient(FeatureService, createGrpcTransport({ baseUrl: base, nodeOptions: { ca: cert } }));
    const got = await features.getInstanceFeatures({}, { headers: { authorization: `Bearer ${issued.access_token}` } });
    expect(got.details).toBeDefined();
  });
});

const pgOnly = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

pgOnly('database outage (PostgreSQL)', () => {
  let server: TestServer;
  let proxy: DatabaseProxy;

  beforeAll(async () => {
    // The server reaches its (fresh) database through the proxy.
    proxy = await openDatabaseProxy();
    const { createTestDatabase } = await import('../support/gatehouse.ts');
    const database = await createTestDatabase();
    const started = await startTestServer(fixture().document, { DATABASE_URL: proxy.via(database.url!) });
    const stop = started.stop;
    server = { ...started, stop: async () => { await stop(); await database.drop(); } };
  });
  afterAll(async () => {
    await proxy.cut();
    await server.stop();
  });

  it('answers 503 within seconds while the database is away, keeps /healthz up, and heals', async () => {
    const opaque = () => postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic('opaque-bot', SECRETS.opaqueBot) });
    expect((await opaque()).status).toBe(200);
    await proxy.cut();

    const started = Date.now();
    const during = await opaque();
    expect(during.status).toBe(503);
    expect(during.json['error']).toBe('temporarily_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await request(`${server.url}/ready`)).status).toBe(503);
    expect((await request(`${server.url}/healthz`)).status).toBe(200);

    await proxy.restore();
    let healed = 0;
    for (let i = 0; i < 50 && healed !== 200; i++) {
      healed = (await opaque()).status;
      if (healed !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(healed).toBe(200);
    expect((await request(`${server.url}/ready`)).status).toBe(200);
  }, 30000);
});

describe('request ids', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document);
  });
  afterAll(() => server.stop());

  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    expect((await request(`${server.url}/healthz`, { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const made = (await request(`${server.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith tabs' } })).headers.get('x-request-id');
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
  });
});
