import type { CommitWaiter, DurableWrite } from '../store/group-commit.js';
import type { SettleError } from './pipeline.js';
import type { Roster } from './roster.js';

export const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';

/**
 * One request's settle after its hooks ran: its durable writes waiting in the group commit, then
 * the steps that wait for them (ctx.afterCommit), in order. One object that is its own commit
 * waiter and its own entry among the settles in flight: an async function awaiting a promise of
 * the commit, and a promise tracked with two more callbacks, cost some 0.5 KB a request.
 */
export class Settling implements CommitWaiter {
  /** Its slot among the settles in flight (Pipeline's roster). */
  slot = -1;
  private finished = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly inFlight: Roster<Settling | Promise<void>>,
    private readonly requestId: string,
    readonly writes: DurableWrite[],
    private readonly afterCommit: ReadonlyArray<() => Promise<void> | void> | undefined,
    private readonly onError: SettleError,
  ) {}

  /** The writes are durable: the steps after them run. */
  done(): void {
    this.after(0);
  }

  /** The writes failed for good: told, and nothing after them runs. */
  fail(err: unknown): void {
    this.onError('kernel', err, this.requestId);
    this.leave();
  }

  /** Resolves once the settle is over (made only for whoever waits: shutdown, tests). */
  ended(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => {
      const before = this.wake;
      this.wake = before ? () => (before(), resolve()) : resolve;
    });
  }

  /** Runs the steps from `from` on; one that returns a promise is waited for before the next. */
  private after(from: number): void {
    const steps = this.afterCommit;
    for (let i = from; i < (steps?.length ?? 0); i++) {
      let result: unknown;
      try {
        result = steps![i]!();
      } catch (err) {
        this.onError('kernel', err, this.requestId);
        continue;
      }
      if (isThenable(result)) {
        result.then(
          () => this.after(i + 1),
          (err: unknown) => {
            this.onError('kernel', err, this.requestId);
            this.after(i + 1);
          },
        );
        return;
      }
    }
    this.leave();
  }

  private leave(): void {
    this.finished = true;
    this.inFlight.remove(this.slot, this);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
