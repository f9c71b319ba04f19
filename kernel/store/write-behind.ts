import { Worker } from 'node:worker_threads';
import { bindable } from './bound-sql.js';

/** One statement of a write transaction; `returning` asks for its rows. */
export interface WriteStatement {
  sql: string;
  params: unknown[];
  returning?: boolean;
}

export type Rows = Array<Record<string, unknown>>;

/** Runs writes off the request path. */
export interface WriteBehind {
  /** One statement whose result nobody waits on before answering (batched inserts). */
  run(sql: string, params: unknown[]): Promise<void>;
  /** `statements` in one transaction; resolves with each one's rows once committed. */
  commit(statements: WriteStatement[]): Promise<Rows[]>;
  close(): Promise<void>;
}

interface Reply { id: number; rows?: Rows[]; error?: string; code?: string; errcode?: number }

/**
 * SQLite's writer: statements go to a worker thread with its own connection and cached prepared
 * statements (sqlite-writer-worker.ts). The worker is unreferenced while idle, so it never holds
 * the process open.
 */
export class SqliteWriter implements WriteBehind {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { done: (rows: Rows[]) => void; fail: (e: Error) => void }>();
  private seq = 0;
  private closed = false;

  constructor(private readonly file: string) {
    this.spawn();
  }

  /** A worker that died (it should not) is replaced; what it had not answered fails and is retried by its caller. */
  private spawn(): Worker {
    // It keeps little alive (prepared statements, the message at hand): small heap bounds keep
    // V8 from growing its heap to the process defaults.
    const worker = new Worker(new URL('./sqlite-writer-worker.js', import.meta.url), {
      workerData: { file: this.file },
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    });
    worker.unref();
    worker.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.error === undefined) p.done(m.rows ?? []);
      else p.fail(Object.assign(new Error(m.error), { code: m.code, errcode: m.errcode }));
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      const err = Object.assign(new Error('the SQLite writer thread stopped'), { code: 'ERR_WRITER_STOPPED' });
      for (const p of this.pending.values()) p.fail(err);
      this.pending.clear();
    });
    worker.on('error', () => {}); // followed by 'exit'
    this.worker = worker;
    return worker;
  }

  async run(sql: string, params: unknown[]): Promise<void> {
    await this.send({ sql, params: params.map(bindable) });
  }

  commit(statements: WriteStatement[]): Promise<Rows[]> {
    return this.send({ tx: statements.map((s) => ({ sql: s.sql, params: s.params.map(bindable), returning: s.returning })) });
  }

  private send(message: object): Promise<Rows[]> {
    return new Promise((done, fail) => {
      const id = ++this.seq;
      if (this.closed) return fail(Object.assign(new Error('the store is closed'), { code: 'ERR_WRITER_STOPPED' }));
      const worker = this.worker ?? this.spawn();
      this.pending.set(id, { done, fail });
      worker.ref();
      worker.postMessage({ id, ...message });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.worker?.terminate();
  }
}
