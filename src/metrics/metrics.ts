/** Prometheus metrics (/metrics): requests by route and status, latency, tokens issued. */
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';

export interface Metrics {
  registry: Registry;
  /** gatehouse_http_requests_total and gatehouse_http_request_duration_seconds. */
  http: RequestMetrics;
  tokensIssued: Counter<'grant' | 'type'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  return {
    registry,
    http: new RequestMetrics(
      registry,
      { requests: 'gatehouse_http_requests_total', latency: 'gatehouse_http_request_duration_seconds' },
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
    tokensIssued: new Counter({
      name: 'gatehouse_tokens_issued_total',
      help: 'Access tokens issued by grant and token type',
      labelNames: ['grant', 'type'],
      registers: [registry],
    }),
  };
}
