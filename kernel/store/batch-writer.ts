import { flatRows, sliceSizes } from './durable-writes.js';
import { valuesSql, type StatementParts } from './statement-texts.js';
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
  private queued: Promise<void> | undefined;
  /** Rows of the write under way: they count against the bound until written. */
  private inFlight = 0;
  /** `insert into table (columns)`: the statement's head (also its shape for valuesSql's memo), made once. */
  private readonly parts: StatementParts;

  constructor(
    private readonly store: Store,
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly intervalMs = 1000,
    private readonly maxRows = 500,
    private readonly maxBuffered = 100_000,
    private readonly onError: (rows: number, err: unknown) => void = () => {},
    /** Called for a row refused because `maxBuffered` rows already wait (the database is away). */
    private readonly onDrop: () => void = () => {},
  ) {
    this.parts = { head: `insert into ${table} (${columns.join(',')})`, width: columns.length, tail: '' };
  }

  get pending(): number {
    return this.rows.length;
  }

  /**
   * Buffers a row; false when `maxBuffered` rows already wait (the database is away): the new row
   * is dropped rather than an older one, so what was kept first is written first once it is back.
   */
  add(row: Row): boolean {
    if (this.rows.length + this.inFlight >= this.maxBuffered) {
      this.onDrop();
      return false;
    }
    this.rows.push(row);
    if (this.rows.length >= this.maxRows) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
    return true;
  }

  /** Writes everything buffered now; resolves when written (or kept for the next try). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One write queued behind the running one is enough (it takes every row): while the database
    // hangs, adds must not chain a new write each.
    if (this.queued) return this.queued;
    const next = this.writing.then(() => {
      this.queued = undefined;
      return this.writeAll();
    });
    this.queued = next;
    this.writing = next;
    return next;
  }

  /**
   * Up to 200 rows a round. On SQLite a round is written in slices of power-of-two sizes, so the
   * table has at most eight statement texts and the writer's prepared statements are reused; one
   * text per batch size (up to 200 per table) pushed hot statements out of its bounded cache. On
   * PostgreSQL a round is one statement (texts are not cached there). A failed slice puts back
   * the rows not yet written, to be retried in order.
   */
  private async writeAll(): Promise<void> {
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, 200);
      this.inFlight = batch.length;
      let written = 0;
      try {
        for (const size of sliceSizes(batch.length, this.store.dialect === 'sqlite')) {
          await this.store.writeBehind(this.insertSql(size), flatRows(batch, this.columns.length, written, size));
          written += size;
          this.inFlight = batch.length - written;
        }
      } catch (err) {
        this.inFlight = 0;
        const unwritten = batch.slice(written);
        this.rows.unshift(...unwritten);
        this.onError(unwritten.length, err);
        this.timer ??= setTimeout(() => void this.flush(), this.intervalMs * 5);
        return;
      }
      this.inFlight = 0;
    }
  }

  private insertSql(count: number): string {
    return valuesSql(this.parts.head, this.parts, count);
  }
}
