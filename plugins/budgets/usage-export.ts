import type { Store } from '../../kernel/index.js';

/**
 * The usage export's rows (README "Spend export"), read from `usage_records` a page at a time so a
 * year of records never sits in memory: one row per request (keyset pages on created_at, id) or
 * one row per day and workspace, person, key, provider and model (one day per query).
 */

const DAY = 86_400_000;
/** Records per page: big enough that a year costs few round trips, small enough to stay a few hundred KB. */
export const pageRows = 1000;

export type Granularity = 'request' | 'day';
export type Cell = string | number | boolean | null;

/** Filters on usage_records columns (null: not filtered). */
export interface ExportFilter {
  workspace_id?: string | undefined;
  person_id?: string | undefined;
  key_id?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
}

/** The columns of each granularity, in file order (documented in plugins/budgets/README.md). */
export const exportColumns: Record<Granularity, readonly string[]> = {
  request: [
    'id', 'created_at', 'workspace_id', 'person_id', 'key_id', 'provider', 'model', 'status', 'error_code', 'stream', 'client_closed',
    'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'cost_micro_usd', 'cost_usd', 'latency_ms', 'ttft_ms',
  ],
  day: [
    'date', 'workspace_id', 'person_id', 'key_id', 'provider', 'model', 'requests', 'errors',
    'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'cost_micro_usd', 'cost_usd',
  ],
};

/**
 * Integer micro-USD as an exact dollar amount with six decimals ("12.345678"), from the digits
 * alone: a float would turn 0.1 + 0.2 into 0.30000000000000004 and lose cents past 2^53.
 */
export function usdFromMicro(micro: string | number | bigint): string {
  const v = BigInt(micro);
  const abs = v < 0n ? -v : v;
  return `${v < 0n ? '-' : ''}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** A database integer (PostgreSQL's bigint and sum() arrive as strings) as a decimal string. */
const int = (v: unknown): string => (v === null || v === undefined ? '0' : typeof v === 'string' ? v : String(BigInt(v as number)));
/** A count that fits a JSON number (tokens, latency, counts); money stays a string until formatted. */
const num = (v: unknown): number => Number(v ?? 0);
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function where(filter: ExportFilter, params: unknown[]): string {
  const parts: string[] = [];
  for (const column of ['workspace_id', 'person_id', 'key_id', 'provider', 'model'] as const) {
    const value = filter[column];
    if (value === undefined) continue;
    parts.push(`${column} = ?`);
    params.push(value);
  }
  return parts.map((p) => ` and ${p}`).join('');
}

const requestSelect = `select id, created_at, workspace_id, person_id, key_id, provider, model, status, error_code, stream, client_closed,
  prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost_micro_usd, latency_ms, ttft_ms from usage_records`;

/**
 * One row per usage record in [fromMs, toMs), oldest first, in pages of `pageRows`: each page
 * starts after the last (created_at, id) of the one before (keyset paging: no offset to skip, the
 * created_at index serves every page, and a record written meanwhile never shifts a page).
 */
export async function* requestRows(store: Store, fromMs: number, toMs: number, filter: ExportFilter, rows = pageRows): AsyncGenerator<Cell[][]> {
  let after: { t: number; id: string } | null = null;
  for (;;) {
    const params: unknown[] = [after?.t ?? fromMs, toMs];
    const tie: string = after ? ' and (created_at > ? or id > ?)' : '';
    if (after) params.push(after.t, after.id);
    const filters = where(filter, params);
    params.push(rows);
    const page: Array<Record<string, unknown>> = await store.execute<Record<string, unknown>>(
      `${requestSelect} where created_at >= ? and created_at < ?${tie}${filters} order by created_at, id limit ?`,
      params,
    );
    if (page.length === 0) return;
    yield page.map((r) => {
      const cost = int(r.cost_micro_usd);
      return [
        String(r.id), new Date(num(r.created_at)).toISOString(), str(r.workspace_id), str(r.person_id), str(r.key_id), str(r.provider), str(r.model),
        num(r.status), str(r.error_code), num(r.stream) === 1, num(r.client_closed) === 1,
        num(r.prompt_tokens), num(r.completion_tokens), num(r.cached_tokens), num(r.reasoning_tokens), cost, usdFromMicro(cost),
        num(r.latency_ms), r.ttft_ms === null || r.ttft_ms === undefined ? null : num(r.ttft_ms),
      ];
    });
    if (page.length < rows) return;
    const last: Record<string, unknown> = page[page.length - 1]!;
    after = { t: num(last.created_at), id: String(last.id) };
  }
}

const dims = 'workspace_id, person_id, key_id, provider, model';
// coalesce: SQLite sorts nulls first and PostgreSQL last; as empty strings they come first in both.
const dimOrder = dims.split(', ').map((d) => `coalesce(${d}, '')`).join(', ');

/**
 * One row per UTC day and (workspace, person, key, provider, model) in [fromMs, toMs), oldest day
 * first: one grouped query per day, so memory holds one day's groups, never the period's records.
 */
export async function* dailyRows(store: Store, fromMs: number, toMs: number, filter: ExportFilter): AsyncGenerator<Cell[][]> {
  for (let day = fromMs; day < toMs; day += DAY) {
    const params: unknown[] = [day, Math.min(day + DAY, toMs)];
    const filters = where(filter, params);
    const groups = await store.execute<Record<string, unknown>>(
      `select ${dims}, count(*) as n, sum(case when error_code is null then 0 else 1 end) as errors,
         sum(prompt_tokens) as pt, sum(completion_tokens) as ct, sum(cached_tokens) as cached, sum(reasoning_tokens) as reasoning, sum(cost_micro_usd) as cost
       from usage_records where created_at >= ? and created_at < ?${filters}
       group by ${dims} order by ${dimOrder}`,
      params,
    );
    if (groups.length === 0) continue;
    const date = new Date(day).toISOString().slice(0, 10);
    yield groups.map((g) => {
      const cost = int(g.cost);
      return [
        date, str(g.workspace_id), str(g.person_id), str(g.key_id), str(g.provider), str(g.model), num(g.n), num(g.errors),
        num(g.pt), num(g.ct), num(g.cached), num(g.reasoning), cost, usdFromMicro(cost),
      ];
    });
  }
}
