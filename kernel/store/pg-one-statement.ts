import type { Rows, WriteStatement } from './write-behind.js';

/**
 * A group commit's inserts as ONE PostgreSQL statement: each insert becomes a data-modifying CTE
 * (`with w0 as (insert …), w1 as (insert … returning …) select …`), so the group costs one round
 * trip instead of BEGIN, one per statement, and COMMIT. A single statement is atomic like the
 * transaction it replaces. Its parts share one snapshot and cannot see each other's rows, so only
 * inserts into different tables or shapes qualify (plan() makes one per shape; the durable writes
 * of usage records, running totals and holds touch different tables). Rows a part returns come
 * back as JSON with the part's index and are handed back per statement, in order.
 *
 * Returns undefined when the statements do not qualify (anything other than an insert, or a
 * single statement, which needs no wrapping).
 */
export function oneStatement(statements: readonly WriteStatement[]): { sql: string; params: unknown[]; split: (rows: Rows) => Rows[] } | undefined {
  if (statements.length < 2 || !statements.every((s) => /^insert into /i.test(s.sql))) return undefined;
  const parts: string[] = [];
  const selects: string[] = [];
  const params: unknown[] = [];
  statements.forEach((s, i) => {
    parts.push(`w${i} as (${s.sql})`);
    if (s.returning) selects.push(`select ${i} as i, to_jsonb(w${i}) as r from w${i}`);
    for (const p of s.params) params.push(p);
  });
  const tail = selects.length > 0 ? selects.join(' union all ') : 'select null::int as i, null::jsonb as r where false';
  return {
    sql: `with ${parts.join(', ')} ${tail}`,
    params,
    split: (rows) => {
      const out: Rows[] = statements.map(() => []);
      for (const row of rows) out[Number(row.i)]!.push(row.r as Record<string, unknown>);
      return out;
    },
  };
}
