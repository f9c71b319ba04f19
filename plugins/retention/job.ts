import { randomId, type CachePort, type Logger, type Retention, type RetentionKind, type RetentionRun, type Store } from '../../kernel/index.js';
import { cutoff, purge, purgePerWorkspace, type PurgeOptions } from './purge.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'retention.started': { run_id: string; trigger: string };
    'retention.finished': { run_id: string; trigger: string; duration_ms: number; deleted: number; kinds: readonly string[] };
    'retention.failed': { run_id: string; trigger: string; kind: string };
    'retention.skipped': { trigger: string; reason: string };
  }
}

interface RunRow {
  id: string;
  run_trigger: RetentionRun['trigger'];
  status: string;
  started_at: number | string;
  duration_ms: number | null;
  counts: string | null;
}

/** The period in force for a kind: the admin's, else its default. */
export type Periods = Map<string, number | null>;

/**
 * The retention job: kinds registered by their plugins, periods from `retention_periods`, one run
 * at a time. A scheduled run is claimed by inserting its slot's row (one replica wins); a run of
 * any trigger also holds a cache lock so Run now never overlaps the daily run on another replica.
 */
export class RetentionJob implements Retention {
  private readonly registered = new Map<string, RetentionKind>();

  constructor(
    private readonly store: Store,
    private readonly cache: CachePort,
    private readonly log: Logger,
    private readonly options: PurgeOptions & { lockTtlMs: number },
  ) {}

  register(kind: RetentionKind): void {
    if (this.registered.has(kind.kind)) throw new Error(`retention kind ${kind.kind} is registered twice`);
    this.registered.set(kind.kind, kind);
  }

  kinds(): RetentionKind[] {
    return [...this.registered.values()];
  }

  async periods(): Promise<Periods> {
    const rows = await this.store.execute<{ kind: string; days: number | null }>('select kind, days from retention_periods');
    return new Map(rows.map((r) => [r.kind, r.days === null ? null : Number(r.days)]));
  }

  /** The days in force for `kind` given the admin's settings. */
  daysOf(kind: RetentionKind, set: Periods): number | null | 'expired' {
    if (kind.defaultDays === 'expired') return 'expired';
    return set.has(kind.kind) ? set.get(kind.kind)! : kind.defaultDays;
  }

  async setPeriod(kind: string, days: number | null): Promise<void> {
    const now = Date.now();
    await this.store.execute(
      'insert into retention_periods (kind, days, updated_at) values (?, ?, ?) on conflict (kind) do update set days = excluded.days, updated_at = excluded.updated_at',
      [kind, days, now],
    );
  }

  /** The scheduled run of the slot starting at `slot`: runs on the one replica whose claim lands. */
  async runScheduled(slot: Date): Promise<RetentionRun | null> {
    const id = `schedule:${slot.toISOString().slice(0, 16)}`;
    return this.execute(id, 'schedule', new Date());
  }

  run(options: { now?: Date; trigger?: RetentionRun['trigger'] } = {}): Promise<RetentionRun | null> {
    const trigger = options.trigger ?? 'manual';
    return this.execute(`${trigger}:${randomId(9, 'base64url')}`, trigger, options.now ?? new Date());
  }

  private async execute(id: string, trigger: RetentionRun['trigger'], now: Date): Promise<RetentionRun | null> {
    const scheduled = trigger === 'schedule';
    // A scheduled slot is claimed first (one replica wins it), then waits for a manual run
    // elsewhere to end; Run now and the command never wait: they report that one is running.
    if (scheduled && !(await this.claim(id, trigger))) {
      this.log.info('retention.skipped', { trigger, reason: 'already_run' });
      return null;
    }
    if (!(await this.lock(id, scheduled))) {
      this.log.info('retention.skipped', { trigger, reason: 'running_elsewhere' });
      if (scheduled) await this.store.execute('delete from retention_runs where id = ?', [id]);
      return null;
    }
    try {
      if (!scheduled) await this.claim(id, trigger);
      const started = Date.now();
      await this.store.execute('update retention_runs set started_at = ? where id = ?', [started, id]);
      this.log.info('retention.started', { run_id: id, trigger });
      const counts = await this.purgeAll(id, trigger, now);
      const failed = Object.values(counts).some((c) => c < 0);
      const duration = Date.now() - started;
      await this.store.execute('update retention_runs set status = ?, duration_ms = ?, counts = ? where id = ?', [failed ? 'failed' : 'done', duration, JSON.stringify(counts), id]);
      const deleted = Object.values(counts).reduce((a, c) => a + Math.max(0, c), 0);
      this.log.info('retention.finished', { run_id: id, trigger, duration_ms: duration, deleted, kinds: Object.keys(counts) });
      return { id, trigger, started_at: new Date(started).toISOString(), duration_ms: duration, status: failed ? 'failed' : 'done', counts };
    } finally {
      await this.cache.del(this.lockKey).catch(() => {});
    }
  }

  private readonly lockKey = 'retention:lock';

  /** The run's row; false when another replica already inserted it (its slot is taken). */
  private async claim(id: string, trigger: string): Promise<boolean> {
    const rows = await this.store.execute('insert into retention_runs (id, run_trigger, status, started_at) values (?, ?, ?, ?) on conflict (id) do nothing returning id', [id, trigger, 'running', Date.now()]);
    return rows.length > 0;
  }

  /** The cache lock; a scheduled run waits for it (up to the lock's expiry), others do not. */
  private async lock(id: string, wait: boolean): Promise<boolean> {
    const until = Date.now() + (wait ? this.options.lockTtlMs : 0);
    for (;;) {
      if (await this.cache.setIfAbsent(this.lockKey, id, this.options.lockTtlMs)) return true;
      if (Date.now() >= until) return false;
      // Unref: a run waiting for the lock must not keep a stopping process alive.
      await new Promise((r) => setTimeout(r, Math.min(5000, this.options.lockTtlMs / 10)).unref());
    }
  }

  /** Rows deleted per kind; -1 marks a kind whose purge failed (the others still run). */
  private async purgeAll(id: string, trigger: string, now: Date): Promise<Record<string, number>> {
    const set = await this.periods();
    const counts: Record<string, number> = {};
    for (const kind of this.registered.values()) {
      const days = this.daysOf(kind, set);
      try {
        if (kind.workspacePeriods && days !== 'expired') counts[kind.kind] = await purgePerWorkspace(this.store, kind, days, now, this.options);
        else {
          const before = cutoff(kind, days, now);
          counts[kind.kind] = before === null ? 0 : await purge(this.store, kind, before, this.options);
        }
      } catch {
        counts[kind.kind] = -1;
        this.log.error('retention.failed', { run_id: id, trigger, kind: kind.kind });
      }
    }
    return counts;
  }

  async lastRun(): Promise<RetentionRun | null> {
    const [row] = await this.store.execute<RunRow>("select * from retention_runs where status <> 'running' order by started_at desc limit 1");
    if (!row) return null;
    return {
      id: row.id,
      trigger: row.run_trigger,
      started_at: new Date(Number(row.started_at)).toISOString(),
      duration_ms: Number(row.duration_ms ?? 0),
      status: row.status === 'done' ? 'done' : 'failed',
      counts: row.counts ? (JSON.parse(row.counts) as Record<string, number>) : {},
    };
  }
}
