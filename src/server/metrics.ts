/** Prometheus metrics (/metrics): requests by route and status, latency, tokens issued. */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  latency: Histogram<'route'>;
  tokensIssued: Counter<'grant' | 'type'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  return {
    registry,
    requests: new Counter({
      name: 'gatehouse_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: 'gatehouse_tokens_issued_total',
      help: 'Access tokens issued by grant and token type',
      labelNames: ['grant', 'type'],
      registers: [registry],
    }),
  };
}
