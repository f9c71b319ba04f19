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
 * function is called ONCE per group with every key staged with it (its `returning` keys): pass the same function (and,
 * when it repeats, the same `keys` array) from every request, and a group of a hundred requests
 * costs one call, not a hundred.
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
 * A hook's rows: each key staged with it (in the order first staged) that the commit returned.
 * One key list (every request of the group staged the same list, as budgets does) needs no set
 * to merge lists: a key repeated within it is skipped by its first index.
 */
function totalsOf(lists: Set<readonly string[]>, sums: Map<string, number>, after: Map<string, number>): TotalAfter[] {
  const rows: TotalAfter[] = [];
  const add = (k: string): void => {
    const a = after.get(k);
    if (a !== undefined) rows.push({ key: k, before: a - sums.get(k)!, after: a });
  };
  if (lists.size === 1) {
    for (const list of lists) for (let i = 0; i < list.length; i++) if (list.indexOf(list[i]!) === i) add(list[i]!);
  } else {
    const keys = new Set<string>();
    for (const list of lists) for (const k of list) keys.add(k);
    for (const k of keys) add(k);
  }
  return rows;
}

/** Column lists joined once per list (callers stage the same constant array on every request). */
const joined = new WeakMap<readonly string[], string>();
function join(columns: readonly string[]): string {
  let j = joined.get(columns);
  if (j === undefined) joined.set(columns, (j = columns.join(',')));
  return j;
}

/**
 * `head values (?,…),(?,…)… tail` for `count` rows, memoized by the statement's shape (`shape`,
 * the same string object on every call, identifies head and tail) and the row count: a bounded set
 * of texts on SQLite, and no long key built per group.
 */
const texts = new Map<string, Map<number, string>>();
export function valuesSql(shape: string, statement: StatementParts, count: number): string {
  let byCount = texts.get(shape);
  if (!byCount) {
    if (texts.size >= 200) texts.clear();
    texts.set(shape, (byCount = new Map()));
  }
  let sql = byCount.get(count);
  if (sql === undefined) {
    const { head, width, tail } = statement;
    const one = `(${new Array<string>(width).fill('?').join(',')})`;
    sql = `${head} values ${new Array<string>(count).fill(one).join(',')}${tail}`;
    if (byCount.size >= 256) byCount.clear();
    byCount.set(count, sql);
  }
  return sql;
}

/** A statement's text around its `values` rows, and how many values a row has. */
export interface StatementParts {
  head: string;
  width: number;
  tail: string;
}

/** An insert's parts, made once per statement shape (the same few shapes on every request). */
const insertParts = new Map<string, StatementParts>();
function insertPartsOf(shape: string, w: InsertRows): StatementParts {
  let parts = insertParts.get(shape);
  if (parts === undefined) {
    if (insertParts.size >= 200) insertParts.clear();
    parts = { head: `insert into ${w.table} (${join(w.columns)})`, width: w.columns.length, tail: w.onConflict ? ` ${w.onConflict}` : '' };
    insertParts.set(shape, parts);
  }
  return parts;
}

type AddParts = StatementParts & { shape: string };

/**
 * An upsert's parts (add to running totals) and its shape, returning the totals or not, made once
 * per table object.
 */
const addParts = new WeakMap<TotalsTable, { returning: AddParts; quiet: AddParts }>();
function addPartsOf(t: TotalsTable, returning: boolean): AddParts {
  let parts = addParts.get(t);
  if (parts === undefined) {
    const cols = t.touchColumn ? [t.keyColumn, t.valueColumn, t.touchColumn] : [t.keyColumn, t.valueColumn];
    const touch = t.touchColumn ? `, ${t.touchColumn} = excluded.${t.touchColumn}` : '';
    const head = `insert into ${t.table} (${cols.join(',')})`;
    const upsert = ` on conflict (${t.keyColumn}) do update set ${t.valueColumn} = ${t.table}.${t.valueColumn} + excluded.${t.valueColumn}${touch}`;
    const shape = `+${t.table}|${cols.join(',')}`;
    parts = {
      returning: { shape: `${shape}|returning`, head, width: cols.length, tail: `${upsert} returning ${t.keyColumn} as k, ${t.valueColumn} as v` },
      quiet: { shape, head, width: cols.length, tail: upsert },
    };
    addParts.set(t, parts);
  }
  return returning ? parts.returning : parts.quiet;
}

/**
 * Whether a hook wants `key` back: is it in any list staged with a hook (one list, as budgets
 * stages, is searched as it is; several are merged into a set once).
 */
