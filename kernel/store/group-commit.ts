import { setTimeout as sleep } from 'node:timers/promises';
import { defineToken } from '../container/tokens.js';
import type { Logger } from '../log/logger.js';
import type { Store } from './orm.js';

import { afterSteps, type DurableWrite } from './durable-writes.js';
import { plan } from './group-plan.js';

export type { DurableWrite, InsertRows, AddToTotals, TotalAfter, TotalsTable, AfterCommit, GroupStep } from './durable-writes.js';

/**
 * What waits for a commit: its writes, and what to call once they are durable and the group's
 * steps after them (AfterCommit) are over (or once they failed for good). Called as methods, so
 * one object per request can be all of it (kernel/pipeline/settling.ts).
 */
export interface CommitWaiter {
  readonly writes: DurableWrite[];
  done(): void;
  fail(err: unknown): void;
}

/** SQLSTATE classes and SQLite result codes that no retry can fix. */
function permanent(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  const errcode = Number((err as { errcode?: unknown }).errcode ?? 0);
  if (/^(22|23|42)/.test(code)) return true;
  return code === 'ERR_SQLITE_ERROR' && ((errcode & 0xff) === 19 || errcode === 1);
}

/** A duplicate key: the same request's writes were committed before (a retry after a lost reply). */
function duplicate(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  const errcode = Number((err as { errcode?: unknown }).errcode ?? 0);
  return code === '23505' || (code === 'ERR_SQLITE_ERROR' && (errcode === 1555 || errcode === 2067));
}

/**
 * Commits each request's money records (usage record, running totals, the settled hold) in ONE
 * transaction before any cache counter moves, so a process killed at any moment leaves either all
 * of them or none. Requests settling together share a transaction (group commit: one round trip
 * for many). A database that does not answer is retried until it does (the writes stay in
 * memory: only requests already running when it went away, since new ones are refused); a
 * duplicate key means an earlier attempt landed, so the request counts as committed.
 *
 * @example
 * await commits.commit([{ kind: 'insert', table: 'usage_records', columns, rows: [row] }]);
 */
export class GroupCommit {
  private readonly queue: CommitWaiter[] = [];
  private running: Promise<void> | undefined;
  private lingering: NodeJS.Timeout | undefined;
  private closing = false;
  /**
   * Since start, for metrics: transactions committed, requests they carried, attempts retried
   * after a failure, and requests whose writes failed for good. Plain numbers: nothing per commit.
   */
  readonly counts = { groups: 0, requests: 0, retries: 0, failed: 0 };

  /**
   * `delayMs`: how long the first request of a group waits for others before its commit starts
   * (`database.commitDelayMs`). Nobody is kept waiting by it (the reply is already sent); it makes
   * groups of several requests at low concurrency, where each would otherwise pay a transaction,
   * the upsert of its sixteen running totals and a round trip to the writer thread alone.
   */
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly retryMs = 250,
    private readonly maxGroup = 200,
    private readonly delayMs = 0,
  ) {}

  /** Resolves once `writes` are durable; rejects only for a statement no retry can fix. */
  commit(writes: DurableWrite[]): Promise<void> {
    return new Promise((done, fail) => this.enqueue({ writes, done, fail }));
  }

  /** As `commit`, for a caller that is its own waiter: no promise, no functions per request. */
  enqueue(waiter: CommitWaiter): void {
    this.queue.push(waiter);
    if (this.running) return;
    if (this.delayMs > 0 && this.queue.length < this.maxGroup) this.lingering ??= setTimeout(this.startLater, this.delayMs);
    else this.start();
  }

  private readonly startLater = (): void => this.start();

  private start(): void {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Requests waiting for their commit (diagnostics, tests). */
  get pending(): number {
    return this.queue.length;
  }

  /** Resolves when nothing waits (tests, and stop before the store closes); gives up after `ms`. */
  async idle(ms = 30_000): Promise<void> {
    if (this.lingering) this.start();
    const end = Date.now() + ms;
    while ((this.running || this.queue.length) && Date.now() < end) {
      await Promise.race([this.running, sleep(Math.min(50, end - Date.now()), undefined, { ref: false })]);
    }
  }

  /**
   * Stops retrying after `graceMs`: what is still waiting then is failed (and logged). A commit
   * still waiting on a silent database is not awaited past the grace either.
   */
  async close(graceMs: number): Promise<void> {
    await this.idle(graceMs);
    this.closing = true;
    await this.idle(1000);
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.group(this.queue.splice(0, this.maxGroup));
  }

  private async group(group: CommitWaiter[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        // Multi-row inserts and totals summed per key for the whole group (durable-writes.ts).
        const writes = group.flatMap((g) => g.writes);
        const statements = plan(writes, this.store.dialect === 'sqlite');
        const results = await this.store.commitWrites(statements);
        statements.forEach((st, i) => st.deliver?.(results[i]!));
        this.counts.groups++;
        this.counts.requests += group.length;
        this.committed(group, writes);
        return;
      } catch (err) {
        if (permanent(err)) {
          // One request's statement spoils the group: commit each on its own.
          if (group.length > 1) {
            for (const g of group) await this.group([g]);
            return;
          }
          if (duplicate(err)) this.committed(group, group[0]!.writes);
          else {
            this.log.error('store.commit_failed', { statements: group[0]!.writes.length, error_code: String((err as { code?: unknown }).code ?? 'error') });
            this.counts.failed++;
            group[0]!.fail(err);
          }
          return;
        }
        if (this.closing) {
          this.log.error('store.commit_abandoned', { requests: group.length + this.queue.length });
          this.counts.failed += group.length + this.queue.length;
          for (const g of [...group, ...this.queue.splice(0)]) g.fail(err);
          return;
        }
        this.counts.retries++;
        await sleep(Math.min(this.retryMs * 2 ** Math.min(attempt, 5), 8000), undefined, { ref: false });
      }
    }
  }

  /**
   * The group's writes are durable: each step staged with them runs once with its items, and the
   * group's requests are done when the steps are over. Not awaited: the next group's commit does
   * not wait for a step's own round trips. A step that fails is logged; it does its own retries.
   */
  private committed(group: CommitWaiter[], writes: DurableWrite[]): void {
    const steps = afterSteps(writes);
    let waits: Promise<unknown>[] | undefined;
    if (steps) {
      for (const [step, items] of steps) {
        try {
          const r = step.run(items);
          if (r instanceof Promise) (waits ??= []).push(r.catch((err: unknown) => this.stepFailed(items.length, err)));
        } catch (err) {
          this.stepFailed(items.length, err);
        }
      }
    }
    if (!waits) for (const g of group) g.done();
    else void Promise.all(waits).then(() => {
      for (const g of group) g.done();
    });
  }

  private stepFailed(requests: number, err: unknown): void {
    this.log.error('store.after_commit_failed', { requests, error_code: String((err as { code?: unknown } | null)?.code ?? (err as Error | null)?.name ?? 'error') });
  }
}

export const GroupCommitToken = defineToken<GroupCommit>('kernel.group-commit');
