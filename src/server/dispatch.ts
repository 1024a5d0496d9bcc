/**
 * Dispatch: the one listener's request handlers. Over HTTP/1.1 a request passes CORS (browser
 * requests only), then the prepared documents (key set, discovery) and the two hottest POSTs (token,
 * introspection), then the branding images (/assets/v1/, api/assets.ts), then the API handler
 * (Connect, gRPC, gRPC-web, REST), then the Express application
 * (OAuth and OIDC endpoints, login UI, health, readiness and metrics); HTTP/2 serves the API only.
 * Every request gets its request id, HSTS under https, its metrics and, at debug level, an access log line.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import { servesHttps } from '../config/index.ts';
import { bearerAuthenticator } from '../domain/tokens/authenticate.ts';
import { INTROSPECT_PATH, introspectionEndpoint } from '../oauth/introspect.ts';
import { documentEndpoints } from '../oauth/keys-endpoint.ts';
import { apiAudience } from '../oauth/scopes.ts';
import { TOKEN_PATH, tokenEndpoint } from '../oauth/token.ts';
import { ASSETS_PREFIX, assetsEndpoint } from '../api/assets.ts';
import { idpCallbackEndpoint, isIdpCallback } from '../http/idp-callback.ts';
import { createApiHandler } from './api-handler.ts';
import { createApp } from './app.ts';
import { forbidCaching } from '../http/node-types.ts';
import type { Composition } from './compose.ts';
import { renderOAuthError } from './errors.ts';
import type { Http1Handler, Http2Handler } from './listen.ts';
import { requestIdFor, withRequestId } from './request-context.ts';
import { routeLabel } from './routes.ts';

export interface Dispatch {
  http1: Http1Handler;
  http2: Http2Handler;
  /** The server stops: health watches say NOT_SERVING and end, so they do not hold the stop for its grace. */
  shutDown(): void;
}

/**
 * Paths the API can never serve: its REST routes live under /v2, /v2beta, /v3alpha and /auth (the
 * protos' HTTP bindings) and its procedures are /package.Service/Method. The OAuth endpoints and the
 * login UI go to Express without the API's route match (the token endpoint is the hottest POST).
 */
function expressOnly(url: string | undefined): boolean {
  return url !== undefined && (url.startsWith('/oauth/') || url.startsWith('/ui/'));
}

type Endpoint = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

/**
 * The hottest POSTs, answered without Express: a POST to exactly the token or introspection path
 * runs the same endpoint as the Express route, with the same no-store headers and the same error
 * renderer. Express's request setup and router were 4.5% of a client_credentials request's CPU.
 * Everything else about these paths (other methods, a query string, a trailing slash or other case,
 * which Express's router also accepts) still goes through Express (server/app.ts).
 */
function hotPosts(gh: Composition['gh']): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> | undefined {
  const endpoints = new Map<string, Endpoint>([
    [TOKEN_PATH, tokenEndpoint(gh)],
    [INTROSPECT_PATH, introspectionEndpoint(gh)],
  ]);
  return (req, res) => {
    const endpoint = req.method === 'POST' && req.url !== undefined ? endpoints.get(req.url) : undefined;
    if (endpoint === undefined) return undefined;
    forbidCaching(res);
    return endpoint(req, res).catch((error: unknown) => renderOAuthError(gh.log, error, req, res));
  };
}

export function createDispatch({ gh, cors, discoveryJson, refresh }: Composition): Dispatch {
  const { config, db, log, metrics, directory, tokens, instanceId } = gh;
  const documents = documentEndpoints(gh, discoveryJson);
  const api = createApiHandler({
    db,
    instanceId: () => instanceId,
    serviceName: config.serviceName,
    apiAudience: apiAudience(gh), // docs/security.md 10.5
    maxBodyBytes: config.maxBodyBytes,
    grpcReflection: config.grpcReflection,
    trustedProxies: config.trustedProxies,
    authenticate: bearerAuthenticator(tokens, directory, instanceId),
    changed: () => {
      directory.clear(); // at once: the next token request reads the new flags
      refresh().catch((error: unknown) => log.warn({ err: error }, 'cache refresh failed'));
    },
    log,
  }, gh);
  const app = createApp(gh, { documents, restRoutes: api.restRoutes });
  const hot = hotPosts(gh);
  // Branding images: uploads and public reads (api/assets.ts), beside the API, not through Express.
  const assets = assetsEndpoint(gh, { authenticate: bearerAuthenticator(tokens, directory, instanceId), apiAudience: apiAudience(gh) });
  // Where external identity providers send the browser back (docs/federation.md#the-intent-calls), beside the API and the login UI.
  const idpCallback = idpCallbackEndpoint({
    db, instanceId, externalUrl: config.externalUrl, masterKey: gh.masterKey, allowPrivateNetworks: config.idpAllowPrivateNetworks, maxBodyBytes: config.maxBodyBytes, log,
  });

  const accessLog = log.isLevelEnabled('debug');
  const hsts = servesHttps(config); // docs/security.md 10.14: under https every response carries HSTS
  /** Metrics and the access log (debug level) for one request; returns its request id. */
  const observe = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): string => {
    const started = process.hrtime.bigint();
    const id = requestIdFor(req.headers['x-request-id']);
    res.setHeader('x-request-id', id);
    if (hsts) res.setHeader('strict-transport-security', 'max-age=31536000'); // docs/security.md 10.14
    res.once('finish', () => {
      const route = routeLabel(req.url ?? '/');
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.http.record(route, req.method ?? 'GET', res.statusCode, seconds);
      if (accessLog) log.debug({ requestId: id, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    return id;
  };
  const failed = (res: http.ServerResponse | http2.Http2ServerResponse) => (error: unknown) => {
    log.error({ err: error }, 'api handler failed');
    if (res.headersSent) return;
    res.statusCode = 500;
    res.setHeader('content-type', 'application/json');
    res.end('{"code":13,"message":"internal error"}');
  };

  return {
    http1: (req, res) => {
      withRequestId(observe(req, res), () => {
        // the key set and discovery document first: prepared bytes, no routing (the hottest GETs)
        const serve = () => {
          if (documents.serve(req, res)) return Promise.resolve();
          const answered = hot(req, res);
          if (answered !== undefined) return answered;
          if (expressOnly(req.url)) return Promise.resolve(app(req, res));
          if (req.url?.startsWith(ASSETS_PREFIX)) return assets(req, res);
          if (isIdpCallback(req.url)) return idpCallback(req, res);
          return api.handle(req, res).then((handled) => void (handled || app(req, res)));
        };
        // Same-origin and non-browser requests (no Origin header) skip CORS altogether.
        const served = req.headers.origin === undefined ? serve() : cors.handle(req, res).then((answered) => (answered ? undefined : serve()));
        served.catch(failed(res));
      });
    },
    http2: (req, res) => {
      withRequestId(observe(req, res), () => {
        api.handle(req, res).then((handled) => {
          if (!handled && !res.headersSent) {
            res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found","error_description":"HTTP/2 serves the API only"}');
          }
        }, failed(res));
      });
    },
    shutDown: () => api.shutDown(),
  };
}
