import type { Rows, WriteStatement } from './write-behind.js';

/**
 * Rows a settle hook stages for the request's durable commit. Writes of requests committed
 * together with the same table, columns and conflict clause become ONE multi-row insert.
 *
 * @example
 * rc.durable!.push({ kind: 'insert', table: 'usage_records', columns: ['id', 'cost'], rows: [[rc.id, 1200]] });
 */
export interface InsertRows {
  kind: 'insert';
  table: string;
  columns: readonly string[];
  rows: unknown[][];
  /** e.g. `on conflict (id) do update set state = excluded.state` (one key per row of a group). */
  onConflict?: string;
}

/** A running total before and after a group's commit (the difference is what the whole group added). */
export interface TotalAfter { key: string; before: number; after: number }

/**
 * A running-totals table: made ONCE by the plugin that owns it, and named by every write to it
 * (writes to the same object merge; its statement texts are memoized on it).
 */
export interface TotalsTable {
  table: string;
  keyColumn: string;
  valueColumn: string;
  /** Set to the write's `now` on every write (e.g. updated_at). */
  touchColumn?: string;
}

/**
 * `amount` added to each running total of `keys` in `into` (a total is created at the amount
 * when absent). Summed per key across the requests committed together: ONE upsert per table, so
 * a total shared by many requests is written once. Once committed, each distinct `onTotals`
 * function is called ONCE per group with every key staged with it (its `returning` keys): pass
 * the same function (and, when it repeats, the same `keys` array) from every request, and a group
 * of a hundred requests costs one call, not a hundred.
 */
export interface AddToTotals {
  kind: 'add';
  into: TotalsTable;
  now: number;
  keys: readonly string[];
  amount: number;
  onTotals?: (rows: TotalAfter[]) => void;
  /**
   * The keys whose totals `onTotals` is called with (of `keys`; all of them when absent). Only
   * these come back from the database: each returned total is a row sent, parsed and handed on,
   * and budgets reads four of its sixteen (the capped ones). The others are added without a
   * `returning` clause, in a statement of their own.
   */
  returning?: readonly string[];
}

/**
 * What runs once a group's writes are durable, once per group: `run` gets every staged
 * `AfterCommit` that names it, in the order staged. A request's step after its commit (budgets
 * moves its hold's cache counters) costs one call per group this way, not a promise chain and a
 * cache round trip per request. The group's requests count as settled when what `run` returns is over.
 */
export interface GroupStep<T extends AfterCommit = AfterCommit> {
  run(items: T[]): Promise<void> | void;
}

/** Not a write: an item for `step`, handed to it once the request's writes are durable (GroupStep). */
export interface AfterCommit {
  readonly kind: 'after';
  /** A step of the item's own type (a method's parameter takes it: the step reads the fields of the items it made). */
  readonly step: GroupStep;
}

export type DurableWrite = InsertRows | AddToTotals | AfterCommit;

/** Each step of `writes` with its items, in the order first staged; undefined when none stages one (no map made). */
export function afterSteps(writes: readonly DurableWrite[]): Map<GroupStep, AfterCommit[]> | undefined {
  let steps: Map<GroupStep, AfterCommit[]> | undefined;
  for (const w of writes) {
    if (w.kind !== 'after') continue;
    const items = (steps ??= new Map()).get(w.step);
    if (items) items.push(w);
    else steps.set(w.step, [w]);
  }
  return steps;
}

/** One statement of a group's transaction; `deliver` hands its returned rows to the writes it merged. */
export interface Planned extends WriteStatement {
  deliver?: (rows: Rows) => void;
}

/**
 * The lengths of the slices `count` rows are written in: with `fixedTexts` (SQLite) powers of two,
 * the binary decomposition of the count (37 → 32, 4, 1), so a table's statements have at most a
 * handful of distinct texts whatever the group size and SQLite's cached prepared statements are
 * reused instead of compiling a new one per group; otherwise (PostgreSQL, where each statement is a
 * round trip and texts are not cached) one slice.
 */
export function sliceSizes(count: number, fixedTexts: boolean): number[] {
  return fixedTexts ? powerOfTwoSizes(count) : [count];
}

/** The power-of-two slice lengths of `count` rows (37 → 32, 4, 1). */
export function powerOfTwoSizes(count: number): number[] {
  // Made at its length, the count's set bits (grown from empty, a list gets room for sixteen).
  let bits = 0;
  for (let left = count; left > 0; left &= left - 1) bits++;
  const sizes = new Array<number>(bits);
  let at = 0;
  for (let size = 1 << 30, left = count; left > 0; size >>= 1) {
    if (left < size) continue;
    sizes[at++] = size;
    left -= size;
  }
  return sizes;
}

/**
 * `count` rows of `rows` from `from` (all of them by default), `width` values each, as one
 * parameter list in one array of its final length (`flat` grew it; slicing the rows first copied them).
 */
export function flatRows(rows: readonly unknown[][], width: number, from = 0, count = rows.length - from): unknown[] {
  // One row of the right width is its own parameter list (a request's usage record, its hold).
  if (count === 1 && rows[from]!.length === width) return rows[from]!;
  const params = new Array<unknown>(count * width);
  let at = 0;
  for (let r = from; r < from + count; r++) {
    const row = rows[r]!;
    for (let i = 0; i < width; i++) params[at++] = row[i];
  }
  return params;
}