function wantedBy(hooks: Map<unknown, Set<readonly string[]>>): (key: string) => boolean {
  let only: readonly string[] | undefined;
  let lists = 0;
  for (const set of hooks.values()) for (const list of set) (only = list), lists++;
  if (lists === 0) return () => false;
  if (lists === 1) return (key) => only!.includes(key);
  const all = new Set<string>();
  for (const set of hooks.values()) for (const list of set) for (const k of list) all.add(k);
  return (key) => all.has(key);
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

/**
 * The parameter lists of the slices (`sizes`) of the totals in `sums` whose `wanted(key)` is
 * `returned`, filled straight from the sums: no [key, sum] pair per total.
 */
function fillSums(sums: Map<string, number>, wanted: (key: string) => boolean, returned: boolean, sizes: number[], width: number, into: TotalsTable, now: number): unknown[][] {
  const lists = sizes.map((size) => new Array<unknown>(size * width));
  let slice = 0;
  let at = 0;
  sums.forEach((v, k) => {
    if (wanted(k) !== returned) return;
    const params = lists[slice]!;
    params[at] = k;
    params[at + 1] = v;
    if (into.touchColumn) params[at + 2] = now;
    at += width;
    if (at === params.length) (slice++, (at = 0));
  });
  return lists;
}

/**
 * An insert's shape (table, columns, conflict clause) as one string, made once per column list,
 * table and clause: looked up without building a key (a joined key was a new string per write).
 */
const insertShapes = new WeakMap<readonly string[], Map<string, Map<string, string>>>();
function insertShape(w: InsertRows): string {
  let byTable = insertShapes.get(w.columns);
  if (!byTable) insertShapes.set(w.columns, (byTable = new Map()));
  let byClause = byTable.get(w.table);
  if (!byClause) byTable.set(w.table, (byClause = new Map()));
  const clause = w.onConflict ?? '';
  let shape = byClause.get(clause);
  if (shape === undefined) byClause.set(clause, (shape = `${w.table}|${join(w.columns)}|${clause}`));
  return shape;
}

/**
 * The statements that commit `writes` (in order: inserts as first staged, then totals), each
 * table's rows cut by `sliceSizes`.
 */
export function plan(writes: DurableWrite[], fixedTexts = false): Planned[] {
  const inserts = new Map<string, { w: InsertRows; rows: unknown[][] }>();
  // Per table: the sums by key, and each hook with the key lists staged with it (by identity).
  const adds = new Map<TotalsTable, { w: AddToTotals; sums: Map<string, number>; hooks: Map<NonNullable<AddToTotals['onTotals']>, Set<readonly string[]>> }>();
  for (const w of writes) {
    if (w.kind === 'insert') {
      const id = insertShape(w);
      const seen = inserts.get(id);
      if (seen) for (const r of w.rows) seen.rows.push(r);
      else inserts.set(id, { w, rows: w.rows.slice() });
    } else if (w.kind === 'add') {
      let seen = adds.get(w.into);
      if (!seen) adds.set(w.into, (seen = { w, sums: new Map<string, number>(), hooks: new Map() }));
      for (const k of w.keys) seen.sums.set(k, (seen.sums.get(k) ?? 0) + w.amount);
      if (w.onTotals) {
        const wanted = w.returning ?? w.keys;
        const lists = seen.hooks.get(w.onTotals);
        if (lists) lists.add(wanted);
        else seen.hooks.set(w.onTotals, new Set([wanted]));
      }
    }
  }
  const out: Planned[] = [];
  for (const [shape, { w, rows: all }] of inserts) {
    const parts = insertPartsOf(shape, w);
    let from = 0;
    for (const size of sliceSizes(all.length, fixedTexts)) {
      out.push({ sql: valuesSql(shape, parts, size), params: flatRows(all, parts.width, from, size) });
      from += size;
    }
  }
  for (const [into, { w, sums, hooks }] of adds) {
    // The totals a hook wants back, then the others (each its own statement, by partition of the
    // keys: no total is written twice).
    const wanted = wantedBy(hooks);
    let returned = 0;
    for (const k of sums.keys()) if (wanted(k)) returned++;
    if (returned > 0) {
      const statement = addPartsOf(into, true);
      const sizes = sliceSizes(returned, fixedTexts);
      // Every slice's returned totals, handed to the hooks once the last slice's rows are in.
      const after = new Map<string, number>();
      let slicesLeft = sizes.length;
      const deliver = (rows: Rows): void => {
        for (const r of rows) after.set(String(r.k), Number(r.v));
        if (--slicesLeft > 0) return;
        for (const [hook, lists] of hooks) hook(totalsOf(lists, sums, after));
      };
      const lists = fillSums(sums, wanted, true, sizes, statement.width, into, w.now);
      for (let i = 0; i < sizes.length; i++) out.push({ sql: valuesSql(statement.shape, statement, sizes[i]!), params: lists[i]!, returning: true, deliver });
    }
    if (returned < sums.size) {
      const statement = addPartsOf(into, false);
      const sizes = sliceSizes(sums.size - returned, fixedTexts);
      const lists = fillSums(sums, wanted, false, sizes, statement.width, into, w.now);
      for (let i = 0; i < sizes.length; i++) out.push({ sql: valuesSql(statement.shape, statement, sizes[i]!), params: lists[i]! });
    }
  }
  return out;
}
