import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const NAMES = { requests: 'gatehouse_http_requests_total', latency: 'gatehouse_http_request_duration_seconds' };

/** prom-client's own counter and histogram, as the server used them per request before. */
function reference(registry: Registry<RegistryContentType>) {
  const requests = new Counter({ name: NAMES.requests, help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({ name: NAMES.latency, help: 'HTTP request latency by route', labelNames: ['route'], buckets: BOUNDS, registers: [registry] });
  return (route: string, method: string, status: number, seconds: number) => {
    requests.inc({ route, method, status: String(status) });
    latency.observe({ route }, seconds);
  };
}

const OBSERVED: [string, string, number, number][] = [
  ['/oauth/v2/keys', 'GET', 200, 0.0004],
  ['/oauth/v2/keys', 'GET', 200, 0.005], // on a bound: counted in that bucket
  ['/oauth/v2/token', 'POST', 400, 0.02],
  ['other', 'GET', 404, 3], // above every bound: +Inf only
  ['/oauth/v2/keys', 'HEAD', 200, 0.001],
  ['/oauth/v2/keys', 'GET', 200, 0],
];

describe('request metrics', () => {
  it.each([Registry.PROMETHEUS_CONTENT_TYPE, Registry.OPENMETRICS_CONTENT_TYPE])('expose exactly what prom-client exposes (%s)', async (contentType) => {
    const expected = new Registry<RegistryContentType>();
    const actual = new Registry<RegistryContentType>();
    expected.setContentType(contentType);
    actual.setContentType(contentType);
    const record = reference(expected);
    const metrics = new RequestMetrics(actual, NAMES, BOUNDS);
    for (const [route, method, status, seconds] of OBSERVED) {
      record(route, method, status, seconds);
      metrics.record(route, method, status, seconds);
    }
    const text = await actual.metrics();
    expect(text).toBe(await expected.metrics());
    expect(text).toContain('route="/oauth/v2/keys",method="GET",status="200"} 3');
    expect(text).toContain('gatehouse_http_request_duration_seconds_bucket{le="0.005",route="/oauth/v2/keys"} 4');
  });

  it('give the same JSON as prom-client, every label in `labels`, and reset with the registry', async () => {
    const expected = new Registry();
    const actual = new Registry();
    const record = reference(expected);
    const metrics = new RequestMetrics(actual, NAMES, BOUNDS);
    for (const [route, method, status, seconds] of OBSERVED) {
      record(route, method, status, seconds);
      metrics.record(route, method, status, seconds);
    }
    metrics.record('/oauth/v2/keys', 'GET', 200, Number.NaN); // refused, as prom-client's observe refuses it
    expect(await actual.getMetricsAsJSON()).toEqual(await expected.getMetricsAsJSON());
    expected.resetMetrics();
    actual.resetMetrics();
    expect(await actual.metrics()).toBe(await expected.metrics());
  });

  it('exposes both metrics with no values before the first request, as prom-client does', async () => {
    const expected = new Registry();
    const actual = new Registry();
    reference(expected);
    new RequestMetrics(actual, NAMES, BOUNDS);
    expect(await actual.metrics()).toBe(await expected.metrics());
  });
});
