/**
 * The streams anyone may open without a token (health Watch, server reflection): at most 16 at once
 * per client address and a total, over every protocol, each place given back however its stream
 * ends; a Watch ends with OK at its maximum age. Real streams on real sockets: grpc-js with the
 * official health.proto (grpc-health-check's copy), connect-node's transports, and gRPC-web over
 * HTTP/1.1 written by hand, one connection per stream, as a client holding sockets would.
 *
 * The per-address cap is the server's own (16), through the whole server. The total and the maximum
 * age are shortened: the API handler is served on the real listener with smaller limits, as
 * test/ops/connections.test.ts does for the connection limits.
 *
 * Clients reach the server from loopback addresses of their own (127.0.0.2, ...: a socket bound to
 * that address), or through 127.0.0.1, a trusted proxy here, naming the client in X-Forwarded-For;
 * every test counts under addresses no other test uses.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import vm from 'node:vm';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fromBinary } from '@bufbuild/protobuf';
import { ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { Health, HealthCheckResponseSchema, HealthCheckResponse_ServingStatus as Status } from '../../gen/grpc/health/v1/health_pb.js';
import type { StreamLimits } from '../../src/api/stream-limits.ts';
import { parseTrustedProxies } from '../../src/config/ip-addresses.ts';
import { respond, type NodeRequest, type NodeResponse } from '../../src/http/node-types.ts';
import { createApiHandler, type ApiHandler } from '../../src/server/api-handler.ts';
import { listen, type ConnectionLimits, type Listener } from '../../src/server/listen.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { LOADER_OPTIONS, ROOT, protoClient, selfSigned, serviceFrom } from './grpc-support.ts';

const OFFICIAL_HEALTH = path.join(ROOT, 'node_modules/grpc-health-check/proto/health/v1/health.proto');

/** What a stream's opening came to: its first message, or the status it ended with instead. */
type Outcome = { open: string } | { code: number; message: string };

const BY_ADDRESS: Outcome = { code: grpc.status.RESOURCE_EXHAUSTED, message: 'too many open streams from this address: close one before opening another' };
const IN_ALL: Outcome = { code: grpc.status.RESOURCE_EXHAUSTED, message: 'the server has too many open streams: try again later' };
const SERVING: Outcome = { open: 'SERVING' };

interface Stream {
  opened: Promise<Outcome>;
  /** The status code it ended with; undefined when the connection was cut without one. */
  ended: Promise<number | undefined>;
  cancel(): void;
}

/** Where a server listens: the base URL, and the certificate to trust under TLS. */
interface Target {
  base: string;
  ca?: string;
}

/** Who a client is: the local address of its socket, and the client it names to a trusted proxy. */
interface From {
  local?: string;
  forwardedFor?: string;
}

// Everything a test opened, closed after it.
const streams: Stream[] = [];
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.cancel();
  for (const close of closers.splice(0)) await close();
});

function track(stream: Stream): Stream {
  streams.push(stream);
  return stream;
}

function outcomes(): { opened: Promise<Outcome>; settle(outcome: Outcome): void } {
  let settle!: (outcome: Outcome) => void;
  return { opened: new Promise<Outcome>((resolve) => (settle = resolve)), settle: (outcome) => settle(outcome) };
}

// ---- grpc-js: gRPC over HTTP/2 (h2c, or TLS with ALPN h2) ----

function grpcAddress(target: Target): { address: string; credentials: grpc.ChannelCredentials } {
  const url = new URL(target.base);
  const credentials = target.ca === undefined ? grpc.credentials.createInsecure() : grpc.credentials.createSsl(Buffer.from(target.ca));
  return { address: url.host, credentials };
}

function grpcMetadata(from: From): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (from.forwardedFor !== undefined) metadata.set('x-forwarded-for', from.forwardedFor);
  return metadata;
}

