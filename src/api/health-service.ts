/**
 * grpc.health.v1.Health (the gRPC health checking protocol): "" (the server as a whole) and every
 * served service are SERVING while the database answers (the rule of /ready) and NOT_SERVING while
 * it is away; they all depend on it alike. Unknown names are NOT_FOUND for Check and SERVICE_UNKNOWN
 * for Watch, as the protocol asks. Public: the auth interceptor lets this service through.
 *
 * A Watch ends with OK once it is `watchMaxAgeMs` old, so that no anonymous stream holds a socket
 * for ever; the protocol's clients open a new one (and how many may be open at once is
 * stream-limits.ts's business).
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { Code, ConnectError } from '@connectrpc/connect';
import { Health, HealthCheckResponse_ServingStatus as Status } from '../../gen/grpc/health/v1/health_pb.js';
import type { ServingProbe } from './serving-probe.ts';
import { STREAM_LIMITS } from './stream-limits.ts';

export interface HealthOptions {
  /** How long a Watch may stay open before it ends with OK. Default STREAM_LIMITS.watchMaxAgeMs. */
  watchMaxAgeMs?: number;
}

/** `services`: the full names of the served services; "" is added here. */
export function createHealthService(services: readonly string[], probe: ServingProbe, options: HealthOptions = {}): ServiceImpl<typeof Health> {
  const known = new Set(['', ...services]);
  const maxAgeMs = options.watchMaxAgeMs ?? STREAM_LIMITS.watchMaxAgeMs;
  const status = (serving: boolean): Status => (serving ? Status.SERVING : Status.NOT_SERVING);
  return {
    async check(req) {
      if (!known.has(req.service)) throw new ConnectError(`unknown service: ${req.service}`, Code.NotFound);
      return { status: status(await probe.serving()) };
    },
    async *watch(req, ctx) {
      const age = maxAge(ctx, maxAgeMs);
      try {
        if (!known.has(req.service)) {
          // The protocol keeps the call open for a service that may appear later; ours never do.
          yield { status: Status.SERVICE_UNKNOWN };
          const ended = AbortSignal.any([age.signal, probe.stopped]); // the caller goes, the age is reached, or the server stops
          if (!ended.aborted) await new Promise((resolve) => ended.addEventListener('abort', resolve, { once: true }));
          return;
        }
        for await (const serving of probe.watch(age.signal)) yield { status: status(serving) };
      } finally {
        age.clear();
      }
    },
    async list() {
      const current = status(await probe.serving());
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status: current }])) };
    },
  };
}

/** Aborts when the caller goes or the call is `ms` old; `clear` drops the timer of a call that ended first. */
function maxAge(ctx: HandlerContext, ms: number): { signal: AbortSignal; clear(): void } {
  const reached = new AbortController();
  const timer = setTimeout(() => reached.abort(), ms);
  timer.unref();
  return { signal: AbortSignal.any([ctx.signal, reached.signal]), clear: () => clearTimeout(timer) };
}
