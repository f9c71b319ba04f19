import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface CheckpointerSettings {
  /** Between passive checkpoints while writes come in. */
  intervalMs: number;
  /** With no new WAL frames for this long, the thread truncates the WAL and ends. */
  quietMs: number;
}

const defaults: CheckpointerSettings = { intervalMs: 1000, quietMs: 5000 };

/** A WAL this large while no thread runs (writes that raced its end) starts one again. */
const restartBytes = 4 * 1024 * 1024;

/**
 * Keeps the embedded database's WAL short: checkpoints run on a thread of their own
 * (sqlite-checkpoint-worker.ts), started by the first write and ending after a quiet spell, so an
 * idle service holds no thread and its WAL is truncated. Both connections of the event loop have
 * automatic checkpoints off: one there stalls every request behind an fsync.
 */
export class SqliteCheckpointer {
  private worker: Worker | undefined;
  private lastWriteAt = 0;
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

  /** Called after writes: starts the thread when none runs. One timestamp read otherwise. */
  wrote(): void {
    this.lastWriteAt = Date.now();
    if (this.worker === undefined && !this.stopping) this.start();
  }

  private start(): void {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData: { file: this.file, intervalMs: this.s.intervalMs, quietMs: this.s.quietMs },
      // It keeps nothing: small heap bounds keep V8 from sizing its heap like the main thread's.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    let retiredAt = 0;
    worker.on('message', () => (retiredAt = Date.now()));
    worker.on('error', () => {}); // followed by 'exit'; the next write starts another
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.stopping || retiredAt === 0) return;
      // A write that landed while it was deciding to end, or a WAL grown meanwhile: start again.
      if (this.lastWriteAt >= retiredAt - this.s.intervalMs || this.walBytes() > restartBytes) this.start();
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
