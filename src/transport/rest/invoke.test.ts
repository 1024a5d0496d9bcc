/**
 * A REST call reaches the implementation through the router's interceptors with what a Connect call
 * would carry: the caller's headers (not those describing the REST body), its context values, and
 * a signal that aborts when the client leaves before the answer and when the call ends.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRegistry } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextKey, createContextValues, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import { FeatureService } from '../../../gen/zitadel/feature/v2/feature_service_pb.js';
import { silentLogger } from '../../api/logger.ts';
import { createRecordingRouter } from './invoke.ts';
import { createRestTranscoder } from './transcoder.ts';

const marker = createContextKey<string>('none', { description: 'a value the caller of the transcoder sets' });

describe('REST calls in-process', () => {
  let server: http.Server;
  let base: string;
  const seen: { headers: Map<string, string>; context?: HandlerContext; intercepted: string[] } = { headers: new Map(), intercepted: [] };
  let parked: ((context: HandlerContext) => void) | undefined;

  beforeAll(async () => {
    const interceptor: Interceptor = (next) => async (req) => {
      seen.intercepted.push(`${req.service.typeName}.${req.method.name}`);
      return next(req);
    };
    const { router, calls } = createRecordingRouter({ interceptors: [interceptor] });
    router.service(FeatureService, {
      async getInstanceFeatures(_req, context) {
        seen.context = context;
        context.requestHeader.forEach((value, name) => seen.headers.set(name, value));
        return {};
      },
      async resetInstanceFeatures(_req, context) {
        // Waits for the client to leave.
        await new Promise<void>((resolve) => {
          context.signal.addEventListener('abort', () => resolve(), { once: true });
          parked?.(context);
        });
        return {};
      },
    });
    const rest = createRestTranscoder(calls, {
      maxBodyBytes: 1024,
      registry: createRegistry(),
      log: silentLogger,
      contextValues: () => createContextValues().set(marker, 'set by the server'),
    });
    server = http.createServer((req, res) => void rest.handle(req, res).then((handled) => handled || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("carries the caller's headers and context values through the interceptors, and ends the call's signal after the answer", async () => {
    const response = await fetch(`${base}/v2/features/instance`, { headers: { authorization: 'Bearer abc', 'x-zitadel-orgid': '42', 'accept-encoding': 'gzip' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    expect(seen.intercepted).toEqual(['zitadel.feature.v2.FeatureService.GetInstanceFeatures']);
    expect(seen.headers.get('authorization')).toBe('Bearer abc');
    expect(seen.headers.get('x-zitadel-orgid')).toBe('42');
    expect(seen.headers.get('content-type')).toBe('application/json');
    expect(seen.headers.has('accept-encoding')).toBe(false); // describes the REST answer, not the call
    const context = seen.context!;
    expect(context.values.get(marker)).toBe('set by the server');
    expect(context.url).toBe(`${base}/zitadel.feature.v2.FeatureService/GetInstanceFeatures`);
    expect(context.signal.aborted).toBe(true);
    expect(ConnectError.from(context.signal.reason).code).toBe(Code.Canceled);
  });

  it('aborts the signal when the client leaves before the answer', async () => {
    const reached = new Promise<HandlerContext>((resolve) => {
      parked = resolve;
    });
    const request = http.request(`${base}/v2/features/instance`, { method: 'DELETE' });
    request.on('error', () => undefined); // the socket is destroyed below
    request.end();
    const context = await reached;
    expect(context.signal.aborted).toBe(false);
    request.destroy();
    await new Promise<void>((resolve) => (context.signal.aborted ? resolve() : context.signal.addEventListener('abort', () => resolve(), { once: true })));
    expect(ConnectError.from(context.signal.reason).rawMessage).toBe('the client closed the connection');
  });
});
