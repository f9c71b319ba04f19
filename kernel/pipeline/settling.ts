import type { CommitWaiter, DurableWrite } from '../store/group-commit.js';
import type { SettleError } from './pipeline.js';
import type { Roster } from './roster.js';

/**
 * One request's settle after its hooks ran: its durable writes waiting in the group commit, which
 * calls `done` once they (and the group's steps after them, GroupStep) are over. One object that is
 * its own commit waiter and its own entry among the settles in flight: an async function awaiting
 * a promise of the commit, and a promise tracked with two more callbacks, cost some 0.5 KB a request.
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
    private readonly onError: SettleError,
  ) {}

  /** The writes are durable and what followed them is over. */
  done(): void {
    this.leave();
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

  private leave(): void {
    this.finished = true;
    this.inFlight.remove(this.slot, this);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
