import dc from 'node:diagnostics_channel';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { bindable, bindInPlace } from './bound-sql.js';
import { SqliteCheckpointer, type CheckpointerSettings } from './sqlite-checkpointer.js';
import type { Rows, WriteBehind, WriteStatement } from './write-behind.js';

/** How long a write waits for another connection's lock before it fails (as busy_timeout did). */
const maxWaitMs = 5000;

interface Job {
  work: () => Rows[];
  done: (rows: Rows[]) => void;
  fail: (err: Error) => void;
  waitedMs: number;
  pauseMs: number;
}

/** SQLITE_BUSY or SQLITE_LOCKED (extended codes carry the primary one in their low byte). */
function busy(err: unknown): boolean {
  const code = Number((err as { errcode?: unknown }).errcode ?? 0) & 0xff;
  return code === 5 || code === 6;
}

/**
 * Published (nothing, when nobody listens) as a write transaction begins and once it committed or
 * rolled back: the loop is busy in between (bench/timeline-probe.ts counts the requests it delays).
 */
export const transactionChannels = { start: dc.channel('svc.store.transaction.start'), end: dc.channel('svc.store.transaction.end') };

const stopped = (): Error => Object.assign(new Error('the store is closed'), { code: 'ERR_WRITER_STOPPED' });

/**
 * The embedded shape's writes behind the response (batched inserts, the settle's group commit): a
 * second SQLite connection, on the event loop thread. Its statements are prepared once and run in
 * microseconds, so a thread of their own cost more (a message each way, rows copied between
 * heaps, a second V8 heap) than it saved (decisions.md "Embedded writes on the event loop").
 *
 * What may block is kept off the loop: busy_timeout is 0, so a lock held by another connection (a
 * checkpoint, an admin write) is waited for with timers, in order, up to 5 s as busy_timeout was;
 * automatic checkpoints are off and done by a thread (sqlite-checkpointer.ts). Work starts on the
 * next turn of the loop (setImmediate), after the reply that caused it was written. WAL with
 * synchronous = normal: a commit is in the WAL file before it returns, so it survives a killed
 * process.
 */
export class SqliteWriter implements WriteBehind {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly columnNames = new WeakMap<StatementSync, string[]>();
  private readonly queue: Job[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly checkpointer: SqliteCheckpointer;

  constructor(file: string, checkpoints: Partial<CheckpointerSettings> = {}) {
    this.db = new DatabaseSync(file);
    this.db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma busy_timeout = 0; pragma wal_autocheckpoint = 0');
    this.checkpointer = new SqliteCheckpointer(file, checkpoints);
  }

  run(sql: string, params: unknown[]): Promise<void> {
    const bound = params.map(bindable) as SQLInputValue[];
    return this.submit(() => {
      this.statement(sql).run(...bound);
      return [];
    }).then(() => undefined);
  }

  /**
   * `statements` in one transaction. Their `params` are bound in place (booleans, dates): the
   * group commit plans fresh arrays for every attempt, and a copy of each list was most of what a
   * group allocated here.
   */
  commit(statements: WriteStatement[]): Promise<Rows[]> {
    for (const s of statements) bindInPlace(s.params);
    return this.submit(() => this.transaction(statements));
  }

  /** Waits (up to 5 s) for what is queued, then closes; what is still queued then fails. */
  async close(): Promise<void> {
    this.closed = true;
    const end = Date.now() + maxWaitMs;
    while (this.queue.length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    clearTimeout(this.timer);
    for (const job of this.queue.splice(0)) job.fail(stopped());
    this.db.close();
    await this.checkpointer.stop();
  }

  private submit(work: () => Rows[]): Promise<Rows[]> {
    if (this.closed) return Promise.reject(stopped());
    return new Promise((done, fail) => {
      this.queue.push({ work, done, fail, waitedMs: 0, pauseMs: 1 });
      if (!this.scheduled && this.timer === undefined) {
        this.scheduled = true;
        setImmediate(this.drain);
      }
    });
  }

  /** Runs queued work in order; a busy database pauses the queue (1, 2, 4 … ms) at its head. */
  private readonly drain = (): void => {
    this.scheduled = false;
    this.timer = undefined;
    let wrote = false;
    while (this.queue.length > 0) {
      const job = this.queue[0]!;
      let rows: Rows[];
      try {
        rows = job.work();
      } catch (err) {
        if (busy(err) && job.waitedMs < maxWaitMs && this.db.isOpen) {
          const pause = Math.min(job.pauseMs, maxWaitMs - job.waitedMs);
          job.waitedMs += pause;
          job.pauseMs = Math.min(job.pauseMs * 2, 100);
          this.timer = setTimeout(this.drain, pause);
          break;
        }
        this.queue.shift();
        job.fail(err as Error);
        continue;
      }
      this.queue.shift();
      wrote = true;
      job.done(rows);
    }
    if (wrote) this.checkpointer.wrote();
  };

  /** Runs `tx` in one write transaction; each statement's rows (empty unless `returning`). */
  private transaction(tx: WriteStatement[]): Rows[] {
    const watched = transactionChannels.start.hasSubscribers;
    if (watched) transactionChannels.start.publish(undefined);
    this.db.exec('begin immediate');
    try {
      const out: Rows[] = new Array(tx.length);
      for (let i = 0; i < tx.length; i++) {
        const s = tx[i]!;
        const params = s.params as SQLInputValue[];
        if (s.returning === true) out[i] = this.returned(this.statement(s.sql), params);
        else {
          this.statement(s.sql).run(...params);
          out[i] = [];
        }
      }
      this.db.exec('commit');
      return out;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec('rollback');
      throw err;
    } finally {
      if (watched) transactionChannels.end.publish(undefined);
    }
  }

  /**
   * Prepared statements by SQL text, the oldest dropped first past 400 (the texts are a small
   * fixed set, so that is rare). A hit does not move its entry: a delete and set per statement run
   * made the Map rebuild its table every few dozen runs, and replaced tables kept in the old
   * generation are what roster.ts describes.
   */
  private statement(sql: string): StatementSync {
    let stmt = this.statements.get(sql);
    if (stmt) return stmt;
    stmt = this.db.prepare(sql);
    this.statements.set(sql, stmt);
    if (this.statements.size > 400) this.statements.delete(this.statements.keys().next().value!);
    return stmt;
  }

  /**
   * The rows a `returning` statement gave, as plain objects built here from arrays. node:sqlite's
   * own row objects have a null prototype, and V8 gives each such object a hidden class of its own
   * (one per row: some eight per request in the group commit's totals); objects filled in the same
   * key order share one.
   */
  private returned(stmt: StatementSync, params: SQLInputValue[]): Rows {
    let names = this.columnNames.get(stmt);
    if (!names) {
      stmt.setReturnArrays(true);
      this.columnNames.set(stmt, (names = stmt.columns().map((c) => c.name)));
    }
    const rows = stmt.all(...params) as unknown as unknown[][];
    const out: Rows = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row: Record<string, unknown> = {};
      for (let j = 0; j < names.length; j++) row[names[j]!] = rows[i]![j];
      out[i] = row;
    }
    return out;
  }
}
