import type { AddToTotals, Logger, Principal, Store, TotalAfter, TotalsTable } from '../../kernel/index.js';
import { capScopeId, cappedTotalKeys, chargedTotalKeys, totalKey, type Cap } from './caps.js';

/** A running total that crossed upward in a flush: its key, the amount before and after. */
export interface Written { key: string; before: number; after: number }

const upsertTail =
  ' on conflict (total_key) do update set total_micro_usd = budget_totals.total_micro_usd + excluded.total_micro_usd, updated_at = excluded.updated_at' +
  ' returning total_key, total_micro_usd';

/** The running totals of charges (one object: the group commit merges the writes that name it). */
const budgetTotals: TotalsTable = { table: 'budget_totals', keyColumn: 'total_key', valueColumn: 'total_micro_usd', touchColumn: 'updated_at' };

const errorCode = (err: unknown): string => String((err as { code?: string }).code ?? 'error');

/**
 * The durable running totals (table budget_totals). Charges are added to every scope and period of
 * the request (so a cap created mid-period sees the period's spend), batched behind the response.
 * The totals of capped scopes are kept in memory, refreshed every few seconds, so seeding a cache
 * counter never needs a database call. The refresh also tells whether the database answers.
 */
export class Totals {
  private known = new Map<string, number>();
  private pending = new Map<string, number>();
  /** Charges taken out of `pending` by a write that has not answered yet. */
  private writingNow = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private refresher: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** True while the database did not answer the last refresh or write. */
  down = false;
  /** Called with the totals a flush wrote (alerts look for thresholds crossed). */
  onWritten: (rows: Written[]) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly caps: () => Cap[],
    private readonly flushMs: number,
    private readonly refreshMs: number,
  ) {}

  /** The settled total known here (0 when none was recorded). */
  value = (key: string): number => this.known.get(key) ?? 0;

  start(): void {
    this.refresher = setInterval(() => void this.refresh().catch(() => {}), this.refreshMs);
    this.refresher.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.refresher);
    await this.flush();
  }

  /** Adds a settled charge to every total of the request. */
  add(p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>, charge: number, t: number): void {
    if (charge <= 0) return;
    for (const key of chargedTotalKeys(p, t)) {
      this.pending.set(key, (this.pending.get(key) ?? 0) + charge);
      this.known.set(key, this.value(key) + charge);
    }
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /**
   * The running-total upsert of a settled charge, for the request's durable commit (with its usage
   * record, before any counter moves). Once committed, the totals it returns are known here and
   * passed to `onWritten` (alerts).
   */
  stage(p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>, charge: number, t: number): AddToTotals {
    const keys = chargedTotalKeys(p, t);
    return {
      kind: 'add',
      into: budgetTotals,
      now: t,
      keys,
      amount: charge,
      onTotals: this.committed,
      // Only capped totals come back: alerts look at no others, and only they are kept in memory.
      returning: cappedTotalKeys(this.caps(), keys),
    };
  }

  /** Once per committed group (one function for every request, so the group commit calls it once). */
  private readonly committed = (rows: TotalAfter[]): void => {
    // Never lower what is known: a refresh may already have seen this charge.
    for (const r of rows) this.known.set(r.key, Math.max(this.value(r.key), r.after));
    this.onWritten(rows);
  };

  /** Reloads the current period's totals of every capped scope (plus charges not yet written). */
  async refresh(t = Date.now()): Promise<void> {
    const keys = [...new Set(this.caps().map((c) => totalKey(c.scope, capScopeId(c), c.period, t)))];
    const next = await this.read(keys);
    for (const [k, v] of this.unwritten()) next.set(k, (next.get(k) ?? 0) + v);
    // Totals only grow: a read that raced a commit this process just made must not lower them.
    for (const [k, v] of next) next.set(k, Math.max(v, this.known.get(k) ?? 0));
    this.known = next;
  }

  /**
   * The totals of `keys` read from the database now, plus this process's charges not yet written
   * (for seeding a counter the cache lost: seeds.ts). A write racing the read may count twice,
   * never zero times. Rejects when the database does not answer.
   */
  async fresh(keys: string[]): Promise<Map<string, number>> {
    const read = await this.read(keys);
    const unwritten = this.unwritten();
    const out = new Map<string, number>();
    for (const k of keys) {
      const v = (read.get(k) ?? 0) + (unwritten.get(k) ?? 0);
      out.set(k, v);
      this.known.set(k, Math.max(v, this.value(k)));
    }
    return out;
  }

  private unwritten(): Map<string, number> {
    const out = new Map(this.pending);
    for (const [k, v] of this.writingNow) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  }

  private async read(keys: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    try {
      for (let i = 0; i < keys.length || i === 0; i += 500) {
        const chunk = keys.slice(i, i + 500);
        const sql = chunk.length
          ? `select total_key, total_micro_usd from budget_totals where total_key in (${chunk.map(() => '?').join(',')})`
          : 'select 1 as total_key, 0 as total_micro_usd where 1 = 0';
        for (const r of await this.store.execute<{ total_key: string; total_micro_usd: string | number }>(sql, chunk)) {
          out.set(r.total_key, Number(r.total_micro_usd));
        }
      }
    } catch (err) {
      this.health(err);
      throw err;
    }
    this.health(null);
    return out;
  }

  /** Writes pending charges now; resolves when written (or kept for the next try). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeAll());
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    this.writingNow = new Map(batch);
    const now = Date.now();
    const written: Written[] = [];
    while (batch.length > 0) {
      const part = batch.slice(0, 200);
      const sql = `insert into budget_totals (total_key, total_micro_usd, updated_at) values ${part.map(() => '(?,?,?)').join(',')}${upsertTail}`;
      try {
        const rows = await this.store.execute<{ total_key: string; total_micro_usd: string | number }>(sql, part.flatMap(([k, v]) => [k, v, now]));
        const delta = new Map(part);
        for (const r of rows) {
          const after = Number(r.total_micro_usd);
          written.push({ key: r.total_key, before: after - (delta.get(r.total_key) ?? 0), after });
        }
        batch.splice(0, part.length);
      } catch (err) {
        // Keep what was not written for the next try (a statement is all or nothing).
        for (const [k, v] of batch) this.pending.set(k, (this.pending.get(k) ?? 0) + v);
        this.health(err);
        this.timer ??= setTimeout(() => void this.flush(), this.flushMs * 5);
        break;
      }
    }
    this.writingNow = new Map();
    if (batch.length === 0) this.health(null);
    if (written.length > 0) this.onWritten(written);
  }

  private health(err: unknown): void {
    if (err && !this.down) this.log.warn('budget.database_down', { error_code: errorCode(err) });
    if (!err && this.down) this.log.info('budget.database_up', {});
    this.down = err !== null;
  }
}
