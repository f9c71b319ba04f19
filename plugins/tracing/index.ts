import { definePlugin, StoreToken, Type, defineToken, BatchWriter, GroupCommitToken, Throttled, RetentionToken, AdminApiToken, PipelineToken, stageDurable } from '../../kernel/index.js';
import { migrations } from './migrations.js';
import { tracingRoutes } from './routes.js';
import { dashboardRoutes } from './dashboard.js';
import { usageColumns, spanColumns, usageRow, spanRow, spanRows } from './records.js';
import { tracingRetention } from './retention-kinds.js';
import { RefusalTally, refusalRoutes } from './refusals.js';
import type { OtlpExport } from './otlp.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    /** `count` failed attempts since the last line (at most one line per `logIntervalMs`). */
    'tracing.flush_failed': { table: string; rows: number; count: number; error_code: string };
    /** Rows refused because `maxBufferedRows` already waited for the database, since the last line. */
    'tracing.rows_dropped': { table: string; count: number };
    /** `count` 401 / 429 refusals counted (not recorded) since the last line. */
    'request.refusals_counted': { count: number; sampled_per_minute: number };
  }
}

/** Flushes buffered usage records and spans (tests and the diagnostics command read after it). */
export const TracingFlushToken = defineToken<() => Promise<void>>('tracing.flush');

/**
 * Records every model request behind the response: a usage record (who, model, tokens, charge,
 * status, latency, time to first token) and its span (with each pipeline phase's timing). Batched;
 * a failed write is kept, retried and logged; flushed completely on graceful shutdown.
 */
export default definePlugin({
  name: 'tracing',
  dependsOn: ['admin-api'],
  config: Type.Object({
    flushIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
    maxBatchRows: Type.Integer({ minimum: 1, default: 500 }),
    /** Rows kept per table while the database does not answer; later ones are dropped (README). */
    maxBufferedRows: Type.Integer({ minimum: 1, default: 20_000 }),
    /** Repeated write failures and drops are logged at most once per this interval. */
    logIntervalMs: Type.Integer({ minimum: 10, default: 10_000 }),
    /**
     * 401 and 429 refusals are counted per minute (table refusal_counts), not recorded; this many
     * per minute and code still get their full usage record and trace (README "Refusals").
     */
    sampledRefusalsPerMinute: Type.Integer({ minimum: 0, default: 5 }),
  }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const { flushIntervalMs, maxBatchRows, maxBufferedRows, logIntervalMs } = ctx.config;
    // An outage fails every attempt: one line per interval with a count, never one per attempt.
    const writer = (table: string, columns: readonly string[]) => {
      let last = { rows: 0, error_code: 'error' };
      const failed = new Throttled((count) => ctx.log.warn('tracing.flush_failed', { table, ...last, count }), logIntervalMs);
      const dropped = new Throttled((count) => ctx.log.warn('tracing.rows_dropped', { table, count }), logIntervalMs);
      const onError = (rows: number, err: unknown) => {
        last = { rows, error_code: String((err as { code?: unknown }).code ?? 'error') };
        failed.hit();
      };
      return new BatchWriter(store, table, columns, flushIntervalMs, maxBatchRows, maxBufferedRows, onError, () => dropped.hit());
    };
    const usage = writer('usage_records', usageColumns);
    const spans = writer('spans', spanColumns);
    ctx.container.register('tracing.writers', { useValue: [usage, spans] });
    // Filled in start() only when SVC_OTLP_ENDPOINT is set: the OpenTelemetry SDK costs ~12 MB of
    // RSS and ~0.3 s of start-up (bench/README.md "Memory"), which an instance not exporting skips.
    const holder: { otlp?: OtlpExport } = {};
    ctx.container.register('tracing.otlp', { useValue: holder });
    const commits = ctx.use(GroupCommitToken);
    const pipeline = ctx.use(PipelineToken);
    ctx.provide(TracingFlushToken, async () => {
      // Settles still running their hooks have not queued their commit yet.
      await pipeline.settled();
      await commits.idle();
      await usage.flush();
      await spans.flush();
      await refusals.flush();
    });
    const admin = ctx.use(AdminApiToken);
    tracingRoutes(admin, store);
    dashboardRoutes(admin, store);
    refusalRoutes(admin, store);
    const refusals = new RefusalTally(store, ctx.config.sampledRefusalsPerMinute, flushIntervalMs, logIntervalMs, ctx.log);
    ctx.container.register('tracing.refusals', { useValue: refusals });
    ctx.hook('settle', (rc) => {
      // A flood of wrong keys or of a person past their rate limit must not write a row each.
      const r = refusals.counted(rc);
      if (r.counted && !r.sample) return;
      const latency = performance.now() - rc.startedAt;
      const row = usageRow(rc, latency);
      const rows = spanRows(rc, spanRow(rc, latency, row));
      // A request that reached the provider may cost money: its record is committed with the
      // running totals it adds to (one transaction, before the counters move), so a crash keeps
      // both or neither. Its spans join that commit (milliseconds away) instead of waiting up to
      // flushIntervalMs in a batch: rows kept that long outlive young-generation collections and
      // are copied into the old generation (bench/README.md "Ninth look"), and a crash now keeps
      // the trace with the record. Refusals cost nothing: batched behind the response, bounded.
      if (rc.state.outcome?.sent && rc.durable) {
        stageDurable(rc, { kind: 'insert', table: 'usage_records', columns: usageColumns, rows: [row] }, { kind: 'insert', table: 'spans', columns: spanColumns, rows });
      } else {
        usage.add(row);
        for (const s of rows) spans.add(s);
      }
      holder.otlp?.add(rc, latency, row);
    });
  },
  async start(ctx) {
    for (const k of tracingRetention) ctx.optional(RetentionToken)?.register(k);
    if (ctx.env.SVC_OTLP_ENDPOINT?.trim()) {
      const { otlpFromEnv } = await import('./otlp.js');
      ctx.container.resolve<{ otlp?: OtlpExport }>('tracing.otlp').otlp = otlpFromEnv(ctx.env);
    }
  },
  async stop(ctx) {
    await ctx.container.resolve<RefusalTally>('tracing.refusals').stop();
    const [usage, spans] = ctx.container.resolve<BatchWriter[]>('tracing.writers');
    await usage!.flush();
    await spans!.flush();
    await ctx.container.resolve<{ otlp?: OtlpExport }>('tracing.otlp').otlp?.stop(2000);
  },
});
