/**
 * CORS for browser apps (docs/decisions.md#cors: SPAs use the token endpoint with PKCE, then gRPC-web
 * or REST with the access token). An origin is allowed when it is the origin of a redirect or
 * post-logout URI registered by an application of this instance (how node-oidc-provider and ZITADEL
 * scope it), or our own. No credentials: browser apps send tokens in headers, never our cookies.
 */
import type http from 'node:http';
import { httpOrigin } from '../domain/kernel/origin.ts';
import { listAppRedirectUris } from '../store/apps.ts';
import type { DB } from '../store/database.ts';

const ALLOW_HEADERS = [
  'authorization', 'content-type', 'accept', 'x-request-id',
  'connect-protocol-version', 'connect-timeout-ms', 'connect-accept-encoding', 'connect-content-encoding',
  'grpc-timeout', 'x-grpc-web', 'x-user-agent',
  // ZITADEL's header naming the organization of a management call and of an asset upload
  // (docs/branding-and-login-policy.md#who-may-call-them), which its console sends from the browser.
  'x-zitadel-orgid',
].join(', ');
const EXPOSE_HEADERS = ['grpc-status', 'grpc-message', 'grpc-status-details-bin', 'x-request-id', 'www-authenticate', 'retry-after'].join(', ');
// PATCH: the management API's UpdateApplication (PATCH /v2beta/applications/{id}).
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';

export interface Cors {
  /** Answers a preflight (true), or adds the headers for an allowed cross-origin request (false). */
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean>;
  /** Forget the allowed origins (applications changed). */
  clear(): void;
}

export function createCors(db: DB, instanceId: string, externalUrl: string): Cors {
  let allowed: Promise<Set<string>> | undefined;
  const own = httpOrigin(externalUrl);

  const load = async (): Promise<Set<string>> => {
    const rows = await listAppRedirectUris(db, instanceId);
    const origins = new Set<string>(own ? [own] : []);
    for (const row of rows) for (const uri of [...row.redirect_uris, ...row.post_logout_redirect_uris]) {
      const origin = httpOrigin(uri);
      if (origin) origins.add(origin);
    }
    return origins;
  };

  return {
    clear() {
      allowed = undefined;
    },
    async handle(req, res) {
      const origin = req.headers.origin;
      if (origin === undefined) return false;
      allowed ??= load().catch((error: unknown) => {
        allowed = undefined;
        throw error;
      });
      const permitted = (await allowed).has(origin);
      const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (permitted) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Vary', 'Origin');
        if (!preflight) res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      }
      if (!preflight) return false;
      // A refused preflight is answered without CORS headers: the browser then blocks the request.
      if (permitted) {
        res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
        res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.statusCode = 204;
      res.end();
      return true;
    },
  };
}
