import { CompiledQuery, type QueryExecutor } from 'kysely';

type Executor = Pick<QueryExecutor, 'executeQuery'> | { executeQuery: QueryExecutor['executeQuery'] };

/**
 * `?` placeholders → PostgreSQL's `$1, $2, …`, skipping quoted strings and identifiers. Memoized:
 * the service runs a small, fixed set of statements.
 */
const pgCache = new Map<string, string>();
export function toPostgresPlaceholders(sql: string): string {
  let out = pgCache.get(sql);
  if (out !== undefined) return out;
  let n = 0;
  let quote: string | null = null;
  out = '';
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else out += ch === '?' ? `$${++n}` : ch;
  }
  if (pgCache.size < 1000) pgCache.set(sql, out);
  return out;
}

/** Values both drivers bind: booleans as 1/0 (tables use integers), dates as ISO text. */
export function bindable(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  return v === undefined ? null : v;
}

/**
 * Runs SQL with bound parameters through the ORM's own connection (kysely underneath). The ORM's
 * `execute` pastes every parameter into the SQL text (escaping each one), which costs more than
 * the query on the request path's batched writes, and defeats statement reuse.
 */
export async function runBound<T>(executor: Executor, pg: boolean, sql: string, params: unknown[]): Promise<T[]> {
  const compiled = CompiledQuery.raw(pg ? toPostgresPlaceholders(sql) : sql, params.map(bindable));
  const result = await (executor as QueryExecutor).executeQuery<T>(compiled);
  return result.rows as T[];
}
