/**
 * Route labels for metrics: known paths by name, the API's procedures by service and method,
 * everything else "other". A label is a metric series kept for the life of the process, so only
 * procedures the API has are named: any other path a client sends adds no series.
 */
import { API_SERVICES } from '../api/services.ts';

const PROCEDURES: ReadonlySet<string> = new Set(API_SERVICES.flatMap(({ service }) => service.methods.map((method) => `/${service.typeName}/${method.name}`)));

const KNOWN = new Set([
  '/.well-known/openid-configuration',
  '/oauth/v2/keys',
  '/oauth/v2/token',
  '/oauth/v2/introspect',
  '/oauth/v2/revoke',
  '/oauth/v2/authorize',
  '/oidc/v1/userinfo',
  '/oidc/v1/end_session',
  '/healthz',
  '/ready',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/idps/callback',
]);

export function routeLabel(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (KNOWN.has(path)) return path;
  if (path.startsWith('/zitadel.')) return PROCEDURES.has(path) ? path : 'other';
  if (path.startsWith('/auth/v1/') || path.startsWith('/v3alpha/') || path.startsWith('/v2/') || path.startsWith('/v2beta/')) return `rest:${path.split('/')[1]}`;
  if (path.startsWith('/management/v1/') || path.startsWith('/admin/v1/')) return `rest:${path.split('/')[1]}`;
  if (path.startsWith('/assets/v1/')) return '/assets';
  if (path.startsWith('/ui/')) return '/ui';
  if (path.startsWith('/docs/')) return '/docs';
  return 'other';
}
