import { definePlugin, StoreToken, Type, defineToken, BatchWriter, AdminApiToken } from '../../kernel/index.js';
import { migrations } from './migrations.js';
import { tracingRoutes } from './routes.js';
import { usageColumns, spanColumns, usageRow, spanRow, attemptRows } from './records.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'tracing.flush_failed': { table: string; rows: number };
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
  }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const { flushIntervalMs, maxBatchRows } = ctx.config;
    const failed = (table: string) => (rows: number) => ctx.log.warn('tracing.flush_failed', { table, rows });
    const usage = new BatchWriter(store, 'usage_records', usageColumns, flushIntervalMs, maxBatchRows, 100_000, failed('usage_records'));
    const spans = new BatchWriter(store, 'spans', spanColumns, flushIntervalMs, maxBatchRows, 100_000, failed('spans'));
    ctx.container.register('tracing.writers', { useValue: [usage, spans] });
    ctx.provide(TracingFlushToken, async () => {
      await usage.flush();
      await spans.flush();
    });
    tracingRoutes(ctx.use(AdminApiToken), store);
    ctx.hook('settle', (rc) => {
      const latency = performance.now() - rc.startedAt;
      const row = usageRow(rc, latency);
      usage.add(row);
      const span = spanRow(rc, latency, row);
      spans.add(span);
      for (const a of attemptRows(rc, String(span[1]))) spans.add(a);
    });
  },
  async stop(ctx) {
    const [usage, spans] = ctx.container.resolve<BatchWriter[]>('tracing.writers');
    await usage!.flush();
    await spans!.flush();
  },
});
