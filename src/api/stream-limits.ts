/**
 * Caps on the streams anyone may open without a token (health Watch, server reflection): each one
 * holds a socket or an HTTP/2 stream, and the timeouts of the listener end a request that is slow to
 * arrive, not an answer that never ends. So the open streams are counted per client address (the
 * address every per-address limit counts, http/client-address.ts: behind trusted proxies the
 * forwarded client, IPv6 per /64) and in total, and a stream over either cap is refused at once with
 * ResourceExhausted. A load balancer needs one Watch per service it checks, so the per-address cap
 * leaves room for that and not for one client to hold the server's sockets.
 *
 * The cap sits in an interceptor, so every protocol meets it alike (gRPC, gRPC-web, Connect; HTTP/1.1,
 * h2c, TLS). A stream holds its place until its call's signal aborts, which Connect does when the
 * answer ends and connect-node when the connection or HTTP/2 stream closes: however it ends, the
 * client going, its maximum age (a Watch), the server stopping.
 */
import { Code, createContextKey, type Interceptor } from '@connectrpc/connect';
import { apiError } from './errors.ts';

export interface StreamLimits {
  /** Unauthenticated streams open at once from one client address. */
  perAddress: number;
  /** Unauthenticated streams open at once in all. */
  total: number;
  /** A health Watch ends with OK once it is this old; its client opens a new one. */
  watchMaxAgeMs: number;
}

/** The server's limits. Tests pass smaller ones. */
export const STREAM_LIMITS: StreamLimits = {
  perAddress: 16,
  total: 1024,
  watchMaxAgeMs: 30 * 60_000,
};

/** The key the caller's address is counted under (`limitKeyOf`), set by the server for every call. */
export const clientKey = createContextKey<string>('unknown', { description: 'gatehouse.client-address' });

/** Counts open streams; `enter` answers a release (idempotent), or which cap is full. */
export interface StreamGate {
  enter(key: string): (() => void) | 'address' | 'total';
  /** Streams open now, in all. */
  readonly open: number;
}

export function createStreamGate(limits: Pick<StreamLimits, 'perAddress' | 'total'>): StreamGate {
  const perKey = new Map<string, number>();
  let open = 0;
  return {
    get open() {
      return open;
    },
    enter(key) {
      const mine = perKey.get(key) ?? 0;
      if (mine >= limits.perAddress) return 'address';
      if (open >= limits.total) return 'total';
      perKey.set(key, mine + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (perKey.get(key) ?? 1) - 1;
        if (left === 0) perKey.delete(key);
        else perKey.set(key, left);
      };
    },
  };
}

const FULL = {
  address: ['API-TooManyStreams', 'too many open streams from this address: close one before opening another'],
  total: ['API-StreamsFull', 'the server has too many open streams: try again later'],
} as const;

/** Caps the streaming calls of the services served without a token (services.ts `PUBLIC_SERVICES`). */
export function streamLimitInterceptor(gate: StreamGate, publicServices: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    if (req.method.methodKind === 'unary' || !publicServices.has(req.service.typeName)) return next(req);
    const entered = gate.enter(req.contextValues.get(clientKey));
    if (typeof entered === 'string') {
      const [id, message] = FULL[entered];
      throw apiError(Code.ResourceExhausted, id, message);
    }
    if (req.signal.aborted) entered();
    else req.signal.addEventListener('abort', entered, { once: true });
    return next(req);
  };
}
