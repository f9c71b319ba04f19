import { setTimeout as sleep } from 'node:timers/promises';
import { stageDurable, type AdjustCall, type AdjustLine, type AfterCommit, type BatchWriter, type DurableWrite, type GroupStep, type Logger, type RequestContext, type Untrack } from '../../kernel/index.js';
import type { Live, LiveHolds } from './live.js';
import { holdsSet, moveLines, type TrackedHold } from './reservation.js';
import type { CounterSeeds, HoldMoveCall } from './seeds.js';
import type { Totals } from './totals.js';

export type HoldEnd = 'settled' | 'refused' | 'abandoned';

/**
 * How long committed groups' hold moves wait for each other before they go to Redis together: at
 * one connection a commit lands every millisecond or so, each with two or three settles.
 */
const movesWaitMs = 5;

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

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
 * A settled hold's counter move, staged with the request's money records and made once they are
 * durable, together with the moves of every request committed in the same group (GroupStep). Its
 * lines are made only when it moves alone: moved with others, one set of lines serves them all.
 */
class HoldMove implements AfterCommit, HoldMoveCall {
  readonly kind = 'after';
  readonly untrack: Untrack;
  private own: AdjustLine[] | undefined;
  constructor(
    readonly step: GroupStep<HoldMove>,
    readonly hold: TrackedHold,
    /** charge − hold. */
    readonly delta: number,
    readonly at: number,
    private readonly graceMs: number,
    member: string,
  ) {
    this.untrack = { key: holdsSet, member, required: true };
  }

  get lines(): AdjustLine[] {
    return (this.own ??= moveLines(this.hold.k, this.delta, this.at, this.graceMs));
  }
}

/**
 * The holds of `moves` that move together: those on the same counters (one principal's caps on one
 * day: the same totals list) as ONE call, their deltas summed and their members removed together,
 * all or nothing; the others alone. At one connection a gathering holds one principal's few settles.
 */
function jointly(moves: readonly HoldMove[], graceMs: number): { joint: Array<{ call: AdjustCall; moves: HoldMove[] }>; alone: HoldMove[] } {
  const byTotals = new Map<TrackedHold['k'], HoldMove[]>();
  for (const m of moves) {
    const same = byTotals.get(m.hold.k);
    if (same) same.push(m);
    else byTotals.set(m.hold.k, [m]);
  }
  const joint: Array<{ call: AdjustCall; moves: HoldMove[] }> = [];
  const alone: HoldMove[] = [];
  for (const [k, same] of byTotals) {
    if (same.length === 1) {
      alone.push(same[0]!);
      continue;
    }
    let delta = 0;
    let at = 0;
    const more = new Array<string>(same.length - 1);
    for (let i = 0; i < same.length; i++) {
      delta += same[i]!.delta;
      at = Math.max(at, same[i]!.at);
      if (i > 0) more[i - 1] = same[i]!.untrack.member;
    }
    joint.push({ call: { lines: moveLines(k, delta, at, graceMs), untrack: { key: holdsSet, member: same[0]!.untrack.member, more, required: true } }, moves: same });
  }
  return { joint, alone };
}

/**
 * Ends holds: moves every held counter by (charge − hold) and forgets the hold in the cache in one
 * call, adds the charge to the durable running totals, and records the hold as over. A cache call
 * that fails is retried in the background: until it lands the counters over-count (never under).
 */
export class Settler {
  private readonly retrying = new Set<Promise<void>>();
  private stopped = false;
  /** Moves the holds of a committed group: one per settler, named by every HoldMove. */
  private readonly moves: GroupStep<HoldMove> = { run: (moves) => this.moveAll(moves) };
  /** Moves of committed groups waiting to go to the cache together (Redis), and when they go. */
  private waiting: HoldMove[] = [];
  private sending: Promise<void> | undefined;

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
   * and moves the counters only once that commit landed, in one cache call with the other holds
   * of its group. The hold stays live (kept alive, never reaped as ours) until the counters moved.
   */
  stage(rc: RequestContext, l: Live, charge: number): void {
    if (l.ended) return;
    l.ended = true;
    const h = l.hold;
    const t = Date.now();
    const move = new HoldMove(this.moves, h, charge - h.a, t, this.graceMs, l.member);
    const held: DurableWrite = { kind: 'insert', table: 'budget_holds', columns: holdColumns, rows: [holdRow(h, charge, 'settled', t)], onConflict: settledWins };
    if (charge > 0) stageDurable(rc, this.totals.stage({ workspaceId: h.w, personId: h.p, keyId: h.y }, charge, t), held, move);
    else stageDurable(rc, held, move);
  }

  /**
   * A group's commit landed: its holds' counters move, synchronously with the in-process cache. On
   * Redis the moves of the groups committed within `movesWaitMs` go in ONE cache call (a settle's
   * move was a call, a guarded deadline and a chain of promises of its own: bench/README.md
   * "Twenty-sixth look"); nobody waits on them but the settles they end, and until they land the
   * counters over-count, never under. A move that fails is retried on its own.
   */
  private moveAll(moves: HoldMove[]): void | Promise<void> {
    if (!this.seeds.inProcess) {
      for (const m of moves) this.waiting.push(m);
      return (this.sending ??= sleep(movesWaitMs).then(() => this.sendWaiting()));
    }
    // In process too, the holds on the same counters move as one; what that cannot apply, one by one.
    const { joint, alone } = jointly(moves, this.graceMs);
    for (const j of joint) {
      if (this.seeds.movedJointlyNow(j.call)) for (const m of j.moves) this.live.all.delete(m.hold.i);
      else for (const m of j.moves) alone.push(m);
    }
    let waits: Promise<void>[] | undefined;
    for (const m of alone) {
      const r = this.seeds.moveHold(m.hold, m.untrack.member, m.lines);
      if (!(r instanceof Promise)) this.live.all.delete(m.hold.i);
      else (waits ??= []).push(r.then(() => this.moved(m, true), (err: unknown) => this.moved(m, asError(err))));
    }
    if (waits) return Promise.all(waits).then(() => undefined);
  }

  /**
   * The waiting moves: those of holds on the same counters as one call each (`jointly`); what such
   * a call did not apply (a hold already gone, a counter the cache lost), and the others, hold by
   * hold, where a lost counter is seeded.
   */
  private async sendWaiting(): Promise<void> {
    const moves = this.waiting;
    this.waiting = [];
    this.sending = undefined;
    const { joint, alone } = jointly(moves, this.graceMs);
    if (joint.length > 0) {
      try {
        const outcomes = await this.seeds.moveJointly(joint.map((j) => j.call));
        for (let i = 0; i < joint.length; i++) {
          if (outcomes[i] === true) for (const m of joint[i]!.moves) this.moved(m, true);
          else for (const m of joint[i]!.moves) alone.push(m);
        }
      } catch {
        // No answer: every hold goes on its own; one the joint call did move is gone from the set
        // by then, and its own required check keeps it from moving twice.
        for (const j of joint) for (const m of j.moves) alone.push(m);
      }
    }
    if (alone.length === 0) return;
    try {
      const outcomes = await this.seeds.moveHolds(alone);
      for (let i = 0; i < alone.length; i++) this.moved(alone[i]!, outcomes[i]!);
    } catch (err) {
      for (const m of alone) this.moved(m, asError(err));
    }
  }

  /** One hold's move is over: forgotten as live, retried in the background when it failed. */
  private moved(m: HoldMove, outcome: boolean | Error): void {
    if (outcome instanceof Error) this.retry(m.hold, m.lines, m.untrack.member);
    this.live.all.delete(m.hold.i);
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
