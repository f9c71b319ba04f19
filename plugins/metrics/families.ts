import type { Metric, Registry } from 'prom-client';

/**
 * Counter and histogram families whose hot path allocates nothing: a series is found through one
 * Map per label (no label-hash string per observation, as prom-client's own `inc({...})` makes),
 * and is a few numbers updated in place. prom-client renders them at scrape time (its Registry
 * and text format), so only the bookkeeping is ours.
 */

/** Past this many series a family folds new label sets into one `_other` series (a guard, not a plan). */
export const maxSeries = 2000;
const other = '_other';

interface Series { labels: Record<string, string>; value: number; buckets?: Float64Array; sum: number }

type Level = Map<string, Level | Series>;

/** One metric family: its series by label values, in the order of `labelNames`. */
abstract class Family {
  private readonly root: Level = new Map();
  /** The one series of a family without labels. */
  private only: Series | undefined;
  protected readonly all: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /**
   * The series of these label values (fixed arity, so no array is made per call); created on
   * first use. Values beyond the family's labels are ignored.
   */
  protected at(a = '', b = '', c = '', d = '', e = ''): Series {
    const n = this.labelNames.length;
    if (n === 0) return (this.only ??= this.create('', '', '', '', ''));
    let level = this.root;
    for (let i = 0; i < n; i++) {
      const v = i === 0 ? a : i === 1 ? b : i === 2 ? c : i === 3 ? d : e;
      const next = level.get(v);
      if (next === undefined) return this.create(a, b, c, d, e);
      if (i === n - 1) return next as Series;
      level = next as Level;
    }
    return this.create(a, b, c, d, e);
  }

  private create(a: string, b: string, c: string, d: string, e: string): Series {
    const values = [a, b, c, d, e].slice(0, this.labelNames.length);
    if (this.all.length >= maxSeries) values.fill(other);
    let level = this.root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Level | undefined;
      if (!next) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    const last = values[values.length - 1] ?? '';
    const found = level.get(last) as Series | undefined;
    if (found) return found;
    const s: Series = { labels: Object.fromEntries(this.labelNames.map((l, i) => [l, values[i]!])), value: 0, sum: 0 };
    this.prepare(s);
    level.set(last, s);
    this.all.push(s);
    return s;
  }

  protected prepare(_s: Series): void {}

  /** The family as prom-client's Registry reads a metric (`get()`), rendered by its text format. */
  abstract get(): Promise<{ name: string; help: string; type: string; values: unknown[]; aggregator: 'sum' }>;

  register(registry: Registry): void {
    // A Metric is "anything with name, help, type and get()" to the Registry; the class is for typing only.
    registry.registerMetric(this as unknown as Metric);
  }
}

/** A monotonic counter (name ends in `_total`). */
export class CounterFamily extends Family {
  readonly type = 'counter';

  inc(amount: number, a?: string, b?: string, c?: string, d?: string, e?: string): void {
    this.at(a, b, c, d, e).value += amount;
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values: this.all.map((s) => ({ labels: s.labels, value: s.value })) };
  }
}

/** A histogram with fixed upper bounds (seconds); `+Inf` is the count. */
export class HistogramFamily extends Family {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[], readonly bounds: readonly number[]) {
    super(name, help, labelNames);
  }

  protected override prepare(s: Series): void {
    s.buckets = new Float64Array(this.bounds.length);
  }

  observe(value: number, a?: string, b?: string, c?: string, d?: string, e?: string): void {
    const s = this.at(a, b, c, d, e);
    s.value++;
    s.sum += value;
    // Non-cumulative here (one increment); made cumulative when rendered.
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        s.buckets![i]!++;
        break;
      }
    }
  }

  async get() {
    const values: unknown[] = [];
    for (const s of this.all) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += s.buckets![i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: this.bounds[i] }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.value });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.value });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values };
  }
}

/**
 * A family read from the service's own figures at scrape time (dependency state, commit counts,
 * holds in flight): nothing is kept, nothing runs between scrapes.
 */
export class ScrapedFamily extends Family {
  constructor(
    name: string,
    help: string,
    readonly type: 'counter' | 'gauge',
    private readonly read: () => Array<{ labels?: Record<string, string>; value: number }>,
  ) {
    super(name, help, []);
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values: this.read().map((v) => ({ labels: v.labels ?? {}, value: v.value })) };
  }
}
