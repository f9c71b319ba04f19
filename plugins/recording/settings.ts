import { SnapshotSync, type CachePort, type Store } from '../../kernel/index.js';

export interface WorkspaceRecording {
  enabled: boolean;
  days: number;
}

/** SPEC.md Retention: recorded prompts and replies are kept 7 days unless the workspace sets 1 to 90. */
export const defaultDays = 7;

/**
 * Each workspace's recording choice, held in memory on every replica (the request path reads it
 * on every request) and reloaded when any replica changes it.
 */
export class RecordingSettings {
  readonly sync: SnapshotSync<Map<string, WorkspaceRecording>>;

  constructor(private readonly store: Store, cache: CachePort) {
    this.sync = new SnapshotSync({
      channel: 'recording.changed',
      initial: new Map(),
      cache,
      intervalMs: 30_000,
      load: async () => {
        const rows = await store.execute<{ workspace_id: string; enabled: number | string; days: number | string }>('select workspace_id, enabled, days from recording_settings');
        return new Map(rows.map((r) => [r.workspace_id, { enabled: Number(r.enabled) === 1, days: Number(r.days) }]));
      },
    });
  }

  of(workspaceId: string): WorkspaceRecording {
    return this.sync.current.get(workspaceId) ?? { enabled: false, days: defaultDays };
  }

  async set(workspaceId: string, enabled: boolean, days: number): Promise<void> {
    await this.store.execute(
      'insert into recording_settings (workspace_id, enabled, days, updated_at) values (?, ?, ?, ?) on conflict (workspace_id) do update set enabled = excluded.enabled, days = excluded.days, updated_at = excluded.updated_at',
      [workspaceId, enabled ? 1 : 0, days, Date.now()],
    );
    await this.sync.changed();
  }

  /** Workspaces with their own period, for the retention job. */
  async periods(): Promise<Array<{ workspaceId: string; days: number }>> {
    const rows = await this.store.execute<{ workspace_id: string; days: number | string }>('select workspace_id, days from recording_settings');
    return rows.map((r) => ({ workspaceId: r.workspace_id, days: Number(r.days) }));
  }
}
