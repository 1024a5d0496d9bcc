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
  /** prom-client's histogram buckets carry one (null without exemplars) in JSON. */
  exemplar?: null;
}

/** What the registry asks a metric for (prom-client's `MetricObjectWithValues`). */
interface MetricObject {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: MetricValue[];
}

/**
 * What the registry calls: `getForPromString()` for the text formats (a histogram's route as a shared
 * label, so that `le` comes first), `get()` for JSON (every label in `labels`), `reset()` from
 * `resetMetrics()`. prom-client's own metrics have the same methods.
 */
interface MetricMeta {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  get(): Promise<MetricObject>;
  getForPromString(): Promise<MetricObject>;
  reset(): void;
}

export class RequestMetrics {
  readonly #bounds: readonly number[];
  readonly #requests = new Map<string, Series>();
  readonly #latency = new Map<string, Latency>();

  constructor(registry: Registry<RegistryContentType>, names: { requests: string; latency: string }, bounds: readonly number[]) {
    this.#bounds = bounds;
    // Registered like prom-client's own metrics; the methods read the name from the object, which the
    // registry renames for OpenMetrics.
    const requests: MetricMeta = {
      name: names.requests,
      help: 'HTTP requests by route, method and status',
      type: 'counter',
      get: async () => this.#requestsObject(requests),
      getForPromString: async () => this.#requestsObject(requests),
      reset: () => this.#requests.clear(),
    };
    const latency: MetricMeta = {
      name: names.latency,
      help: 'HTTP request latency by route',
      type: 'histogram',
      get: async () => this.#latencyObject(latency, false),
      getForPromString: async () => this.#latencyObject(latency, true),
      reset: () => this.#latency.clear(),
    };
    registry.registerMetric(requests as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
    registry.registerMetric(latency as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
  }

  /** Counts one answered request and its latency in seconds. */
  record(route: string, method: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) return; // prom-client refuses such a value too
    const key = `${route}\0${method}\0${status}`;
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

  #latencyObject(meta: MetricMeta, shared: boolean): MetricObject {
    const values: MetricValue[] = [];
    for (const latency of this.#latency.values()) {
      const route = { route: latency.route };
      const value = (labels: Record<string, string | number>, number: number, suffix: string): MetricValue =>
        shared
          ? { labels, sharedLabels: route, value: number, metricName: `${meta.name}${suffix}` }
          : { labels: { ...labels, ...route }, value: number, metricName: `${meta.name}${suffix}`, ...(suffix === '_bucket' ? { exemplar: null } : {}) };
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += latency.buckets[i]!;
        values.push(value({ le }, cumulative, '_bucket'));
      });
      values.push(value({ le: '+Inf' }, latency.count, '_bucket'), value({}, latency.sum, '_sum'), value({}, latency.count, '_count'));
    }
    return { name: meta.name, help: meta.help, type: meta.type, aggregator: 'sum', values };
  }
}
