import type { Rows } from './write-behind.js';
import { powerOfTwoSizes, type AddToTotals, type DurableWrite, type InsertRows, type Planned, type TotalAfter, type TotalsTable } from './durable-writes.js';
import { addPartsOf, insertPartsOf, insertShape, valuesSql, type StatementParts } from './statement-texts.js';

type Hook = NonNullable<AddToTotals['onTotals']>;

/** A write of an insert group, chained to the next one of its shape (no list grown per group). */
interface Link {
  w: InsertRows;
  next: Link | undefined;
}

/** The inserts of one shape in a group, in the order staged. */
class InsertGroup {
  rows: number;
  readonly head: Link;
  private last: Link;
  constructor(
    readonly shape: string,
    readonly first: InsertRows,
  ) {
    this.rows = first.rows.length;
    this.head = this.last = { w: first, next: undefined };
  }

  add(w: InsertRows): void {
    this.last = this.last.next = { w, next: undefined };
    this.rows += w.rows.length;
  }

  /** Rows `from` to `from + count` (counted across the writes), `width` values each, into `params` from `at`. */
  fill(params: unknown[], at: number, width: number, from: number, count: number): void {
    const end = from + count;
    let index = 0;
    for (let link: Link | undefined = this.head; link !== undefined; link = link.next) {
      for (const row of link.w.rows) {
        if (index >= from && index < end) for (let c = 0; c < width; c++) params[at++] = row[c];
        if (++index >= end) return;
      }
    }
  }
}

/** Lists without a repeated key (budgets stages one per principal and day, checked once). */
const distinctLists = new WeakMap<readonly string[], boolean>();
function distinct(list: readonly string[]): boolean {
  let d = distinctLists.get(list);
  if (d === undefined) distinctLists.set(list, (d = new Set(list).size === list.length));
  return d;
}

/**
 * The adds to one totals table in a group, summed per key. While every write names the same list
 * of distinct keys (every request of one principal, as at one connection) it is the list and one
 * summed amount; a map of sums by key only once lists differ. The same for hooks: one hook with
 * one list of wanted keys until a second appears.
 */
class AddGroup {
  list: readonly string[] | undefined;
  amount = 0;
  sums: Map<string, number> | undefined;
  hook: Hook | undefined;
  wanted: readonly string[] | undefined;
  hooks: Map<Hook, Set<readonly string[]>> | undefined;
  private wantedAll: Set<string> | undefined;

  constructor(
    readonly into: TotalsTable,
    readonly now: number,
  ) {}

  add(w: AddToTotals): void {
    if (this.sums === undefined && (this.list === undefined ? distinct(w.keys) : this.list === w.keys)) {
      this.list = w.keys;
      this.amount += w.amount;
    } else {
      const sums = (this.sums ??= this.spread());
      for (const k of w.keys) sums.set(k, (sums.get(k) ?? 0) + w.amount);
    }
    if (!w.onTotals) return;
    const wanted = w.returning ?? w.keys;
    if (this.hooks === undefined && (this.hook === undefined || (this.hook === w.onTotals && this.wanted === wanted))) {
      this.hook = w.onTotals;
      this.wanted = wanted;
      return;
    }
    const hooks = (this.hooks ??= new Map(this.hook ? [[this.hook, new Set([this.wanted!])]] : []));
    const lists = hooks.get(w.onTotals);
    if (lists) lists.add(wanted);
    else hooks.set(w.onTotals, new Set([wanted]));
  }

  /** The sums as a map from here on (a write named another list, or one with a repeated key). */
  private spread(): Map<string, number> {
    const sums = new Map<string, number>();
    if (this.list) for (const k of this.list) sums.set(k, this.amount);
    this.list = undefined;
    return sums;
  }

  get size(): number {
    return this.sums ? this.sums.size : this.list!.length;
  }

  sumOf(key: string): number {
    return this.sums ? this.sums.get(key)! : this.amount;
  }

  /** How many of the totals a hook wants back. */
  returnedCount(): number {
    if (this.hook === undefined && this.hooks === undefined) return 0;
    let n = 0;
    if (this.sums) for (const k of this.sums.keys()) n += this.wants(k) ? 1 : 0;
    else for (const k of this.list!) n += this.wants(k) ? 1 : 0;
    return n;
  }

  /** Whether a hook wants `key` back. */
  wants(key: string): boolean {
    if (this.hooks === undefined) return this.wanted !== undefined && this.wanted.includes(key);
    if (this.wantedAll === undefined) {
      this.wantedAll = new Set();
      for (const lists of this.hooks.values()) for (const list of lists) for (const k of list) this.wantedAll.add(k);
    }
    return this.wantedAll.has(key);
  }

  /**
   * The totals whose `wants` is `returned`, in the order first staged, from the `from`th to the
   * `from + count`th of them, as (key, sum[, now]) values into `params` from `at`.
   */
  fill(params: unknown[], at: number, returned: boolean, from: number, count: number): void {
    const end = from + count;
    const touch = this.into.touchColumn !== undefined;
    let index = 0;
    const put = (sum: number, key: string): void => {
      if (this.wants(key) !== returned) return;
      if (index >= from && index < end) {
        params[at++] = key;
        params[at++] = sum;
        if (touch) params[at++] = this.now;
      }
      index++;
    };
    if (this.sums) this.sums.forEach(put);
    else for (const k of this.list!) put(this.amount, k);
  }

