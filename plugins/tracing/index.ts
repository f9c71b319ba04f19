import { definePlugin, StoreToken, Type, defineToken, BatchWriter } from '../../kernel/index.js';
import { migrations } from './migrations.js';
import { usageColumns, spanColumns, usageRow, spanRow } from './records.js';

/** Flushes buffered usage records and spans (tests and the diagnostics command read after it). */
export const TracingFlushToken = defineToken<() => Promise<void>>('tracing.flush');

/**
 * Records every model request behind the response: a usage record (who, model, tokens, charge,
 * status, latency, time to first token) and its spans (one per pipeline phase). Batched; flushed
 * completely on graceful shutdown, so nothing is lost.
 */
export default definePlugin({
  name: 'tracing',
  config: Type.Object({
    flushIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
    maxBatchRows: Type.Integer({ minimum: 1, default: 500 }),
  }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const usage = new BatchWriter(store, 'usage_records', usageColumns, ctx.config.flushIntervalMs, ctx.config.maxBatchRows);
    const spans = new BatchWriter(store, 'spans', spanColumns, ctx.config.flushIntervalMs, ctx.config.maxBatchRows);
    ctx.container.register('tracing.writers', { useValue: [usage, spans] });
    ctx.provide(TracingFlushToken, async () => {
      await usage.flush();
      await spans.flush();
    });
    ctx.hook('settle', (rc) => {
      const latency = performance.now() - rc.startedAt;
      const row = usageRow(rc, latency);
      usage.add(row);
      spans.add(spanRow(rc, latency, row));
    });
  },
  async stop(ctx) {
    const [usage, spans] = ctx.container.resolve<BatchWriter[]>('tracing.writers');
    await usage!.flush();
    await spans!.flush();
  },
});
