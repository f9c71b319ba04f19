import { fileURLToPath } from 'node:url';
import { StoreToken, type Store } from '../../kernel/index.js';
import type { TestService } from '../support/harness.js';


export const DAY = 86_400_000;

/** Inserts a row (plain SQL with bound values) into one of the service's tables. */
export async function insert(s: TestService, table: string, row: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(row);
  await store(s).execute(`insert into ${table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`, Object.values(row));
}

export function store(s: TestService): Store {
  return s.service.get(StoreToken);
}

/** The ids left in a table, sorted. */
export async function ids(s: TestService, table: string, column = 'id'): Promise<string[]> {
  return (await store(s).execute<{ k: string }>(`select ${column} as k from ${table}`)).map((r) => String(r.k)).sort();
}

export function span(id: string, at: number): Record<string, unknown> {
  return { trace_id: id, span_id: `s${id}`, parent_span_id: null, name: 'chat.completions', start_us: at * 1000, duration_us: 1, status: 'ok', attributes: '{}' };
}

export function usage(id: string, at: number): Record<string, unknown> {
  return {
    id, created_at: at, workspace_id: 'w', person_id: 'p', key_id: null, provider: 'x', model: 'x:m', prompt_tokens: 1, completion_tokens: 1,
    cached_tokens: 0, reasoning_tokens: 0, cost_micro_usd: 5, status: 200, error_code: null, latency_ms: 1, ttft_ms: null, stream: 0, client_closed: 0,
  };
}

export function hold(id: string, state: string, endedAt: number): Record<string, unknown> {
  return { id, request_id: `r${id}`, workspace_id: 'w', person_id: 'p', key_id: null, model: 'x:m', amount_micro_usd: 10, charge_micro_usd: 5, state, created_at: endedAt, ended_at: endedAt };
}

export function alert(id: string, state: string, at: number): Record<string, unknown> {
  return {
    id, cap_id: `c${id}`, scope: 'workspace', scope_id: 'w', period: 'month', period_key: '2026-01', threshold: 80, amount_micro_usd: 100,
    spent_micro_usd: 90, state, attempts: 1, created_at: at, updated_at: at,
  };
}
