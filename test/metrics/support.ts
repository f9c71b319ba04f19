import * as assert from 'uvu/assert';
import parsePrometheusTextFormat, { type Family, type Sample } from 'parse-prometheus-text-format';
import { budgetPlugins } from '../budgets/support.js';

export const scrapeToken = 'metrics-scrape-token-0123456789';

/** The plugins of a metrics test: the model API with budgets and rate limit, routing (no classifier model), metrics. */
export function metricsPlugins(rateLimitRequests = 100_000): Record<string, unknown> {
  const base = budgetPlugins({}, { requests: rateLimitRequests });
  return {
    ...base,
    routing: { config: { classifier: { enabled: false } } },
    // One retry; a cool-down after two transient failures in a row (the route test's).
    'chat-api': { config: { upstream: { retries: 1, backoffMs: 10, cooldownFailures: 2 } } },
    metrics: {},
  };
}

export interface Scraped { status: number; headers: Headers; text: string; families: Map<string, Family>; histograms: Map<string, Family> }

/**
 * GET a metrics URL; parsed with a Prometheus text-format parser when 200. `histograms` is a
 * second reading with each histogram typed `untyped`: the parser folds the series of a labelled
 * histogram into one (it keeps labels only for counters and gauges), so its `_bucket`, `_sum` and
 * `_count` samples are read as families of their own, labels kept.
 */
export async function scrape(url: string, token?: string): Promise<Scraped> {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  const families = new Map<string, Family>();
  const histograms = new Map<string, Family>();
  if (res.status === 200) {
    for (const f of parsePrometheusTextFormat(text)) families.set(f.name, f);
    // Each series' _bucket, _sum and _count lines come back as families of their own: merged by name.
    for (const f of parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
      const seen = histograms.get(f.name);
      if (seen) seen.metrics.push(...f.metrics);
      else histograms.set(f.name, f);
    }
  }
  return { status: res.status, headers: res.headers, text, families, histograms };
}

const matches = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => (s.labels?.[k] ?? '') === v);

/** The sum of a counter's or gauge's samples whose labels include `labels`. */
export function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const f = families.get(name);
  assert.ok(f, `${name} is exposed`);
  return f!.metrics.filter((s) => matches(s, labels)).reduce((n, s) => n + Number(s.value), 0);
}

/** A histogram's count over the series whose labels include `labels`; its +Inf bucket must agree. */
export function histogramCount(r: Scraped, name: string, labels: Record<string, string> = {}): number {
  assert.is(r.families.get(name)?.type, 'HISTOGRAM', `${name} is a histogram`);
  const count = value(r.histograms, `${name}_count`, labels);
  assert.is(value(r.histograms, `${name}_bucket`, { ...labels, le: '+Inf' }), count, `${name}: +Inf bucket = count`);
  return count;
}
