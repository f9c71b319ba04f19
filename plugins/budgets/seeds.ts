import { CountersMissing, type AdjustCall, type AdjustLine, type CachePort, type ReserveLine, type Untrack } from '../../kernel/index.js';
import { decodeTrack, holdsSet, movesSeeded, type TrackedHold } from './reservation.js';
import type { Totals } from './totals.js';

/** A hold's move as `moveHolds` takes it: its counter lines, and its member to remove (required). */
export interface HoldMoveCall extends AdjustCall {
  readonly hold: TrackedHold;
  readonly untrack: Untrack;
}

/** A budget counter line of a cache call: its running total, and the seed's offset from "now". */
export interface Seeded {
  total: string;
  /** A reservation adds its amount on top of the seed (0); a move of a held counter undoes its delta first (−delta). */
  offset: number;
}

/** Each line's seed source, or a function that lists them (called only when a counter is missing). */
export type SeededLines = Array<Seeded | undefined> | (() => Array<Seeded | undefined>);

/**
 * Seeds for counters the cache does not have, because it lost them or their period is new
 * (README "Crash safety"; issue 9 item 2). Budget lines go to the cache marked `mustExist`; when
 * some are missing, their seed is read fresh at that moment: the committed running total, this
 * process's charges not yet written, and every live hold on it (from the cache's set of holds).
 * A counter seeded this way never holds less than what was charged and held. A hold that moves
 * its own counter leaves itself out (`except`), because its delta already accounts for it.
 *
 * Seeding from the totals this replica keeps in memory could lag other replicas' commits by a
 * refresh interval: a counter re-seeded short admits holds against room that does not exist.
 */
export class CounterSeeds {
  constructor(
    private readonly cache: CachePort,
    private readonly totals: Totals,
  ) {}

  /**
   * Runs `call` over `lines` (aligned with `seeded`; undefined for lines that are not budget
   * counters, such as the rate-limit slot); on `CountersMissing` seeds those lines and runs again.
   * `seeded` may be a function: it is then called only when a counter is missing (rarely), so the
   * request path does not build the list.
   */
  async run<T>(lines: Array<ReserveLine | AdjustLine>, seeded: SeededLines, call: () => Promise<T>, except?: string): Promise<T> {
    try {
      return await call();
    } catch (err) {
      return this.recover(err, lines, seeded, call, except);
    }
  }

  /**
   * What `run` does once `call` failed with `err`, for a caller that made the first call itself
   * (the hold and the move, on every request: neither then makes closures for a rare failure).
   */
  async recover<T>(err: unknown, lines: Array<ReserveLine | AdjustLine>, seededOrMake: SeededLines, call: () => Promise<T>, except?: string): Promise<T> {
    let seeded = typeof seededOrMake === 'function' ? undefined : seededOrMake;
    // A counter can only go missing again if it expired in between: a few rounds suffice.
    for (let round = 1; ; round++) {
      if (!(err instanceof CountersMissing) || round >= 3) throw err;
      const known = (seeded ??= (seededOrMake as () => Array<Seeded | undefined>)());
      const missing = err.lines.filter((i) => known[i] !== undefined);
      if (missing.length < err.lines.length) throw err;
      const now = await this.current(missing.map((i) => known[i]!.total), except);
      for (const i of missing) lines[i]!.seed = now.get(known[i]!.total)! + known[i]!.offset;
      try {
        return await call();
      } catch (again) {
        err = again;
      }
    }
  }

  /**
   * Moves a hold's counters (`lines`, the hold's own first, as `moveLines` makes them) and removes
   * it from the cache's set in ONE step, only if it is still there: [] when it was not (another
   * replica, or the hold's own settle, got there first), so it is never moved twice. Settles and
   * the reaper both end holds through this.
   */
  moveHold(h: TrackedHold, member: string, lines: AdjustLine[]): number[] | Promise<number[]> {
    const track = { key: holdsSet, member, required: true };
    // The in-process cache answers at once: the settle's move then needs no promise.
    if (this.cache.adjustNow) {
      try {
        return this.cache.adjustNow(lines, track);
      } catch (err) {
        return this.recoverMove(err, h, lines, track);
      }
    }
    return this.cache.adjust(lines, track).then(undefined, (err: unknown) => this.recoverMove(err, h, lines, track));
  }

  /** The cache answers at once (in process): `moveHold` needs no promise there, and `moveHolds` is not needed. */
  get inProcess(): boolean {
    return this.cache.adjustNow !== undefined;
  }

  /**
   * Calls that each move several holds as one (their deltas summed, their members removed
   * together, all or nothing: settler.ts), in ONE cache call, as they are: true when a call
   * applied; otherwise (a member gone, a counter missing, an error) its holds must be moved one by
   * one (`moveHolds`), where a lost counter is seeded for each. Rejects when the cache could not be asked.
   */
  moveJointly(calls: readonly AdjustCall[]): Promise<Array<boolean | Error>> {
    return this.cache.adjustEach(calls);
  }

  /**
   * `moveJointly` for one call on the in-process cache, answered at once: true when it applied;
   * false when it did not (a member gone, a counter missing), so its holds move one by one.
   */
  movedJointlyNow(call: AdjustCall): boolean {
    try {
      return this.cache.adjustNow!(call.lines, call.untrack).length > 0;
    } catch {
      return false;
    }
  }

  /**
   * `moveHold` for many holds in ONE cache call (a group commit's settles, on Redis): for each
   * hold, whether it moved (false: it was gone), or the error that left its counters unmoved.
   * Rejects only when the cache could not be asked (no hold moved).
   */
  async moveHolds(moves: readonly HoldMoveCall[]): Promise<Array<boolean | Error>> {
    const outcomes = await this.cache.adjustEach(moves);
    for (let i = 0; i < outcomes.length; i++) {
      const o = outcomes[i]!;
      if (!(o instanceof CountersMissing)) continue;
      const m = moves[i]!;
      outcomes[i] = await this.recoverMove(o, m.hold, m.lines, m.untrack).then(
        (values) => values.length > 0 || m.lines.length === 0,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
    }
    return outcomes;
  }

  private recoverMove(err: unknown, h: TrackedHold, lines: AdjustLine[], track: Untrack): Promise<number[]> {
    return this.recover(err, lines, () => movesSeeded(h.k, lines[0]?.delta ?? 0), () => this.cache.adjust(lines, track), h.i);
  }

  /**
   * What each running total's counter should hold now: committed + unwritten charges + live holds.
   * The holds are read first: a hold leaves the set only after its charge was committed (or
   * added to the unwritten ones), so one that settles between the two reads is counted twice
   * (as its hold and as its charge), never zero times, as it could be the other way round.
   */
  private async current(keys: string[], except?: string): Promise<Map<string, number>> {
    const members = await this.cache.members(holdsSet);
    const out = await this.totals.fresh(keys);
    for (const member of members) {
      const h = decodeTrack(member);
      if (!h || h.i === except) continue;
      for (const [total] of h.k) if (out.has(total)) out.set(total, out.get(total)! + h.a);
    }
    return out;
  }
}
