import type { BatchWriter, CachePort, Logger, Store } from '../../kernel/index.js';
import type { LiveHolds } from './live.js';
import { decodeTrack, holdsSet, moveLines, movesSeeded, type TrackedHold } from './reservation.js';
import type { CounterSeeds } from './seeds.js';
import { holdRow } from './settler.js';

export interface ReaperSettings {
  expiryMs: number;
  intervalMs: number;
  graceMs: number;
}

/**
 * Finds holds that no process will settle (their process crashed or lost the cache for longer
 * than the expiry): every replica keeps its own live holds' expiry pushed ahead, and takes
 * expired ones out of the cache's set (atomically, so one replica reaps each), gives their amount
 * back to every counter and records them `abandoned`.
 */
export class Reaper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly cache: CachePort,
    private readonly store: Store,
    private readonly live: LiveHolds,
    private readonly seeds: CounterSeeds,
    private readonly holdLog: BatchWriter,
    private readonly log: Logger,
    private readonly s: ReaperSettings,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.running.then(async () => void (await this.tick())).catch(() => {});
    }, this.s.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round: keep ours alive, then reap what expired. */
  async tick(now = Date.now()): Promise<number> {
    await this.keepAlive(now);
    return this.reap(now);
  }

  private async keepAlive(now: number): Promise<void> {
    for (const l of this.live.all.values()) {
      if (l.expiresAt - now > this.s.expiryMs / 2) continue;
      const expiresAt = now + this.s.expiryMs;
      // An empty reservation only re-scores the member: one call per hold, twice per expiry. Only
      // while it is there: a hold settled, grown (cover.ts) or reaped meanwhile never comes back.
      const member = l.member;
      const r = await this.cache.reserve([], { key: holdsSet, member, score: expiresAt, replaces: member });
      if (r.ok && l.member === member) l.expiresAt = expiresAt;
    }
  }

  /** Charges of the holds among `members` whose settle was committed (by hold id). */
  private async settledCharges(members: string[]): Promise<Map<string, number>> {
    const ids = members.map((m) => decodeTrack(m)?.i).filter((i): i is string => i !== undefined);
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const rows = await this.store.execute<{ id: string; charge_micro_usd: string | number }>(
      `select id, charge_micro_usd from budget_holds where state = 'settled' and id in (${ids.map(() => '?').join(',')})`,
      ids,
    );
    for (const r of rows) out.set(r.id, Number(r.charge_micro_usd));
    return out;
  }

  /** Moves a reaped hold's counters (it is out of the set already); a lost counter is seeded fresh. */
  private move(h: TrackedHold, delta: number, now: number): Promise<number[]> {
    const lines = moveLines(h.k, delta, now, this.s.graceMs);
    return this.seeds.run(lines, movesSeeded(h.k, delta), () => this.cache.adjust(lines), h.i);
  }

  private async reap(now: number): Promise<number> {
    let count = 0;
    for (let round = 0; round < 10; round++) {
      const members = await this.cache.popExpired(holdsSet, now, 100);
      let settled: Map<string, number>;
      try {
        settled = await this.settledCharges(members);
      } catch {
        // The database cannot say which were settled: give them back to the set for the next round.
        for (const member of members) await this.cache.reserve([], { key: holdsSet, member, score: now });
        break;
      }
      for (const member of members) {
        const h = decodeTrack(member);
        if (!h) continue;
        const mine = this.live.all.get(h.i);
        if (mine) {
          // Ours and still running (this process was too busy to touch it): put it back.
          await this.cache.reserve([], { key: holdsSet, member, score: now + this.s.expiryMs });
          continue;
        }
        const charge = settled.get(h.i);
        if (charge !== undefined) {
          // Its process committed the charge and died before moving the counters: move them now.
          await this.move(h, charge - h.a, now);
          this.log.info('budget.settle_recovered', { hold_id: h.i });
          continue;
        }
        await this.move(h, -h.a, now);
        this.holdLog.add(holdRow(h, null, 'abandoned', now));
        count++;
      }
      if (members.length < 100) break;
    }
    if (count > 0) this.log.info('budget.holds_reaped', { count });
    return count;
  }
}
