import { CountersMissing, type AdjustLine, type CachePort } from '../../kernel/index.js';
import { holdsSet, type TrackedHold } from './reservation.js';
import type { CounterSeeds } from './seeds.js';

/** Most holds moved by one cache call: a Redis script blocks every other client while it runs. */
const maxPerCall = 64;

interface Move {
  h: TrackedHold;
  member: string;
  lines: AdjustLine[];
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * The counter moves of settled holds, gathered into one cache call. The holds of one group commit
 * are settled together (their `afterCommit` steps run in the same turn of the event loop), and a
 * call each was a Redis round trip, a script run and an ioredis command object per request on top
 * of the hold's own. Each hold still moves all of its counters or none, only while it is in the set
 * of live holds (`adjust` with `required`, as `CounterSeeds.moveHold`); a hold whose counter the
 * cache lost takes the single path, which seeds it.
 *
 * @example
 * await moves.move(hold, member, moveLines(hold.k, charge - hold.a, Date.now(), graceMs));
 */
export class HoldMoves {
  private queue: Move[] = [];
  private scheduled = false;

  constructor(
    private readonly cache: CachePort,
    private readonly seeds: CounterSeeds,
  ) {}

  /** Resolves once the hold's counters moved (or another replica's reaper ended it first); rejects when the cache failed. */
  move(h: TrackedHold, member: string, lines: AdjustLine[]): Promise<void> {
    return new Promise((done, fail) => {
      this.queue.push({ h, member, lines, done, fail });
      if (this.scheduled) return;
      this.scheduled = true;
      // After every microtask of this turn: the rest of the group's settles join the call.
      process.nextTick(this.flush);
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const all = this.queue;
    this.queue = [];
    for (let at = 0; at < all.length; at += maxPerCall) void this.call(all.slice(at, at + maxPerCall));
  };

  private async call(moves: Move[]): Promise<void> {
    let results: Array<number[] | CountersMissing>;
    try {
      results = await this.cache.adjustEach(moves.map((m) => ({ lines: m.lines, untrack: { key: holdsSet, member: m.member, required: true } })));
    } catch (err) {
      for (const m of moves) m.fail(err);
      return;
    }
    for (let i = 0; i < moves.length; i++) {
      const m = moves[i]!;
      if (results[i] instanceof CountersMissing) this.seeds.moveHold(m.h, m.member, m.lines).then(() => m.done(), m.fail);
      else m.done();
    }
  }
}
