import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface CheckpointerSettings {
  /** Between passive checkpoints while writes come in. */
  intervalMs: number;
  /** With no new WAL frames for this long, the thread truncates the WAL and ends. */
  quietMs: number;
  /** The WAL size that starts the thread (SQLite's own automatic checkpoint is at 1,000 pages, ~4 MiB). */
  startBytes: number;
  /** WAL frames (a page each) past which the thread makes the writer start the WAL over (sqlite-checkpoint-worker.ts). */
  restartFrames: number;
}

const defaults: CheckpointerSettings = { intervalMs: 1000, quietMs: 5000, startBytes: 4 * 1024 * 1024, restartFrames: 4096 };

/**
 * Keeps the embedded database's WAL short: checkpoints run on a thread of their own
 * (sqlite-checkpoint-worker.ts), started once the WAL passes `startBytes` and ending after a quiet
 * spell, so a service that is idle or lightly used holds no thread (its isolate and malloc arena
 * stayed ~10 MB of RSS after it ended), and a busy one's WAL stops growing once past `restartFrames`
 * (16 MiB: the file keeps the size it reached, 30–45 MB at 64 connections). Both connections
 * of the event loop have automatic checkpoints off: one there stalls every request behind an
 * fsync. The last connection to close checkpoints what is left (SQLite does so on close).
 */
export class SqliteCheckpointer {
  private worker: Worker | undefined;
  private lastCheckAt = 0;
  private readonly s: CheckpointerSettings;
  private stopping = false;

  constructor(
    private readonly file: string,
    settings: Partial<CheckpointerSettings> = {},
  ) {
    this.s = { ...defaults, ...settings };
  }

  /** Whether a checkpoint thread runs now (tests, diagnostics). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Called after writes: while no thread runs, looks at the WAL's size (at most once an interval). */
  wrote(): void {
    if (this.worker !== undefined || this.stopping) return;
    const now = Date.now();
    if (now - this.lastCheckAt < this.s.intervalMs) return;
    this.lastCheckAt = now;
    if (this.walBytes() >= this.s.startBytes) this.start();
  }

  private start(): void {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData: { file: this.file, intervalMs: this.s.intervalMs, quietMs: this.s.quietMs, restartFrames: this.s.restartFrames },
      // It keeps nothing: small heap bounds keep V8 from sizing its heap like the main thread's.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    worker.on('error', () => {}); // followed by 'exit'; the next write starts another
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
  }

  private walBytes(): number {
    try {
      return statSync(`${this.file}-wal`).size;
    } catch {
      return 0;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
