import { CompiledQuery, type QueryExecutor } from 'kysely';

type Executor = Pick<QueryExecutor, 'executeQuery'> | { executeQuery: QueryExecutor['executeQuery'] };

/**
 * `?` placeholders → PostgreSQL's `$1, $2, …`, skipping quoted strings and identifiers. Memoized
 * (`remember`, the default): the service runs a small, fixed set of statements; a caller that keeps
 * its own texts (pg-one-statement.ts) converts without filling the memo.
 */
const pgCache = new Map<string, string>();
const quotedOrPlaceholder = /'[^']*'|"[^"]*"|\?/g;
export function toPostgresPlaceholders(sql: string, remember = true): string {
  let out = pgCache.get(sql);
  if (out !== undefined) return out;
  let n = 0;
  // One pass that copies the text between matches (a quoted string or identifier is kept as it
  // is): adding it a character at a time made a string per character, ~128 KB for the 4 KB text
  // of a group commit's combined statement (pg-one-statement.ts).
  out = sql.replace(quotedOrPlaceholder, (m) => (m === '?' ? `$${++n}` : m));
  if (remember && pgCache.size < 1000) pgCache.set(sql, out);
  return out;
}

/** Values both drivers bind: booleans as 1/0 (tables use integers), dates as ISO text. */
export function bindable(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  return v === undefined ? null : v;
}

/** `bindable` applied to each value of `params`, in place (most values are bound as they are). */
export function bindInPlace(params: unknown[]): void {
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (v === undefined || typeof v === 'boolean' || v instanceof Date) params[i] = bindable(v);
  }
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
