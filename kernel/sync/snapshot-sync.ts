import { randomBytes } from 'node:crypto';
import type { CachePort } from '../cache/port.js';

export interface SnapshotSyncOptions<T> {
  /** Cache channel the change messages travel on, e.g. `identity.changed`. */
  channel: string;
  /** The value before the first load. */
  initial: T;
  /** Reads the whole snapshot from the database. */
  load: () => Promise<T>;
  cache: CachePort;
  /** Safety-net reload period, for change messages lost while the cache was away. */
  intervalMs: number;
  onLoaded?: (snapshot: T, durationMs: number) => void;
  onError?: (err: unknown) => void;
}

/**
 * Keeps one replica's in-memory snapshot of database rows current, so the request path never
 * reads the database. A write on this replica calls `changed()`: it reloads here before the
 * response (the writer sees its own change) and publishes a change message; every other replica
 * reloads when the message arrives, and every `intervalMs` anyway. Reload requests coalesce:
 * while one load runs, any number of new requests share a single follow-up load.
 *
 * @example
 * const sync = new SnapshotSync({ channel: 'catalog.changed', initial: empty, load: () => readAll(store), cache, intervalMs: 30_000 });
 * await sync.start();            // plugin start()
 * sync.current.models.get(name); // request path
 * await sync.changed();          // after an admin write
 */
export class SnapshotSync<T> {
  private snap: T;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  /** Tells this replica's own change messages apart from other replicas'. */
  private readonly origin = randomBytes(8).toString('hex');

  constructor(private readonly o: SnapshotSyncOptions<T>) {
    this.snap = o.initial;
  }

  get current(): T {
    return this.snap;
  }

  /** First load, then listen for changes (the cache may be down: the subscription waits for it). */
  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => this.reload().catch(() => {}), this.o.intervalMs);
    this.timer.unref();
    this.unsubscribe = await this.o.cache.subscribe(this.o.channel, (message) => {
      if (message !== this.origin) this.reload().catch(() => {});
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unsubscribe?.().catch(() => {});
    await Promise.all([this.running, this.queued].map((p) => p?.catch(() => {})));
  }

  /** After a committed write: reload here, then tell the other replicas (best effort: the timer covers a lost message). */
  async changed(): Promise<void> {
    await this.reload().catch(() => {});
    await this.o.cache.publish(this.o.channel, this.origin).catch(() => {});
  }

  /** A load that starts after this call; concurrent calls share one. */
  reload(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return this.begin();
    this.queued = this.running
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.begin();
      });
    return this.queued;
  }

  private begin(): Promise<void> {
    const started = performance.now();
    const run = this.o.load().then(
      (snap) => {
        this.snap = snap;
        this.o.onLoaded?.(snap, Math.round(performance.now() - started));
      },
      (err: unknown) => {
        this.o.onError?.(err);
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
