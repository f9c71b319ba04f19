import type { Store } from './orm.js';

export type Row = Array<string | number | null>;

/**
 * Appends rows to a table behind the response: buffered, written in multi-row inserts every
 * `intervalMs` or when `maxRows` are waiting, and flushed completely at stop. A failed write is
 * kept and retried (bounded), so a database blip loses nothing.
 *
 * @example
 * const usage = new BatchWriter(store, 'usage_records', ['id', 'cost_micro_usd'], 1000);
 * usage.add(['req_1', 3500]);   // returns at once
 * await usage.flush();          // at stop
 */
export class BatchWriter {
  private rows: Row[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly intervalMs = 1000,
    private readonly maxRows = 500,
    private readonly maxBuffered = 100_000,
    private readonly onError: (rows: number, err: unknown) => void = () => {},
  ) {}

  get pending(): number {
    return this.rows.length;
  }

  add(row: Row): void {
    if (this.rows.length >= this.maxBuffered) this.rows.shift(); // bounded memory if the database stays down
    this.rows.push(row);
    if (this.rows.length >= this.maxRows) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Writes everything buffered now; resolves when written (or kept for the next try). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeAll());
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, 200);
      const placeholders = batch.map(() => `(${this.columns.map(() => '?').join(',')})`).join(',');
      try {
        await this.store.writeBehind(`insert into ${this.table} (${this.columns.join(',')}) values ${placeholders}`, batch.flat());
      } catch (err) {
        this.rows.unshift(...batch);
        this.onError(batch.length, err);
        this.timer ??= setTimeout(() => void this.flush(), this.intervalMs * 5);
        return;
      }
    }
  }
}
