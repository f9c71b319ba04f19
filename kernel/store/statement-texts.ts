import type { InsertRows, TotalsTable } from './durable-writes.js';

/**
 * The texts of the write statements (multi-row inserts, running-total upserts), each made once
 * per shape and row count: the service writes a small, fixed set of statements on every request,
 * and building their texts per group was most of what a group commit allocated.
 */

/** Column lists joined once per list (callers stage the same constant array on every request). */
const joined = new WeakMap<readonly string[], string>();
function join(columns: readonly string[]): string {
  let j = joined.get(columns);
  if (j === undefined) joined.set(columns, (j = columns.join(',')));
  return j;
}

/** A statement's text around its `values` rows, and how many values a row has. */
export interface StatementParts {
  head: string;
  width: number;
  tail: string;
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

/** An insert's parts, made once per statement shape (the same few shapes on every request). */
const insertParts = new Map<string, StatementParts>();
export function insertPartsOf(shape: string, w: InsertRows): StatementParts {
  let parts = insertParts.get(shape);
  if (parts === undefined) {
    if (insertParts.size >= 200) insertParts.clear();
    parts = { head: `insert into ${w.table} (${join(w.columns)})`, width: w.columns.length, tail: w.onConflict ? ` ${w.onConflict}` : '' };
    insertParts.set(shape, parts);
  }
  return parts;
}

export type AddParts = StatementParts & { shape: string };

/**
 * An upsert's parts (add to running totals) and its shape, returning the totals or not, made once
 * per table object.
 */
const addParts = new WeakMap<TotalsTable, { returning: AddParts; quiet: AddParts }>();
export function addPartsOf(t: TotalsTable, returning: boolean): AddParts {
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
 * An insert's shape (table, columns, conflict clause) as one string, made once per column list,
 * table and clause: looked up without building a key (a joined key was a new string per write).
 */
const insertShapes = new WeakMap<readonly string[], Map<string, Map<string, string>>>();
export function insertShape(w: InsertRows): string {
  let byTable = insertShapes.get(w.columns);
  if (!byTable) insertShapes.set(w.columns, (byTable = new Map()));
  let byClause = byTable.get(w.table);
  if (!byClause) byTable.set(w.table, (byClause = new Map()));
  const clause = w.onConflict ?? '';
  let shape = byClause.get(clause);
  if (shape === undefined) byClause.set(clause, (shape = `${w.table}|${join(w.columns)}|${clause}`));
  return shape;
}
