import { defineToken } from '../container/tokens.js';

/**
 * One kind of record the daily retention job deletes (SPEC.md "Retention"). The plugin that owns
 * the table registers it, so kinds arrive with their plugins (conversations, tool calls, tool
 * sign-ins) instead of living in a hand-kept list. Deletes run in small batches by `keyColumn`,
 * so no statement holds a long lock.
 *
 * @example
 * ctx.optional(RetentionToken)?.register({
 *   kind: 'tool_calls', summary: 'Tool call records', table: 'tool_calls', keyColumn: 'id',
 *   timeColumn: 'created_at', defaultDays: 90,
 * });
 */
export interface RetentionKind {
  /** Stable name used in the admin API and the run's counts, e.g. `spans`. */
  kind: string;
  /** What it is, for people (admin API, diagnostics). */
  summary: string;
  table: string;
  /** A column identifying rows (need not be unique: all rows sharing a value go together). */
  keyColumn: string;
  /** The record's time: epoch milliseconds, or microseconds with `timeUnit: 'us'`. */
  timeColumn: string;
  timeUnit?: 'ms' | 'us';
  /**
   * Days kept by default; null keeps records until deleted (an admin may set a period).
   * `'expired'` means `timeColumn` is an expiry: rows past it go at the next run, no period.
   */
  defaultDays: number | null | 'expired';
  /** Range an instance admin may set (days); default 1 to 3650. */
  minDays?: number;
  maxDays?: number;
  /** Extra SQL condition without parameters, e.g. `state in ('settled','refused','abandoned')`. */
  where?: string;
  /** The oldest cutoff allowed at `now`, epoch ms: records newer than this are always kept. */
  floor?(now: Date): number;
  /**
   * Periods set per workspace (recorded prompts): rows of a listed workspace use its days instead
   * of the kind's period. `workspaceColumn` names the table's workspace column.
   */
  workspaceColumn?: string;
  workspacePeriods?(): Promise<Array<{ workspaceId: string; days: number }>>;
}

/** One finished run of the job. */
export interface RetentionRun {
  id: string;
  trigger: 'schedule' | 'manual' | 'command';
  started_at: string;
  duration_ms: number;
  status: 'done' | 'failed';
  /** Rows deleted per kind. */
  counts: Record<string, number>;
}

/** The retention job: kinds register here; `run` deletes what is past its period at `now`. */
export interface Retention {
  register(kind: RetentionKind): void;
  kinds(): RetentionKind[];
  /** Runs at once (Run now, `svc retention run`, tests with a fake clock); null when another run holds the lock. */
  run(options?: { now?: Date; trigger?: RetentionRun['trigger'] }): Promise<RetentionRun | null>;
  lastRun(): Promise<RetentionRun | null>;
}

export const RetentionToken = defineToken<Retention>('retention.job');
