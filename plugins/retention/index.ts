import { AdminApiToken, CacheToken, definePlugin, DiagnosticsToken, RetentionToken, StoreToken, Type } from '../../kernel/index.js';
import { migrations } from './migrations.js';
import { RetentionJob } from './job.js';
import { retentionRoutes } from './routes.js';
import { startSchedule } from './scheduler.js';

type Bree = Awaited<ReturnType<typeof startSchedule>>;

/**
 * The daily retention job (SPEC.md "Retention"): deletes each registered kind of record past its
 * period, in small batches, on one replica. Kinds are registered by the plugins owning the tables
 * (RetentionToken); instance admins read and set periods and Run now through the admin API.
 */
export default definePlugin({
  name: 'retention',
  dependsOn: ['admin-api'],
  config: Type.Object({
    /** Cron, UTC; six fields add seconds. Empty: no schedule (Run now and the command still work). */
    schedule: Type.String({ default: '17 3 * * *' }),
    batchSize: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
    pauseMs: Type.Integer({ minimum: 0, default: 5 }),
    lockTtlMs: Type.Integer({ minimum: 1000, default: 3_600_000 }),
  }),
  migrations,
  commands: [
    {
      name: 'retention run',
      summary: 'Run the retention job now and print the rows deleted per kind',
      usage: 'svc retention run',
      options: {},
      async run(ctx, _args, out) {
        const run = await ctx.use(RetentionToken).run({ trigger: 'command' });
        if (!run) throw new Error('another replica is running the retention job; try again when it ends');
        out.write(`${JSON.stringify(run)}\n`);
        if (run.status === 'failed') throw new Error('some kinds failed (count -1); see the log');
      },
    },
  ],
  register(ctx) {
    const { batchSize, pauseMs, lockTtlMs } = ctx.config;
    const job = new RetentionJob(ctx.use(StoreToken), ctx.use(CacheToken), ctx.log, { batchSize, pauseMs, lockTtlMs });
    ctx.container.register('retention.job', { useValue: job });
    ctx.provide(RetentionToken, job);
    retentionRoutes(ctx.use(AdminApiToken), job, ctx.config.schedule, ctx.env.SVC_OTLP_ENDPOINT);
  },
  async start(ctx) {
    const job = ctx.container.resolve<RetentionJob>('retention.job');
    ctx.optional(DiagnosticsToken)?.addJob({ name: 'retention', schedule: ctx.config.schedule ? `${ctx.config.schedule} (UTC)` : '', lastRun: async () => (await job.lastRun()) as unknown as Record<string, unknown> | null });
    if (!ctx.config.schedule) return;
    const bree = await startSchedule(ctx.config.schedule, ctx.log, (slot) => void job.runScheduled(slot).catch(() => ctx.log.error('retention.failed', { run_id: 'schedule', trigger: 'schedule', kind: '*' })));
    ctx.container.register('retention.bree', { useValue: bree });
  },
  async stop(ctx) {
    if (ctx.container.isRegistered('retention.bree')) await ctx.container.resolve<Bree>('retention.bree').stop();
  },
});