function fromGrpcCall<M>(call: grpc.ClientReadableStream<M> | grpc.ClientDuplexStream<object, M>, describe: (message: M) => string): Stream {
  const { opened, settle } = outcomes();
  call.on('data', (message: M) => settle({ open: describe(message) }));
  call.on('error', () => {}); // every end is reported through 'status'
  const ended = new Promise<number>((resolve) => {
    call.on('status', (status: grpc.StatusObject) => {
      settle({ code: status.code, message: status.details });
      resolve(status.code);
    });
  });
  return track({ opened, ended, cancel: () => call.cancel() });
}

function grpcWatch(target: Target, from: From = {}, service = ''): Stream {
  const { address, credentials } = grpcAddress(target);
  const client = new (serviceFrom(protoLoader.loadSync(OFFICIAL_HEALTH, LOADER_OPTIONS), 'grpc.health.v1.Health'))(address, credentials);
  closers.push(() => client.close());
  const watch = (client as unknown as { watch(req: object, md: grpc.Metadata): grpc.ClientReadableStream<{ status: string }> }).watch;
  return fromGrpcCall(watch.call(client, { service }, grpcMetadata(from)), (message) => message.status);
}

/** A reflection stream that asked one question and stays open. */
function reflection(target: Target, from: From = {}, version: 'v1' | 'v1alpha' = 'v1'): Stream {
  const { address, credentials } = grpcAddress(target);
  const client = protoClient(`grpc/reflection/${version}/reflection.proto`, `grpc.reflection.${version}.ServerReflection`, address, credentials);
  closers.push(() => client.close());
  const open = (client as unknown as { serverReflectionInfo(md: grpc.Metadata): grpc.ClientDuplexStream<object, { messageResponse: string }> }).serverReflectionInfo;
  const call = open.call(client, grpcMetadata(from));
  const stream = fromGrpcCall(call, (response) => response.messageResponse);
  call.write({ listServices: '*' });
  return stream;
}

// ---- gRPC-web over HTTP/1.1, by hand: one connection per stream ----

function grpcWebWatch(target: Target, from: From = {}): Stream {
  const { opened, settle } = outcomes();
  let finish!: (code: number | undefined) => void;
  const ended = new Promise<number | undefined>((resolve) => (finish = resolve));
  const end = (outcome: Outcome & { code: number }) => {
    settle(outcome);
    finish(outcome.code);
  };
  const url = new URL('/grpc.health.v1.Health/Watch', target.base);
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/grpc-web+proto' };
  if (from.forwardedFor !== undefined) headers['x-forwarded-for'] = from.forwardedFor;
  const options: https.RequestOptions = { method: 'POST', headers, agent: false, ...(from.local ? { localAddress: from.local } : {}), ...(target.ca ? { ca: target.ca } : {}) };
  const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
    if (res.headers['grpc-status'] !== undefined) {
      res.resume();
      return end(trailer(res.headers));
    }
    let buffer = Buffer.alloc(0);
    res.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 5 && buffer.length >= 5 + buffer.readUInt32BE(1)) {
        const payload = buffer.subarray(5, 5 + buffer.readUInt32BE(1));
        const flags = buffer[0]!;
        buffer = buffer.subarray(5 + payload.length);
        if ((flags & 0x80) !== 0) end(trailer(parseTrailer(payload)));
        else settle({ open: Status[fromBinary(HealthCheckResponseSchema, payload).status] });
      }
    });
    res.on('close', () => finish(undefined));
  });
  req.on('error', () => finish(undefined));
  req.end(Buffer.alloc(5)); // an empty HealthCheckRequest: the server as a whole
  return track({ opened, ended, cancel: () => req.destroy() });
}

function parseTrailer(payload: Buffer): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of payload.toString('utf8').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return fields;
}

function trailer(fields: Record<string, string | string[] | undefined>): Outcome & { code: number } {
  return { code: Number(fields['grpc-status']), message: decodeURIComponent(String(fields['grpc-message'] ?? '')) };
}

// ---- connect-node: Connect and gRPC-web, over HTTP/1.1 and h2 ----

type TransportKind = 'connect-h1' | 'connect-h2' | 'grpc-web-h2';

