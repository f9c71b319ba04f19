import { orderedUuid, type CachePort, type PendingReservation, type Principal, type ReserveLine } from '../../kernel/index.js';
import type { Cap } from './caps.js';
import { capLines, encodeTrack, heldTotals, holdsSet, moveLines, type TrackedHold } from './reservation.js';

/**
 * Holds reserved ahead (README "Holds reserved ahead"; bench/README.md "Twenty-third look").
 *
 * On Redis every request's hold was a round trip before the upstream call, and on shared cores
 * that round trip was most of the scale-out shape's tail. A replica that sees a key send steadily
 * reserves a few holds for it ahead, in one cache call, each an ordinary hold in `budget:holds`
 * (same counters, same record, an empty request id), limit-checked with room to spare; a request
 * whose hold fits one takes it locally and goes upstream at once. From then on it is the request's
 * hold: settle, tool-loop growth, reaping and crash recovery are unchanged. The rate limit's
 * window slots are taken ahead the same way (a counter moved by a few at once).
 *
 * Bounds: a hold taken ahead is a power of two at least the request's own (over-holds at most 2×);
 * refills leave room for `marginHolds` more on every counter, so near a cap or a window's limit no
 * hold is reserved ahead and every request reserves in the cache exactly as before; what was not
 * used is given back after `idleMs` without use, at stop and when the cache's state changes.
 */
export interface HoldsAheadSettings {
  /** Holds reserved per refill; 0 turns the pool off. */
  batch: number;
  /** Holds taken through the cache in one second that make a principal's caps worth a pool. */
  after: number;
  /** Room every counter must keep after a refill, in holds (or window slots) of the refill's size. */
  marginHolds: number;
  /** Unused holds and slots go back after this long without a take. */
  idleMs: number;
  /** Holds older than this are given back rather than taken (far inside the hold expiry). */
  maxAgeMs: number;
  holdExpiryMs: number;
  graceMs: number;
}

/** One hold reserved ahead: an ordinary hold in the cache, not yet any request's. */
export interface AheadHold {
  hold: TrackedHold;
  member: string;
  expiresAt: number;
}

/** The pool of one principal's applicable caps (one list per principal and snapshot). */
class CapsPool {
  readonly holds: AheadHold[] = [];
  /** Size of the next refill's holds (grows to the largest request seen, in powers of two). */
  amount = 0;
  refilling = false;
  coldUntil = 0;
  usedAt = 0;
  constructor(
    readonly caps: Cap[],
    readonly k: TrackedHold['k'],
    readonly principal: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>,
  ) {}
}

/** Slots of one rate-limit window counter taken ahead. */
interface Slots {
  line: ReserveLine;
  left: number;
  refilling: boolean;
  coldUntil: number;
  usedAt: number;
  /** The window's counter expires then: what is left expires with it. */
  endsAt: number;
}

/** Holds taken through the cache in the current second, per caps list (the demand that starts a pool). */
interface Meter { second: number; count: number }

/** A power of two at least `amount`: sizes a few hold buckets instead of one per request. */
const bucket = (amount: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, amount)));

export class HoldsAhead {
  private readonly meters = new WeakMap<Cap[], Meter>();
  private readonly pools = new Map<Cap[], CapsPool>();
  private readonly slots = new Map<string, Slots>();
  private readonly timer: NodeJS.Timeout;
  private readonly giving = new Set<Promise<unknown>>();

  constructor(
    private readonly cache: CachePort,
    private readonly s: HoldsAheadSettings,
  ) {
    this.timer = setInterval(() => this.sweep(Date.now()), Math.max(50, s.idleMs / 2));
    this.timer.unref();
  }

  /**
   * A hold of at least `amount` on `caps` reserved ahead, with every `pending` line's slots, taken
   * now; undefined when the pool has none (the request then reserves in the cache, as before).
   */
  take(caps: Cap[], principal: Principal, amount: number, pending: PendingReservation[], now: number): AheadHold | undefined {
    let pool = this.pools.get(caps);
    if (pool === undefined) {
      if (this.hot(caps, now)) this.open(caps, principal, amount, now);
      return undefined;
    }
    // A new UTC day (period keys) makes a new list of totals: the old holds go back.
    if (pool.k !== heldTotals(caps, now)) {
      this.close(pool, now);
      return undefined;
    }
    const top = pool.holds[pool.holds.length - 1];
    // Taken oldest first: one this old is given back with the rest and never taken, so none
    // outlives its expiry in the pool (to be reaped meanwhile) whatever `holdExpirySeconds` is.
    if (top !== undefined && now - top.hold.t >= this.s.maxAgeMs) {
      this.close(pool, now);
      return undefined;
    }
    if (top === undefined || top.hold.a < amount) {
      if (amount > pool.amount) pool.amount = bucket(amount);
      this.refill(pool, now);
      return undefined;
    }
    for (const p of pending) {
      const s = this.slots.get(p.line.key);
      if (s !== undefined && s.left >= p.line.amount) continue;
      if (s === undefined) this.openSlots(p.line, now);
      else this.refillSlots(s, now);
      return undefined;
    }
    for (const p of pending) {
      const s = this.slots.get(p.line.key)!;
      s.left -= p.line.amount;
      s.usedAt = now;
      if (s.left < this.s.batch * p.line.amount / 2) this.refillSlots(s, now);
    }
    pool.holds.pop();
    pool.usedAt = now;
    if (pool.holds.length <= this.s.batch / 2) this.refill(pool, now);
    return top;
  }

