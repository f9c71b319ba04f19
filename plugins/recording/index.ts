import { AdminApiToken, BatchWriter, CacheToken, definePlugin, RetentionToken, StoreToken, Type } from '../../kernel/index.js';
import { migrations } from './migrations.js';
import { recordingColumns, recordingRow } from './record.js';
import { recordingRoutes } from './routes.js';
import { defaultDays, RecordingSettings } from './settings.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'recording.flush_failed': { rows: number };
  }
}

interface State {
  settings: RecordingSettings;
  writer: BatchWriter;
}

/**
 * Recording of prompts and replies (SPEC.md "Records subject to retention"): off by default; a
 * workspace admin turns it on. Stored in `recordings`, apart from spans; shown to workspace admins
 * in the request's trace; deleted by the retention job after the workspace's period (1 to 90 days).
 */
export default definePlugin({
  name: 'recording',
  dependsOn: ['admin-api', 'identity'],
  config: Type.Object({ flushIntervalMs: Type.Integer({ minimum: 10, default: 1000 }) }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const settings = new RecordingSettings(store, ctx.use(CacheToken));
    const writer = new BatchWriter(store, 'recordings', recordingColumns, ctx.config.flushIntervalMs, 200, 10_000, (rows) => ctx.log.warn('recording.flush_failed', { rows }));
    ctx.container.register('recording.state', { useValue: { settings, writer } satisfies State });
    ctx.hook('conversation', (rc) => {
      const ws = rc.state.principal?.workspaceId;
      if (ws && settings.of(ws).enabled) rc.state.recordReply = true;
    });
    ctx.hook('settle', (rc) => {
      if (!rc.state.recordReply) return;
      const row = recordingRow(rc);
      if (row) writer.add(row);
    });
    recordingRoutes(ctx.use(AdminApiToken), store, settings, () => writer.flush());
  },
  async start(ctx) {
    const { settings } = ctx.container.resolve<State>('recording.state');
    await settings.sync.start();
    ctx.optional(RetentionToken)?.register({
      kind: 'recordings',
      summary: 'Recorded prompts and replies (workspaces that turned recording on)',
      table: 'recordings',
      keyColumn: 'request_id',
      timeColumn: 'created_at',
      defaultDays,
      minDays: 1,
      maxDays: 90,
      workspaceColumn: 'workspace_id',
      workspacePeriods: () => settings.periods(),
    });
  },
  async stop(ctx) {
    const { settings, writer } = ctx.container.resolve<State>('recording.state');
    await writer.flush();
    await settings.sync.stop();
  },
});
