import { setTimeout as sleep } from 'node:timers/promises';
import { afterCommitted, stageDurable, type AdjustLine, type BatchWriter, type DurableWrite, type Logger, type RequestContext } from '../../kernel/index.js';
import type { Live, LiveHolds } from './live.js';
import { moveLines, type TrackedHold } from './reservation.js';
import type { CounterSeeds } from './seeds.js';
import type { Totals } from './totals.js';

export type HoldEnd = 'settled' | 'refused' | 'abandoned';

export const holdColumns = [
  'id', 'request_id', 'workspace_id', 'person_id', 'key_id', 'model', 'amount_micro_usd', 'charge_micro_usd', 'state', 'created_at', 'ended_at',
] as const;

/**
 * A settled hold's record, committed with the charge. A reaper that took the hold for abandoned
 * (its process stalled past the expiry) may have written it first: the settle wins.
 */
const settledWins = 'on conflict (id) do update set charge_micro_usd = excluded.charge_micro_usd, state = excluded.state, ended_at = excluded.ended_at';

/** The budget_holds row of a hold that is over; an abandoned hold's charge is unknown (null). */
export function holdRow(h: TrackedHold, charge: number | null, state: HoldEnd, endedAt: number): Array<string | number | null> {
  return [h.i, h.r, h.w, h.p, h.y, h.m, h.a, charge, state, h.t, endedAt];
}

/**
 * Ends holds: moves every held counter by (charge − hold) and forgets the hold in the cache in one
 * call, adds the charge to the durable running totals, and records the hold as over. A cache call
 * that fails is retried in the background: until it lands the counters over-count (never under).
 */
export class Settler {
  private readonly retrying = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly live: LiveHolds,
    private readonly totals: Totals,
    private readonly seeds: CounterSeeds,
    private readonly holdLog: BatchWriter,
    private readonly log: Logger,
    private readonly graceMs: number,
  ) {}

  /**
   * Settles a request that reached the provider (README "Crash safety"): stages its running
   * totals and its settled hold record in the request's durable commit (with the usage record),
   * and moves the counters only once that commit landed. The hold stays live (kept alive, never
   * reaped as ours) until the counters moved.
   */
  stage(rc: RequestContext, l: Live, charge: number): void {
    if (l.ended) return;
    l.ended = true;
    const h = l.hold;
    const t = Date.now();
    const lines = moveLines(h.k, charge - h.a, t, this.graceMs);
    const held: DurableWrite = { kind: 'insert', table: 'budget_holds', columns: holdColumns, rows: [holdRow(h, charge, 'settled', t)], onConflict: settledWins };
    if (charge > 0) stageDurable(rc, this.totals.stage({ workspaceId: h.w, personId: h.p, keyId: h.y }, charge, t), held);
    else stageDurable(rc, held);
    afterCommitted(rc, () => this.moved(h, l.member, lines));
  }

  /** Once the request's commit landed: the counters move (synchronously with the in-process cache). */
  private moved(h: TrackedHold, member: string, lines: AdjustLine[]): void | Promise<void> {
    // Nobody waits on this move: with Redis it rides with the next hold's call (AdjustOptions.defer).
    const moving = this.seeds.moveHold(h, member, lines, true);
    if (!(moving instanceof Promise)) return void this.live.all.delete(h.i);
    return moving.then(
      () => void this.live.all.delete(h.i),
      () => {
        this.retry(h, lines, member);
        this.live.all.delete(h.i);
      },
    );
  }

  /** `extra` lines (the rate-limit slot of an undone reservation) go in the same cache call. */
  async release(l: Live, charge: number, outcome: 'settled' | 'refused', extra: AdjustLine[] = []): Promise<void> {
    if (!this.live.end(l)) return;
    const h = l.hold;
    const t = Date.now();
    const lines = [...moveLines(h.k, charge - h.a, t, this.graceMs), ...extra];
    this.totals.add({ workspaceId: h.w, personId: h.p, keyId: h.y }, charge, t);
    this.holdLog.add(holdRow(h, charge, outcome, t));
    try {
      await this.seeds.moveHold(h, l.member, lines);
    } catch {
      this.retry(h, lines, l.member);
    }
  }

  private retry(h: TrackedHold, lines: AdjustLine[], member: string): void {
    const id = h.i;
    const run = (async () => {
      for (let attempt = 2; attempt <= 10 && !this.stopped; attempt++) {
        await sleep(Math.min(250 * 2 ** (attempt - 2), 30_000), undefined, { ref: false });
        try {
          await this.seeds.moveHold(h, member, lines);
          return;
        } catch {
          // still away; try again
        }
      }
      // The reaper will give back the hold; the charge is in the durable totals.
      this.log.warn('budget.settle_failed', { hold_id: id, attempts: 10 });
    })();
    this.retrying.add(run);
    void run.finally(() => this.retrying.delete(run));
  }

  stop(): void {
    this.stopped = true;
  }
}