  /** Gives back every unused hold and slot (stop, or the cache is back), refills in flight included. */
  async giveBackAll(): Promise<void> {
    const now = Date.now();
    for (const pool of [...this.pools.values()]) this.close(pool, now);
    for (const s of [...this.slots.values()]) this.closeSlots(s, now);
    // A refill that lands now gives its holds straight back (its pool is closed): wait for those too.
    while (this.giving.size > 0) await Promise.all([...this.giving]);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.giveBackAll();
  }

  /** Counts a hold taken through the cache; true once this second's count reaches `after`. */
  private hot(caps: Cap[], now: number): boolean {
    const second = Math.floor(now / 1000);
    let m = this.meters.get(caps);
    if (m === undefined) this.meters.set(caps, (m = { second, count: 0 }));
    if (m.second !== second) {
      m.second = second;
      m.count = 0;
    }
    return ++m.count >= this.s.after;
  }

  private open(caps: Cap[], principal: Principal, amount: number, now: number): void {
    const pool = new CapsPool(caps, heldTotals(caps, now), { workspaceId: principal.workspaceId, personId: principal.personId, keyId: principal.keyId });
    pool.amount = bucket(amount);
    pool.usedAt = now;
    this.pools.set(caps, pool);
    this.refill(pool, now);
  }

  /**
   * Reserves `batch` holds in ONE cache call (the counters move by all of them, every member is
   * recorded), limit-checked so that every counter keeps room for `marginHolds` more. One that
   * does not fit (or a cache that fails or lost a counter) stops refills for a second: requests
   * then reserve in the cache one by one, which also seeds a lost counter.
   */
  private refill(pool: CapsPool, now: number): void {
    if (pool.refilling || now < pool.coldUntil) return;
    const a = pool.amount;
    const n = this.s.batch;
    const lines: ReserveLine[] = capLines(pool.caps, n * a, now, this.s.graceMs);
    for (const l of lines) {
      if (l.limit === null) continue;
      l.limit -= this.s.marginHolds * a;
      if (l.limit < n * a) {
        pool.coldUntil = now + 1000;
        return;
      }
    }
    pool.refilling = true;
    const p = pool.principal;
    const expiresAt = now + this.s.holdExpiryMs;
    const holds = new Array<AheadHold>(n);
    const members = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const hold: TrackedHold = { i: orderedUuid(now), a, k: pool.k, r: '', w: p.workspaceId, p: p.personId, y: p.keyId, m: '', t: now };
      members[i] = encodeTrack(hold);
      holds[i] = { hold, member: members[i]!, expiresAt };
    }
    const done = (ok: boolean) => {
      pool.refilling = false;
      if (!ok) pool.coldUntil = Date.now() + 1000;
      // Closed meanwhile (idle, a new day, the cache came back): straight back.
      else if (this.pools.get(pool.caps) === pool) pool.holds.unshift(...holds);
      else for (const h of holds) this.giveBack(h, Date.now());
    };
    const track = { key: holdsSet, member: members[0]!, score: expiresAt, more: members.slice(1) };
    this.track(this.cache.reserve(lines, track).then((r) => done(r.ok), () => done(false)));
  }

  private openSlots(line: ReserveLine, now: number): void {
    const s: Slots = { line, left: 0, refilling: false, coldUntil: 0, usedAt: now, endsAt: now + (line.ttlMs ?? this.s.idleMs) };
    this.slots.set(line.key, s);
    this.refillSlots(s, now);
  }

  private refillSlots(s: Slots, now: number): void {
    if (s.refilling || now < s.coldUntil) return;
    const { key, amount, limit, ttlMs } = s.line;
    const size = this.s.batch * amount;
    const capped = limit === null ? null : limit - this.s.marginHolds * size;
    if (capped !== null && capped < size) {
      s.coldUntil = now + 1000;
      return;
    }
    s.refilling = true;
    const done = (ok: boolean) => {
      s.refilling = false;
      if (!ok) s.coldUntil = Date.now() + 1000;
      else if (this.slots.get(key) === s) s.left += size;
      else this.giveBackSlots(key, size);
    };
    this.track(this.cache.reserve([{ key, amount: size, limit: capped, ttlMs }]).then((r) => done(r.ok), () => done(false)));
  }

  /** Unused holds go back after `idleMs` without a take (a take gives back holds grown old); ended windows are forgotten. */
  private sweep(now: number): void {
    for (const pool of this.pools.values()) if (now - pool.usedAt >= this.s.idleMs) this.close(pool, now);
    for (const s of this.slots.values()) if (now >= s.endsAt || now - s.usedAt >= this.s.idleMs) this.closeSlots(s, now);
  }

  private close(pool: CapsPool, now: number): void {
    if (this.pools.get(pool.caps) === pool) this.pools.delete(pool.caps);
    for (const h of pool.holds.splice(0)) this.giveBack(h, now);
  }

  private closeSlots(s: Slots, now: number): void {
    this.slots.delete(s.line.key);
    if (s.left > 0 && now < s.endsAt) this.giveBackSlots(s.line.key, s.left);
    s.left = 0;
  }

  /**
   * Gives a hold back whole, only if it is still in the set. Nobody waits on it; one that fails stays in the set until the reaper gives it back (no record written:
   * it was no request's).
   */
  private giveBack(h: AheadHold, now: number): void {
    this.track(this.cache.adjust(moveLines(h.hold.k, -h.hold.a, now, this.s.graceMs), { key: holdsSet, member: h.member, required: true }));
  }

  /** A counter the cache lost (or whose window ended) is not brought back by the give-back. */
  private giveBackSlots(key: string, count: number): void {
    this.track(this.cache.adjust([{ key, delta: -count, mustExist: true }]));
  }

  /** Cache calls of the pool still in flight (stop waits for them; a failure is nobody's error). */
  private track(p: Promise<unknown>): void {
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.giving.add(settled);
    void settled.then(() => this.giving.delete(settled));
  }
}
