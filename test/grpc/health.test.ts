/**
 * grpc.health.v1.Health (docs/endpoints.md#grpc-health), called with a client built from
 * grpc-health-check's copy of the official health.proto, so that our proto's names and field
 * numbers are checked against it.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fixture } from '../support/fixtures.ts';
import { createTestDatabase, startTestServer, type TestServer } from '../support/gatehouse.ts';
import { openDatabaseProxy, type DatabaseProxy } from '../support/database-proxy.ts';
import { LOADER_OPTIONS, ROOT, serviceFrom, unary } from './grpc-support.ts';

const OFFICIAL_HEALTH = path.join(ROOT, 'node_modules/grpc-health-check/proto/health/v1/health.proto');

function healthClient(server: TestServer): grpc.Client {
  const Health = serviceFrom(protoLoader.loadSync(OFFICIAL_HEALTH, LOADER_OPTIONS), 'grpc.health.v1.Health');
  return new Health(`127.0.0.1:${server.running.listener.port}`, grpc.credentials.createInsecure());
}

/** Reads a Watch stream: the statuses so far, and a way to wait for the next one. */
function watch(client: grpc.Client, service: string) {
  const call = (client as unknown as { watch(req: object): grpc.ClientReadableStream<{ status: string }> }).watch({ service });
  const seen: string[] = [];
  const waiters: (() => void)[] = [];
  call.on('data', (message: { status: string }) => {
    seen.push(message.status);
    waiters.splice(0).forEach((wake) => wake());
  });
  call.on('error', () => {}); // the cancel at the end
  return {
    seen,
    async next(count: number, timeoutMs = 15000): Promise<string[]> {
      const deadline = Date.now() + timeoutMs;
      while (seen.length < count && Date.now() < deadline) await new Promise<void>((resolve) => { waiters.push(resolve); setTimeout(resolve, 200); });
      return seen.slice();
    },
    cancel: () => call.cancel(),
    call,
  };
}

describe('grpc.health.v1.Health', () => {
  let server: TestServer;
  let client: grpc.Client;
  beforeAll(async () => {
    server = await startTestServer(fixture().document);
    client = healthClient(server);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it.each(['', 'zitadel.feature.v2.FeatureService', 'zitadel.auth.v1.AuthService', 'zitadel.user.v3alpha.UserService', 'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection'])(
    'Check(%j) is SERVING without a token',
    async (service) => {
      expect(await unary(client, 'check', { service })).toEqual({ value: { status: 'SERVING' } });
    },
  );

  it('Check of an unknown service is NOT_FOUND', async () => {
    const reply = await unary(client, 'check', { service: 'nope.v1.Nope' });
    expect(reply.error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('Watch sends SERVING at once, and SERVICE_UNKNOWN for an unknown service', async () => {
    const known = watch(client, 'zitadel.feature.v2.FeatureService');
    const unknown = watch(client, 'nope.v1.Nope');
    try {
      expect(await known.next(1)).toEqual(['SERVING']);
      expect(await unknown.next(1)).toEqual(['SERVICE_UNKNOWN']);
    } finally {
      known.cancel();
      unknown.cancel();
    }
  });
});

describe('grpc.health.v1.Health when the server stops', () => {
  // SIGTERM (docs/operations.md#signals): watchers hear NOT_SERVING and their streams end, so the stop does not wait
  // out its 10 s grace for streams that never end by themselves.
  it('tells every watcher NOT_SERVING, ends the watches, and stops within seconds', async () => {
    const server = await startTestServer(fixture().document);
    const client = healthClient(server);
    const known = watch(client, '');
    const unknown = watch(client, 'nope.v1.Nope');
    const ended = (call: ReturnType<typeof watch>) => new Promise<void>((resolve) => call.call.on('close', () => resolve()));
    try {
      expect(await known.next(1)).toEqual(['SERVING']);
      expect(await unknown.next(1)).toEqual(['SERVICE_UNKNOWN']);
      const closed = Promise.all([ended(known), ended(unknown)]);
      const started = Date.now();
      await server.stop();
      await closed;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(known.seen).toEqual(['SERVING', 'NOT_SERVING']);
    } finally {
      client.close();
    }
  });
});

const pgOnly = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

pgOnly('grpc.health.v1.Health while PostgreSQL is cut off', () => {
  let server: TestServer;
  let client: grpc.Client;
  let proxy: DatabaseProxy;

  beforeAll(async () => {
    // A TCP proxy between the server and PostgreSQL, cut to take the database away.
    proxy = await openDatabaseProxy();
    const database = await createTestDatabase();
    const started = await startTestServer(fixture().document, { DATABASE_URL: proxy.via(database.url!) });
    server = { ...started, stop: async () => { await started.stop(); await database.drop(); } };
    client = healthClient(server);
  });
  afterAll(async () => {
    client.close();
    await proxy.cut();
    await server.stop();
  });

  it('Watch goes SERVING → NOT_SERVING → SERVING, and Check answers NOT_SERVING meanwhile', async () => {
    const watcher = watch(client, '');
    try {
      expect(await watcher.next(1)).toEqual(['SERVING']);
      await proxy.cut();
      expect(await watcher.next(2)).toEqual(['SERVING', 'NOT_SERVING']);
      expect(await unary(client, 'check', { service: 'zitadel.feature.v2.FeatureService' })).toEqual({ value: { status: 'NOT_SERVING' } });
      await proxy.restore();
      expect(await watcher.next(3)).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']);
      expect(await unary(client, 'check', { service: '' })).toEqual({ value: { status: 'SERVING' } });
    } finally {
      watcher.cancel();
    }
  }, 40000);
});
