import { Throttled, type BatchWriter, type CachePort, type Logger, type Store } from '../../kernel/index.js';
import type { LiveHolds } from './live.js';
import { decodeTrack, holdsSet, moveLines, type TrackedHold } from './reservation.js';
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
  private lastError = 'error';
  /** A cache or database that is away fails every tick: reported once per interval, with a count. */
  private readonly failed = new Throttled((count) => this.log.warn('budget.reap_failed', { error_code: this.lastError, count }), 10_000);

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
      this.running = this.running.then(async () => void (await this.tick())).catch((err: unknown) => {
        this.lastError = String((err as { code?: string }).code ?? (err as Error).name ?? 'error');
        this.failed.hit();
      });
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

  /** True when this call gave the hold back (seeds.ts `moveHold`); a failed step leaves it in the set. */
  private async move(h: TrackedHold, member: string, delta: number, now: number): Promise<boolean> {
    const lines = moveLines(h.k, delta, now, this.s.graceMs);
    return (await this.seeds.moveHold(h, member, lines)).length === lines.length;
  }

  /**
   * Expired holds are read, not popped: each is moved and removed atomically (see `move`), so a
   * cache or database call failing half-way through a batch loses none of them.
   */
  private async reap(now: number): Promise<number> {
    let count = 0;
    let failure: unknown;
    for (let round = 0; round < 10; round++) {
      const members = await this.cache.expired(holdsSet, now, 100);
      if (members.length === 0) break;
      // Throws when the database cannot say which were settled: they stay for the next tick.
      const settled = await this.settledCharges(members);
      for (const member of members) {
        const h = decodeTrack(member);
        try {
          if (!h) {
            await this.cache.adjust([], { key: holdsSet, member }); // not a hold: nothing to give back
            continue;
          }
          if (this.live.all.has(h.i)) {
            // Ours and still running (this process was too busy to touch it): push its expiry ahead.
            await this.cache.reserve([], { key: holdsSet, member, score: now + this.s.expiryMs, replaces: member });
            continue;
          }
          const charge = settled.get(h.i);
          // Its process committed the charge and died before moving the counters: move them now.
          if (charge !== undefined) {
            if (await this.move(h, member, charge - h.a, now)) this.log.info('budget.settle_recovered', { hold_id: h.i });
            continue;
          }
          if (!(await this.move(h, member, -h.a, now))) continue;
          // Reserved ahead and never any request's (holds-ahead.ts): given back, nothing to record.
          if (h.r === '') continue;
          this.holdLog.add(holdRow(h, null, 'abandoned', now));
          count++;
        } catch (err) {
          failure ??= err; // it stays in the set: the next round or tick tries again
        }
      }
      if (failure !== undefined || members.length < 100) break;
    }
    if (count > 0) this.log.info('budget.holds_reaped', { count });
    if (failure !== undefined) throw failure;
    return count;
  }
}
