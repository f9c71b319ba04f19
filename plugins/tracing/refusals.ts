import { Throttled, Type, type AdminApi, type Logger, type RequestContext, type Static, type Store } from '../../kernel/index.js';

/**
 * Refusals whose rate a caller sets without a valid key or past their limit (issue 25): 401
 * `invalid_api_key` and 429 `rate_limited`. Written as counters, not rows: per minute and code one
 * row in `refusal_counts`, so what a flood writes is bounded whatever its rate; a few of each
 * minute keep their full usage record and trace (`sampledRefusalsPerMinute`) for investigation.
 */
export const countedCodes = new Set(['invalid_api_key', 'rate_limited']);

const minuteMs = 60_000;

// Shared answers of `counted` (frozen): a served request made a fresh object each.
const notCounted = Object.freeze({ counted: false, sample: false });
const countedOnly = Object.freeze({ counted: true, sample: false });
const countedSampled = Object.freeze({ counted: true, sample: true });

export class RefusalTally {
  /** `${minute}|${code}` → refusals not yet written. */
  private readonly pending = new Map<string, number>();
  /** Full records kept this minute, per code. */
  private sampled = new Map<string, number>();
  private sampledMinute = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly logged: Throttled;
  private flushing: Promise<void> = Promise.resolve();
  private since = 0;

  constructor(
    private readonly store: Store,
    private readonly samplesPerMinute: number,
    flushIntervalMs: number,
    logIntervalMs: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), flushIntervalMs);
    this.timer.unref();
    this.logged = new Throttled((count) => log.info('request.refusals_counted', { count, sampled_per_minute: samplesPerMinute }), logIntervalMs);
  }

  /**
   * Counts the request when it is a counted refusal; true when it should also keep its full
   * record (one of the minute's samples).
   */
  counted(rc: RequestContext): { counted: boolean; sample: boolean } {
    const code = rc.state.outcome?.errorCode;
    if (!code || !countedCodes.has(code) || rc.state.outcome?.sent) return notCounted;
    const now = Date.now();
    const minute = now - (now % minuteMs);
    const key = `${minute}|${code}`;
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    this.since++;
    this.logged.hit();
    if (minute !== this.sampledMinute) {
      this.sampledMinute = minute;
      this.sampled = new Map();
    }
    const taken = this.sampled.get(code) ?? 0;
    if (taken >= this.samplesPerMinute) return countedOnly;
    this.sampled.set(code, taken + 1);
    return countedSampled;
  }

  /** Adds the pending counts to their rows (one upsert per minute and code). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const rows = [...this.pending];
      this.pending.clear();
      for (const [key, count] of rows) {
        const [minute, code] = key.split('|') as [string, string];
        try {
          await this.store.writeBehind(
            'insert into refusal_counts (minute_start, code, refusals) values (?, ?, ?) on conflict (minute_start, code) do update set refusals = refusal_counts.refusals + excluded.refusals',
            [Number(minute), code, count],
          );
        } catch {
          // The database is away: keep the count for the next flush (a few keys at most).
          this.pending.set(key, (this.pending.get(key) ?? 0) + count);
        }
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

const CountsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; default: the last 24 hours' })),
});
const CountsView = Type.Object({
  data: Type.Array(Type.Object({ minute: Type.String({ description: 'ISO 8601 start of the minute' }), code: Type.String(), count: Type.Integer() })),
});

/** GET /admin/v1/refusal-counts: the counted refusals per minute and code (instance admins). */
export function refusalRoutes(admin: AdminApi, store: Store): void {
  admin.route({
    method: 'GET', path: '/refusal-counts', summary: 'Refusals counted rather than recorded (401 invalid_api_key, 429 rate_limited), per minute (instance admins)', tag: 'tracing',
    access: 'instance-admin', query: CountsQuery, response: CountsView,
    handler: async ({ query }: { query: Static<typeof CountsQuery> }) => {
      const since = query.since ? Date.parse(query.since) : Date.now() - 86_400_000;
      const rows = await store.execute<{ minute_start: string | number; code: string; refusals: string | number }>(
        'select minute_start, code, refusals from refusal_counts where minute_start >= ? order by minute_start, code',
        [since],
      );
      return { data: rows.map((r) => ({ minute: new Date(Number(r.minute_start)).toISOString(), code: r.code, count: Number(r.refusals) })) };
    },
  });
}
