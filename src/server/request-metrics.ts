/**
 * The two per-request metrics (requests by route, method and status; latency by route), counted in
 * plain arrays and handed to the prom-client registry only when /metrics is scraped.
 *
 * prom-client's Counter.inc and Histogram.observe validate the label names and build a hash string of
 * the sorted labels on every call: about 3% of a key set or discovery request's CPU, which is spent on
 * every request to count it, where a scrape comes every few seconds at most. The registry formats
 * what `get()` returns, so the exposition is the same as prom-client's own counter and histogram.
 */
import type { Registry, RegistryContentType } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  count: number;
}

interface Latency {
  route: string;
  /** Observations per bucket (not cumulative), one more than the bounds for +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

/** What the registry asks a metric for (prom-client's `MetricObjectWithValues`). */
interface MetricObject {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: MetricValue[];
}

interface MetricMeta {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  get(): Promise<MetricObject>;
}

export class RequestMetrics {
  readonly #bounds: readonly number[];
  readonly #requests = new Map<string, Series>();
  readonly #latency = new Map<string, Latency>();

  constructor(registry: Registry<RegistryContentType>, names: { requests: string; latency: string }, bounds: readonly number[]) {
    this.#bounds = bounds;
    // The registry takes any object with a name, a help text, a type and get(), as prom-client's own
    // metrics are; get() reads the name from the object, which the registry renames for OpenMetrics.
    const requests: MetricMeta = { name: names.requests, help: 'HTTP requests by route, method and status', type: 'counter', get: async () => this.#requestsObject(requests) };
    const latency: MetricMeta = { name: names.latency, help: 'HTTP request latency by route', type: 'histogram', get: async () => this.#latencyObject(latency) };
    registry.registerMetric(requests as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
    registry.registerMetric(latency as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
  }

  /** Counts one answered request and its latency in seconds. */
  record(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    const series = this.#requests.get(key);
    if (series) series.count += 1;
    else this.#requests.set(key, { labels: { route, method, status: String(status) }, count: 1 });

    let latency = this.#latency.get(route);
    if (!latency) this.#latency.set(route, (latency = { route, buckets: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 }));
    let bucket = 0;
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]!) bucket += 1;
    latency.buckets[bucket]! += 1;
    latency.sum += seconds;
    latency.count += 1;
  }

  #requestsObject(meta: MetricMeta): MetricObject {
    const values = [...this.#requests.values()].map((series) => ({ labels: series.labels, value: series.count }));
    return { name: meta.name, help: meta.help, type: meta.type, aggregator: 'sum', values };
  }

  #latencyObject(meta: MetricMeta): MetricObject {
    const values: MetricValue[] = [];
    for (const latency of this.#latency.values()) {
      const sharedLabels = { route: latency.route };
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += latency.buckets[i]!;
        values.push({ labels: { le }, sharedLabels, value: cumulative, metricName: `${meta.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels, value: latency.count, metricName: `${meta.name}_bucket` });
      values.push({ labels: {}, sharedLabels, value: latency.sum, metricName: `${meta.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: latency.count, metricName: `${meta.name}_count` });
    }
    return { name: meta.name, help: meta.help, type: meta.type, aggregator: 'sum', values };
  }
}
