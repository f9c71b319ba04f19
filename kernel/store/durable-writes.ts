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

/**
 * Amounts added to running totals keyed by `keyColumn` (a total is created at the amount when
 * absent). Summed per key across the requests committed together: ONE upsert per table, so a
 * total shared by many requests is written once. `onTotals` gets each of its keys' new total and
 * the amount the whole group added to it.
 */
export interface AddToTotals {
  kind: 'add';
  table: string;
  keyColumn: string;
  valueColumn: string;
  /** Set to `now` on every write (e.g. updated_at). */
  touchColumn?: string;
  now: number;
  deltas: Array<[key: string, amount: number]>;
  onTotals?: (rows: Array<{ key: string; after: number; added: number }>) => void;
}

export type DurableWrite = InsertRows | AddToTotals;

/** One statement of a group's transaction; `deliver` hands its returned rows to the writes it merged. */
export interface Planned {
  sql: string;
  params: unknown[];
  deliver?: (rows: Array<Record<string, unknown>>) => void;
}

/** The statements that commit `writes` (in order: inserts as first staged, then totals). */
export function plan(writes: DurableWrite[]): Planned[] {
  const inserts = new Map<string, { w: InsertRows; rows: unknown[][] }>();
  const adds = new Map<string, { w: AddToTotals; sums: Map<string, number>; hooks: AddToTotals[] }>();
  for (const w of writes) {
    if (w.kind === 'insert') {
      const id = `${w.table}|${w.columns.join(',')}|${w.onConflict ?? ''}`;
      const seen = inserts.get(id) ?? { w, rows: [] };
      seen.rows.push(...w.rows);
      inserts.set(id, seen);
    } else {
      const id = `${w.table}|${w.keyColumn}|${w.valueColumn}|${w.touchColumn ?? ''}`;
      const seen = adds.get(id) ?? { w, sums: new Map<string, number>(), hooks: [] };
      for (const [k, v] of w.deltas) seen.sums.set(k, (seen.sums.get(k) ?? 0) + v);
      if (w.onTotals) seen.hooks.push(w);
      adds.set(id, seen);
    }
  }
  const out: Planned[] = [];
  for (const { w, rows } of inserts.values()) {
    const one = `(${w.columns.map(() => '?').join(',')})`;
    out.push({ sql: `insert into ${w.table} (${w.columns.join(',')}) values ${rows.map(() => one).join(',')}${w.onConflict ? ` ${w.onConflict}` : ''}`, params: rows.flat() });
  }
  for (const { w, sums, hooks } of adds.values()) {
    const cols = [w.keyColumn, w.valueColumn, ...(w.touchColumn ? [w.touchColumn] : [])];
    const one = `(${cols.map(() => '?').join(',')})`;
    const touch = w.touchColumn ? `, ${w.touchColumn} = excluded.${w.touchColumn}` : '';
    out.push({
      sql:
        `insert into ${w.table} (${cols.join(',')}) values ${[...sums].map(() => one).join(',')}` +
        ` on conflict (${w.keyColumn}) do update set ${w.valueColumn} = ${w.table}.${w.valueColumn} + excluded.${w.valueColumn}${touch}` +
        ` returning ${w.keyColumn} as k, ${w.valueColumn} as v`,
      params: [...sums].flatMap(([k, v]) => (w.touchColumn ? [k, v, w.now] : [k, v])),
      deliver: (rows) => {
        const after = new Map(rows.map((r) => [String(r.k), Number(r.v)]));
        for (const h of hooks) {
          h.onTotals!(h.deltas.filter(([k]) => after.has(k)).map(([k]) => ({ key: k, after: after.get(k)!, added: sums.get(k)! })));
        }
      },
    });
  }
  return out;
}