  /** Hands each hook its keys' totals once every returning slice's rows are in. */
  deliverer(slices: number): (rows: Rows) => void {
    const after = new Map<string, number>();
    let left = slices;
    return (rows) => {
      for (const r of rows) after.set(String(r.k), Number(r.v));
      if (--left > 0) return;
      if (this.hooks === undefined) this.hook?.(this.totalsOf(this.wanted!, undefined, after));
      else for (const [hook, lists] of this.hooks) hook(this.totalsOf(undefined, lists, after));
    };
  }

  /**
   * A hook's rows: each key staged with it (in the order first staged, once) that the commit
   * returned. One list needs no set to merge lists: a key repeated in it is skipped by its first index.
   */
  private totalsOf(one: readonly string[] | undefined, lists: Set<readonly string[]> | undefined, after: Map<string, number>): TotalAfter[] {
    const rows: TotalAfter[] = [];
    const add = (k: string): void => {
      const a = after.get(k);
      if (a !== undefined) rows.push({ key: k, before: a - this.sumOf(k), after: a });
    };
    if (one === undefined && lists!.size === 1) for (const list of lists!) one = list;
    if (one !== undefined) {
      for (let i = 0; i < one.length; i++) if (one.indexOf(one[i]!) === i) add(one[i]!);
    } else {
      const keys = new Set<string>();
      for (const list of lists!) for (const k of list) keys.add(k);
      for (const k of keys) add(k);
    }
    return rows;
  }
}

/**
 * The statements that commit `writes`: one multi-row insert per shape (in the order first staged),
 * then per totals table the upsert of the totals a hook wants back and the one of the others. With
 * `fixedTexts` (SQLite) each is cut into power-of-two slices (sliceSizes) and gets a parameter list
 * of its own; otherwise (PostgreSQL, where the group goes as one statement: pg-one-statement.ts)
 * every statement's parameters are filled into ONE list, each its `count` from `at`, so the
 * combined statement binds that list as it is instead of copying every statement's into a new one.
 */
export function plan(writes: DurableWrite[], fixedTexts = false): Planned[] {
  const inserts = new Map<string, InsertGroup>();
  const adds = new Map<TotalsTable, AddGroup>();
  for (const w of writes) {
    if (w.kind === 'insert') {
      const shape = insertShape(w);
      const seen = inserts.get(shape);
      if (seen) seen.add(w);
      else inserts.set(shape, new InsertGroup(shape, w));
    } else if (w.kind === 'add') {
      let seen = adds.get(w.into);
      if (!seen) adds.set(w.into, (seen = new AddGroup(w.into, w.now)));
      seen.add(w);
    }
  }
  let values = 0;
  for (const g of inserts.values()) values += g.rows * g.first.columns.length;
  for (const g of adds.values()) values += g.size * addPartsOf(g.into, false).width;
  const out = new Statements(fixedTexts ? undefined : new Array<unknown>(values));
  for (const g of inserts.values()) out.sliced(g.shape, insertPartsOf(g.shape, g.first), g.rows, fixedTexts, g, false);
  for (const g of adds.values()) {
    const returned = g.returnedCount();
    const loud = addPartsOf(g.into, true);
    const quiet = addPartsOf(g.into, false);
    if (returned > 0) out.sliced(loud.shape, loud, returned, fixedTexts, g, true);
    if (returned < g.size) out.sliced(quiet.shape, quiet, g.size - returned, fixedTexts, g, false);
  }
  return out.list;
}

/** The statements planned so far, and the one parameter list they share (PostgreSQL). */
class Statements {
  readonly list: Planned[] = [];
  private at = 0;
  constructor(private readonly shared: unknown[] | undefined) {}

  /**
   * `count` rows of `source` (an insert's, or a table's totals, `returned` or not) in slices: one,
   * or powers of two with `fixedTexts`; `shape` names the statement's texts (valuesSql). The upsert
   * of returned totals hands its rows to the hooks.
   */
  sliced(shape: string, parts: StatementParts, count: number, fixedTexts: boolean, source: InsertGroup | AddGroup, returned: boolean): void {
    const sizes = fixedTexts ? powerOfTwoSizes(count) : undefined;
    const slices = sizes ? sizes.length : 1;
    const deliver = returned ? (source as AddGroup).deliverer(slices) : undefined;
    for (let i = 0, from = 0; i < slices; i++) {
      const size = sizes ? sizes[i]! : count;
      const n = size * parts.width;
      const params = this.shared ?? new Array<unknown>(n);
      const to = this.shared ? this.at : 0;
      if (source instanceof InsertGroup) source.fill(params, to, parts.width, from, size);
      else source.fill(params, to, returned, from, size);
      const s: Planned = { sql: valuesSql(shape, parts, size), params };
      if (this.shared) (s.at = to), (s.count = n), (this.at += n);
      if (deliver) (s.returning = true), (s.deliver = deliver);
      this.list.push(s);
      from += size;
    }
  }
}
