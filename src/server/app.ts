/**
 * The Express application: OAuth/OIDC endpoints and operations endpoints, HTTP/1.1 only
 * (docs/endpoints.md#one-port-four-protocols). No global middleware: each route gets only what it
 * needs, so hot endpoints stay lean.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { safeEqual } from '../domain/kernel/crypto.ts';
import { forbidCaching } from '../http/node-types.ts';
import { AUTHORIZE_CALLBACK_PATH } from '../http/paths.ts';
import { loginRouter } from '../login/routes.ts';
import { reachable } from '../store/database.ts';
import { authorizeEndpoint } from '../oauth/authorize.ts';
import { authorizeCallback } from '../oauth/authorize-finish.ts';
import { AUTHORIZE_PATH, DISCOVERY_PATH, KEYS_PATH } from '../oauth/discovery.ts';
import { InvalidRequest } from '../oauth/errors.ts';
import { END_SESSION_PATH, endSessionEndpoint } from '../oauth/end-session.ts';
import { INTROSPECT_PATH, introspectionEndpoint } from '../oauth/introspect.ts';
import type { documentEndpoints } from '../oauth/keys-endpoint.ts';
import { REVOKE_PATH, revocationEndpoint } from '../oauth/revoke.ts';
import { TOKEN_PATH, tokenEndpoint } from '../oauth/token.ts';
import { USERINFO_PATH, userinfoEndpoint } from '../oauth/userinfo.ts';
import { docsFiles } from '../transport/rest/docs-page.ts';
import type { RestRoutes } from '../transport/rest/routes.ts';
import { OPENAPI_PATH, openApiEndpoint, serverOpenApiDocument } from '../transport/rest/openapi.ts';
import { oauthErrorRenderer } from './errors.ts';

type AsyncHandler = (req: Request, res: Response) => Promise<void>;

/** OAuth responses are never cached (RFC 6749 §5.1). */
function noStore(handler: AsyncHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    forbidCaching(res);
    handler(req, res).catch(next);
  };
}

function methodNotAllowed(allowed: string): RequestHandler {
  return (_req, res, next) => {
    res.set('Allow', allowed);
    next(new InvalidRequest(`method not allowed; use ${allowed}`, 405));
  };
}

/** Whether the Authorization header carries the metrics token (always, when none is configured). */
export function metricsAllowed(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const presented = /^Bearer +(\S+)$/i.exec(authorization?.trim() ?? '')?.[1];
  return presented !== undefined && safeEqual(presented, token);
}

const API_PREFIXES = ['/v2/', '/v2beta/', '/v3alpha/', '/auth/v1/', '/zitadel.'];

export interface AppState {
  /** The key set and discovery document handlers (the dispatcher answers most requests for them first). */
  documents: ReturnType<typeof documentEndpoints>;
  /** The API's REST routes, which /openapi.json describes. */
  restRoutes: RestRoutes;
}

export function createApp(gh: Gatehouse, state: AppState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  app.get(DISCOVERY_PATH, (req, res) => state.documents.discovery(req, res));
  app.get(KEYS_PATH, (req, res) => state.documents.keys(req, res));
  app.get(AUTHORIZE_PATH, noStore(authorizeEndpoint(gh)));
  app.post(AUTHORIZE_PATH, noStore(authorizeEndpoint(gh)));
  app.get(AUTHORIZE_CALLBACK_PATH, noStore(authorizeCallback(gh)));
  app.post(TOKEN_PATH, noStore(tokenEndpoint(gh)));
  app.post(INTROSPECT_PATH, noStore(introspectionEndpoint(gh)));
  app.post(REVOKE_PATH, noStore(revocationEndpoint(gh)));
  app.get(USERINFO_PATH, noStore(userinfoEndpoint(gh)));
  app.post(USERINFO_PATH, noStore(userinfoEndpoint(gh)));
  app.get(END_SESSION_PATH, noStore(endSessionEndpoint(gh)));
  app.post(END_SESSION_PATH, noStore(endSessionEndpoint(gh)));
  app.all([TOKEN_PATH, INTROSPECT_PATH, REVOKE_PATH], methodNotAllowed('POST'));
  app.all([DISCOVERY_PATH, KEYS_PATH, AUTHORIZE_CALLBACK_PATH], methodNotAllowed('GET'));
  app.all(AUTHORIZE_PATH, methodNotAllowed('GET, POST'));
  app.all([USERINFO_PATH, END_SESSION_PATH], methodNotAllowed('GET, POST'));

  app.use('/ui/login', loginRouter(gh));

  // The OpenAPI document and the reference page (/docs and its files): prepared once, here.
  const reference = new Map([
    [OPENAPI_PATH, openApiEndpoint(serverOpenApiDocument(state.restRoutes, { externalUrl: gh.config.externalUrl, serviceName: gh.config.serviceName, discoveryPath: DISCOVERY_PATH }))],
    ...docsFiles(gh.config.externalUrl),
  ]);
  for (const [path, body] of reference) app.get(path, (req, res) => body.send(req, res));
  app.all([...reference.keys()], methodNotAllowed('GET'));

  app.get('/healthz', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });
  app.get('/ready', (_req, res) => {
    reachable(gh.db).then((ready) => {
      if (ready) res.status(200).json({ status: 'ready' });
      else res.status(503).json({ status: 'unavailable', reason: 'database unreachable' });
    }, () => res.status(503).json({ status: 'unavailable', reason: 'database unreachable' }));
  });
  app.get('/metrics', (req, res, next) => {
    if (!metricsAllowed(gh.config.metricsToken, req.headers.authorization)) {
      // docs/security.md 10.14: with GATEHOUSE_METRICS_TOKEN set, only its bearer may read the metrics.
      res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').set('Cache-Control', 'no-store');
      res.json({ message: 'metrics need the metrics bearer token' }); // RFC 6750 §3.1: no error code without credentials
      return;
    }
    gh.metrics.registry.metrics().then((text) => res.type(gh.metrics.registry.contentType).send(text), next);
  });

  app.use((req: Request, res: Response) => {
    res.status(404).set('Cache-Control', 'no-store');
    // Under the API's REST prefixes a miss answers in the API's error shape (docs/errors.md#the-api),
    // elsewhere in OAuth's.
    if (API_PREFIXES.some((prefix) => req.path.startsWith(prefix))) res.json({ code: 5, message: 'no such API path', details: [] });
    else res.json({ error: 'not_found', error_description: 'no such endpoint' });
  });
  app.use(oauthErrorRenderer(gh.log));
  return app;
}
