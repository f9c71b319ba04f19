import type { Store } from '../../kernel/index.js';

type Row = Array<string | number | null>;

/**
 * Rows appended behind the response and written in multi-row inserts every `intervalMs` (and at
 * stop). A failed write keeps its rows for the next try; memory stays bounded if the database
 * stays away.
 */
export class Batch {
  private rows: Row[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly intervalMs: number,
    private readonly onError: (rows: number, err: unknown) => void,
    private readonly maxBuffered = 100_000,
  ) {}

  add(row: Row): void {
    if (this.rows.length >= this.maxBuffered) this.rows.shift();
    this.rows.push(row);
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeAll());
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, 200);
      const values = batch.map(() => `(${this.columns.map(() => '?').join(',')})`).join(',');
      try {
        await this.store.execute(`insert into ${this.table} (${this.columns.join(',')}) values ${values}`, batch.flat());
      } catch (err) {
        this.rows.unshift(...batch);
        this.onError(batch.length, err);
        this.timer ??= setTimeout(() => void this.flush(), this.intervalMs * 5);
        return;
      }
    }
  }
}
