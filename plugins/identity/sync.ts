import { randomBytes } from 'node:crypto';
import type { CachePort, Logger, Store } from '../../kernel/index.js';
import { emptySnapshot, loadSnapshot, type Snapshot } from './snapshot.js';

export const changeChannel = 'identity.changed';
const retryMs = 2000;

/**
 * Keeps this replica's snapshot current. A write on this replica reloads it before the response
 * (so the writer sees its own change) and publishes a change message; every other replica reloads
 * when the message arrives. Requests for a reload coalesce: while one runs, any number of new
 * requests share a single follow-up reload, so a burst of changes costs at most two loads.
 */
export class SnapshotSync {
  private snap: Snapshot = emptySnapshot();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private stopped = false;
  /** Tells our own change messages apart from other replicas'. */
  private readonly origin = randomBytes(8).toString('hex');

  constructor(
    private readonly store: Store,
    private readonly cache: CachePort,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  get current(): Snapshot {
    return this.snap;
  }

  /**
   * Loads the first snapshot, listens for other replicas' changes and starts the safety-net timer.
   * A cache that is down at start does not stop the service (health reports it): the subscription
   * is retried in the background and the timer keeps the snapshot fresh meanwhile.
   */
  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => this.reload().catch(() => {}), this.intervalMs);
    this.timer.unref();
    await this.listen();
  }

  private async listen(): Promise<void> {
    try {
      const off = await this.cache.subscribe(changeChannel, (message) => {
        if (message !== this.origin) this.reload().catch(() => {});
      });
      if (this.stopped) await off();
      else this.unsubscribe = off;
      // Changes made while we were not listening.
      if (this.retry) await this.reload().catch(() => {});
    } catch (err) {
      if (this.stopped) return;
      this.log.warn('identity.subscribe_failed', { error_code: (err as { code?: string }).code ?? 'unreachable' });
      this.retry = setTimeout(() => void this.listen(), retryMs);
      this.retry.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
    await this.unsubscribe?.().catch(() => {});
    await this.queued?.catch(() => {});
  }

  /**
   * After a committed write: reload here, then tell the other replicas. The write stands even if
   * the reload fails (logged as identity.snapshot_failed); the next reload picks it up.
   */
  async changed(): Promise<void> {
    await this.reload().catch(() => {});
    await this.cache.publish(changeChannel, this.origin).catch(() => {
      // The 30 s reload still brings the other replicas up to date if the cache is away.
    });
  }

  /** A reload that starts after this call; concurrent calls share one. */
  reload(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return this.begin();
    this.queued = this.running.catch(() => {}).then(() => {
      this.queued = null;
      return this.begin();
    });
    return this.queued;
  }

  private begin(): Promise<void> {
    const started = performance.now();
    const run = loadSnapshot(this.store, Date.now()).then(
      (snap) => {
        this.snap = snap;
        this.log.debug('identity.snapshot_loaded', {
          persons: snap.persons.size,
          keys: snap.keysByHash.size,
          sessions: snap.sessionsByHash.size,
          duration_ms: Math.round(performance.now() - started),
        });
      },
      (err: unknown) => {
        this.log.warn('identity.snapshot_failed', { error_code: (err as { code?: string }).code ?? 'error' });
        throw err;
      },
    );
    const tracked: Promise<void> = run.finally(() => {
      if (this.running === tracked) this.running = null;
    });
    this.running = tracked;
    return tracked;
  }
}