function transport(target: Target, kind: TransportKind): Transport {
  const nodeOptions = target.ca === undefined ? {} : { nodeOptions: { ca: target.ca } };
  if (kind === 'connect-h1') return createConnectTransport({ baseUrl: target.base, httpVersion: '1.1', ...nodeOptions });
  const sessionManager = new Http2SessionManager(target.base, {}, target.ca === undefined ? undefined : { ca: target.ca });
  closers.push(() => sessionManager.abort());
  const options = { baseUrl: target.base, httpVersion: '2' as const, sessionManager };
  return kind === 'connect-h2' ? createConnectTransport(options) : createGrpcWebTransport(options);
}

function connectWatch(target: Target, kind: TransportKind, from: From = {}): Stream {
  const { opened, settle } = outcomes();
  const abort = new AbortController();
  const headers: Record<string, string> = from.forwardedFor === undefined ? {} : { 'x-forwarded-for': from.forwardedFor };
  const messages = createClient(Health, transport(target, kind)).watch({ service: '' }, { signal: abort.signal, headers });
  const ended = (async () => {
    try {
      for await (const message of messages) settle({ open: Status[message.status] });
      settle({ code: 0, message: '' });
      return 0;
    } catch (error) {
      const { code, rawMessage } = ConnectError.from(error);
      settle({ code, message: rawMessage });
      return code;
    }
  })();
  return track({ opened, ended, cancel: () => abort.abort() });
}

/** Every protocol a Watch can come by (HTTP/2 is h2c in cleartext, ALPN h2 under TLS). */
const PROTOCOLS: readonly [string, (target: Target, from: From) => Stream][] = [
  ['gRPC over HTTP/2', (target, from) => grpcWatch(target, from)],
  ['gRPC-web over HTTP/1.1', (target, from) => grpcWebWatch(target, from)],
  ['gRPC-web over HTTP/2', (target, from) => connectWatch(target, 'grpc-web-h2', from)],
  ['Connect over HTTP/1.1', (target, from) => connectWatch(target, 'connect-h1', from)],
  ['Connect over HTTP/2', (target, from) => connectWatch(target, 'connect-h2', from)],
];

/** Opens `count` streams and checks that each is open. */
async function openAll(count: number, open: (i: number) => Stream, first: Outcome = SERVING): Promise<Stream[]> {
  const opened = Array.from({ length: count }, (_, i) => open(i));
  expect(await Promise.all(opened.map((stream) => stream.opened))).toEqual(opened.map(() => first));
  return opened;
}

