import { Worker } from 'node:worker_threads';
import { bindable } from './bound-sql.js';

/** Runs write-behind SQL (no result rows) off the request path. */
export interface WriteBehind {
  run(sql: string, params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * SQLite's write-behind: statements go to a worker thread with its own connection and cached
 * prepared statements. The worker is unreferenced while idle, so it never holds the process open.
 */
export class SqliteWriter implements WriteBehind {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { done: () => void; fail: (e: Error) => void }>();
  private seq = 0;

  constructor(file: string) {
    this.worker = new Worker(new URL('./sqlite-writer-worker.js', import.meta.url), { workerData: { file } });
    this.worker.unref();
    this.worker.on('message', (m: { id: number; error?: string; code?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error === undefined) p.done();
      else p.fail(Object.assign(new Error(m.error), { code: m.code }));
    });
    this.worker.on('error', (err) => {
      for (const p of this.pending.values()) p.fail(err);
      this.pending.clear();
    });
  }

  run(sql: string, params: unknown[]): Promise<void> {
    return new Promise((done, fail) => {
      const id = ++this.seq;
      this.pending.set(id, { done, fail });
      this.worker.ref();
      this.worker.postMessage({ id, sql, params: params.map(bindable) });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
