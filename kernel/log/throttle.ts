/**
 * Reports a repeated failure at most once per interval, with how many times it happened: the
 * first occurrence at once (count 1), then one report per interval that saw more. An outage of a
 * minute writes a handful of lines, not one per failed attempt.
 *
 * @example
 * const flushFailed = new Throttled((count) => log.warn('tracing.flush_failed', { table, rows, count }), 10_000);
 * flushFailed.hit();
 */
export class Throttled {
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly report: (count: number) => void,
    private readonly intervalMs = 10_000,
  ) {}

  hit(n = 1): void {
    if (this.timer === undefined) {
      this.report(n);
      this.open();
    } else this.count += n;
  }

  private open(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.count === 0) return;
      const count = this.count;
      this.count = 0;
      this.report(count);
      this.open();
    }, this.intervalMs);
    this.timer.unref();
  }
}
