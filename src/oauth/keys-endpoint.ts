/**
 * GET /oauth/v2/keys (docs/endpoints.md#key-set): the public key set, cacheable for five minutes, with a
 * per-address limit of requests per minute (429 past it) for clients that do not cache; and the
 * discovery document (OIDC Discovery 1.0 §4), cacheable alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gatehouse } from '../context.ts';
import { limitKeyOf } from '../http/client-address.ts';
import { DISCOVERY_PATH, KEYS_PATH } from './discovery.ts';

/** A fixed one-minute window per client address. */
export class RateLimiter {
  readonly #limit: number;
  #window = 0;
  #counts = new Map<string, number>();

  constructor(perMinute: number) {
    this.#limit = perMinute;
  }

  /** Seconds until the window resets when the address is over its limit; 0 when allowed. */
  take(address: string, now = Date.now()): number {
    if (this.#limit === 0) return 0;
    const window = Math.floor(now / 60000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    const count = (this.#counts.get(address) ?? 0) + 1;
    this.#counts.set(address, count);
    return count > this.#limit ? Math.ceil(((window + 1) * 60000 - now) / 1000) : 0;
  }
}

type NodeRequest = Pick<IncomingMessage, 'method' | 'url' | 'headers' | 'socket'>;

const JSON_TYPE = 'application/json; charset=utf-8';
const CACHEABLE = 'max-age=300, must-revalidate';

/** A cacheable JSON document; HEAD gets the headers alone. */
function sendDocument(req: NodeRequest, res: ServerResponse, body: string): void {
  res.writeHead(200, { 'cache-control': CACHEABLE, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * GET /oauth/v2/keys with its per-address limit, and GET /.well-known/openid-configuration: both
 * serve a document prepared in advance (rebuilt when keys or settings change), on the node request
 * and response, so the dispatcher can answer them before any router (server/dispatch.ts) and Express
 * can route the same handlers for the requests the dispatcher leaves to it.
 */
export function documentEndpoints(gh: Gatehouse, discoveryJson: () => string) {
  const limiter = new RateLimiter(gh.config.keysRateLimit);
  const keys = (req: NodeRequest, res: ServerResponse): void => {
    const wait = limiter.take(limitKeyOf(req, gh.config.trustedProxies));
    if (wait > 0) {
      const body = '{"error":"rate_limited","error_description":"too many key set requests; cache the key set"}';
      res.writeHead(429, { 'retry-after': String(wait), 'cache-control': 'no-store', 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    sendDocument(req, res, gh.keys.jwksJson());
  };
  const discovery = (req: NodeRequest, res: ServerResponse): void => sendDocument(req, res, discoveryJson());
  return {
    keys,
    discovery,
    /** Answers a GET or HEAD of exactly one of the two paths; false for anything else. */
    serve(req: NodeRequest, res: ServerResponse): boolean {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      if (req.url === KEYS_PATH) keys(req, res);
      else if (req.url === DISCOVERY_PATH) discovery(req, res);
      else return false;
      return true;
    },
  };
}
