import type { RetentionKind } from '../../kernel/index.js';


/**
 * Usage records are kept 13 months, and never less than the current and previous calendar month
 * (UTC) so both monthly periods can be reported: the floor is the first day of the previous month.
 */
export function usageFloor(now: Date): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
}

/** The tracing plugin's records under the retention job (SPEC.md "Retention"). */
export const tracingRetention: RetentionKind[] = [
  { kind: 'spans', summary: 'Request traces (spans)', table: 'spans', keyColumn: 'trace_id', timeColumn: 'start_us', timeUnit: 'us', defaultDays: 30 },
  // 13 months ≈ 396 days; the floor keeps at least the current and previous month whatever is set.
  { kind: 'usage_records', summary: 'Usage records', table: 'usage_records', keyColumn: 'id', timeColumn: 'created_at', defaultDays: 396, minDays: 31, floor: usageFloor },
  // Counted refusals (401, 429) stand in for their usage records: kept as long.
  { kind: 'refusal_counts', summary: 'Refusal counts per minute (401, 429)', table: 'refusal_counts', keyColumn: 'minute_start', timeColumn: 'minute_start', defaultDays: 396, minDays: 31, floor: usageFloor },
];