/** Opens streams until one is not refused (a closed stream's place comes back once the server sees it close). */
async function openOnceFree(open: () => Stream, timeoutMs = 5000): Promise<Outcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stream = open();
    const outcome = await stream.opened;
    if (!('code' in outcome) || outcome.code !== grpc.status.RESOURCE_EXHAUSTED || Date.now() > deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('unauthenticated streams: 16 at once per client address', () => {
  let server: TestServer;
  let target: Target;
  beforeAll(async () => {
    server = await startTestServer(fixture().document, { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1' });
    target = { base: server.url };
  });
  afterAll(() => server.stop());

  it('refuses the 17th Watch over gRPC with ResourceExhausted; closing one frees its place', async () => {
    const watches = await openAll(16, () => grpcWatch(target)); // from 127.0.0.1 itself
    expect(await grpcWatch(target).opened).toEqual(BY_ADDRESS);
    watches[0]!.cancel();
    expect(await openOnceFree(() => grpcWatch(target))).toEqual(SERVING);
    expect(await grpcWatch(target).opened).toEqual(BY_ADDRESS);
  });

  it('refuses the 17th gRPC-web Watch over HTTP/1.1 (one connection each); closing one frees its place', async () => {
    const from = { local: '127.0.0.2' };
    const watches = await openAll(16, () => grpcWebWatch(target, from));
    expect(await grpcWebWatch(target, from).opened).toEqual(BY_ADDRESS);
    expect(await grpcWebWatch(target, { local: '127.0.0.3' }).opened).toEqual(SERVING); // another address has its own 16
    watches[5]!.cancel();
    expect(await openOnceFree(() => grpcWebWatch(target, from))).toEqual(SERVING);
    expect(await grpcWebWatch(target, from).opened).toEqual(BY_ADDRESS);
  });

  it('counts every protocol in one budget, and refuses each of them beyond it', async () => {
    const from = { forwardedFor: '198.51.100.3' };
    await openAll(16, (i) => PROTOCOLS[i % PROTOCOLS.length]![1](target, from));
    for (const [, open] of PROTOCOLS) expect(await open(target, from).opened).toEqual(BY_ADDRESS);
  });

  it('counts reflection streams in the same budget as Watch', async () => {
    const from = { forwardedFor: '198.51.100.4' };
    const streams = await openAll(16, (i) => reflection(target, from, i % 2 === 0 ? 'v1' : 'v1alpha'), { open: 'listServicesResponse' });
    expect(await grpcWatch(target, from).opened).toEqual(BY_ADDRESS);
    expect(await reflection(target, from, 'v1').opened).toEqual(BY_ADDRESS);
    expect(await reflection(target, from, 'v1alpha').opened).toEqual(BY_ADDRESS);
    streams[3]!.cancel();
    expect(await openOnceFree(() => grpcWatch(target, from))).toEqual(SERVING);
    expect(await reflection(target, from).opened).toEqual(BY_ADDRESS);
  });

  it('counts the client a trusted proxy names, IPv6 clients per /64', async () => {
    await openAll(16, (i) => grpcWebWatch(target, { forwardedFor: `2001:db8:1:2::${(i + 1).toString(16)}` }));
    expect(await grpcWebWatch(target, { forwardedFor: '2001:db8:1:2:ffff:ffff:ffff:ffff' }).opened).toEqual(BY_ADDRESS);
    expect(await grpcWebWatch(target, { forwardedFor: '2001:db8:1:3::1' }).opened).toEqual(SERVING);
    expect(await grpcWebWatch(target, { forwardedFor: '203.0.113.9' }).opened).toEqual(SERVING);
  });

  it('ignores X-Forwarded-For from a client that is no trusted proxy', async () => {
    await openAll(16, (i) => grpcWebWatch(target, { local: '127.0.0.4', forwardedFor: `203.0.113.${i + 10}` }));
    expect(await grpcWebWatch(target, { local: '127.0.0.4', forwardedFor: '203.0.113.99' }).opened).toEqual(BY_ADDRESS);
  });

  it('holds 16 watchers without a MaxListenersExceededWarning', async () => {
    // Node warns through the worker's own process, not the copy jest gives this file: listen there.
    const realProcess = vm.runInThisContext('process') as NodeJS.Process;
    const warnings: string[] = [];
    const listener = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    realProcess.on('warning', listener);
    try {
      await openAll(16, () => grpcWatch(target, { forwardedFor: '198.51.100.7' }));
      await new Promise((resolve) => setTimeout(resolve, 200)); // warnings are emitted on a later tick
      expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      realProcess.off('warning', listener);
    }
  });
});

describe('unauthenticated streams: the total, the maximum age, TLS and the stop (the API handler on the real listener)', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.close());

  /** The API alone on the one listener, trusting 127.0.0.1 as a proxy, with `streams` for limits. */
  async function serveApi(
    streams: Partial<StreamLimits>,
    tls?: { cert: string; key: string },
    limits?: Partial<ConnectionLimits>,
  ): Promise<{ target: Omit<Target, 'ca'>; api: ApiHandler; listener: Listener }> {
    const api = createApiHandler({
      db: database.db,
      instanceId: () => 'stream-limits',
      serviceName: 'gatehouse',
      apiAudience: 'https://gatehouse.test',
      maxBodyBytes: 64 * 1024,
      authenticate: () => Promise.reject(new Error('no tokens here')),
      trustedProxies: parseTrustedProxies('127.0.0.1'),
      streams,
    });
    const handler = (req: NodeRequest, res: NodeResponse): void => {
      void api.handle(req, res).then((handled) => {
        if (!handled) respond(res, 404, {});
      });
    };
    const listener = await listen({ host: '127.0.0.1', port: 0, http1: handler, http2: handler, tls, ...(limits ? { limits } : {}) });
    closers.push(() => listener.close(0));
    return { target: { base: `${tls ? 'https' : 'http'}://127.0.0.1:${listener.port}` }, api, listener };
  }

  it('refuses every address once the total is reached, until a stream closes', async () => {
    const { target } = await serveApi({ total: 6 });
    const watches = await openAll(6, (i) => grpcWebWatch(target, { forwardedFor: `198.51.100.${i + 1}` }));
    const newcomer = { forwardedFor: '198.51.100.50' };
    expect(await grpcWebWatch(target, newcomer).opened).toEqual(IN_ALL);
    expect(await grpcWatch(target, newcomer).opened).toEqual(IN_ALL);
    expect(await reflection(target, newcomer).opened).toEqual(IN_ALL);
    watches[2]!.cancel();
    expect(await openOnceFree(() => grpcWatch(target, newcomer))).toEqual(SERVING);
    expect(await grpcWebWatch(target, newcomer).opened).toEqual(IN_ALL);
  });

  it('ends a Watch with OK at its maximum age, over every protocol, and gives its place back', async () => {
    const { target } = await serveApi({ total: PROTOCOLS.length + 1, watchMaxAgeMs: 1000 });
    const started = Date.now();
    const watches = await openAll(PROTOCOLS.length, (i) => PROTOCOLS[i]![1](target, {}));
    const unknown = grpcWatch(target, {}, 'nope.v1.Nope');
    expect(await unknown.opened).toEqual({ open: 'SERVICE_UNKNOWN' });
    expect(await grpcWatch(target).opened).toEqual(IN_ALL);
    expect(await Promise.all([...watches, unknown].map((watch) => watch.ended))).toEqual([...watches, unknown].map(() => grpc.status.OK));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    await openAll(PROTOCOLS.length + 1, () => grpcWatch(target)); // every place is free again
  });

  it('keeps a quiet Watch over HTTP/2 past the idle limit of HTTP/2 sessions, until its maximum age', async () => {
    const { target } = await serveApi({ watchMaxAgeMs: 2500 }, undefined, { h2IdleMs: 500 });
    const started = Date.now();
    const watch = grpcWatch(target);
    expect(await watch.opened).toEqual(SERVING);
    expect(await watch.ended).toBe(grpc.status.OK);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
  });

  it('caps gRPC (ALPN h2) and gRPC-web (ALPN http/1.1) alike under TLS: 16 per address', async () => {
    const tls = selfSigned();
    closers.push(() => fs.rmSync(tls.dir, { recursive: true, force: true }));
    const served = await serveApi({}, { cert: tls.certFile, key: tls.keyFile });
    const target: Target = { ...served.target, ca: tls.cert };
    await openAll(16, (i) => (i % 2 === 0 ? grpcWatch(target) : grpcWebWatch(target)));
    expect(await grpcWatch(target).opened).toEqual(BY_ADDRESS);
    expect(await grpcWebWatch(target).opened).toEqual(BY_ADDRESS);
    expect(await connectWatch(target, 'connect-h2').opened).toEqual(BY_ADDRESS);
  });

  it('a stopping server ends the watches, and their places are free', async () => {
    const { target, api } = await serveApi({ total: 3 });
    const watches = await openAll(3, (i) => PROTOCOLS[i]![1](target, {}));
    api.shutDown();
    expect(await Promise.all(watches.map((watch) => watch.ended))).toEqual([0, 0, 0]);
    // A Watch now hears NOT_SERVING (the server stops) instead of being refused.
    expect(await openOnceFree(() => grpcWatch(target))).toEqual({ open: 'NOT_SERVING' });
  });
});
