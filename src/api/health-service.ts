/**
 * grpc.health.v1.Health (the gRPC health checking protocol): "" (the server as a whole) and every
 * served service are SERVING while the database answers (the rule of /ready) and NOT_SERVING while
 * it is away; they all depend on it alike. Unknown names are NOT_FOUND for Check and SERVICE_UNKNOWN
 * for Watch, as the protocol asks. Public: the auth interceptor lets this service through.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import { Code, ConnectError } from '@connectrpc/connect';
import { Health, HealthCheckResponse_ServingStatus as Status } from '../../gen/grpc/health/v1/health_pb.js';
import type { ServingProbe } from './serving-probe.ts';

/** `services`: the full names of the served services; "" is added here. */
export function createHealthService(services: readonly string[], probe: ServingProbe): ServiceImpl<typeof Health> {
  const known = new Set(['', ...services]);
  const status = (serving: boolean): Status => (serving ? Status.SERVING : Status.NOT_SERVING);
  return {
    async check(req) {
      if (!known.has(req.service)) throw new ConnectError(`unknown service: ${req.service}`, Code.NotFound);
      return { status: status(await probe.serving()) };
    },
    async *watch(req, ctx) {
      if (!known.has(req.service)) {
        // The protocol keeps the call open for a service that may appear later; ours never do.
        yield { status: Status.SERVICE_UNKNOWN };
        const ended = AbortSignal.any([ctx.signal, probe.stopped]); // until the caller goes, or the server stops
        if (!ended.aborted) await new Promise((resolve) => ended.addEventListener('abort', resolve, { once: true }));
        return;
      }
      for await (const serving of probe.watch(ctx.signal)) yield { status: status(serving) };
    },
    async list() {
      const current = status(await probe.serving());
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status: current }])) };
    },
  };
}
