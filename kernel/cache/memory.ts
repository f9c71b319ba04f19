import { ChurnMap } from '../pipeline/churn-map.js';
import { CountersMissing, type AdjustCall, type AdjustLine, type CachePort, type ReserveLine, type ReserveResult, type Tracked, type Untrack } from './port.js';

/**
 * expiresAt 0 = no expiry. Counters keep their number (a hold moves some ten counters a request:
 * a string would be parsed and re-formatted at every move); `get` reads either as text.
 */
interface Entry { value: string | number; expiresAt: number }

/**
 * The single-node cache: a Map in this process. Every operation runs to completion synchronously
 * inside one call, so reservations are atomic without locks.
 */
export class MemoryCache implements CachePort {
  readonly kind = 'memory' as const;
  private readonly data = new Map<string, Entry>();
  /** Tracking sets: members come and go with requests (hold records), so a ChurnMap each (churn-map.ts says why). */
  private readonly sets = new Map<string, ChurnMap<number>>();
  private readonly channels = new Map<string, Set<(m: string) => void>>();
  private sweepAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async ping(): Promise<void> {}

  private live(key: string, now = this.now()): Entry | undefined {
    const e = this.data.get(key);
    if (e && e.expiresAt !== 0 && e.expiresAt <= now) {
      this.data.delete(key);
      return undefined;
    }
    return e;
  }

  /** Drops expired keys now and then so windows that are never read again do not pile up. */
  private sweep(now = this.now()): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 10_000;
    for (const [k, e] of this.data) if (e.expiresAt !== 0 && e.expiresAt <= now) this.data.delete(k);
  }

  private write(key: string, value: string | number, ttlMs?: number, now = this.now()): void {
    this.data.set(key, { value, expiresAt: ttlMs && ttlMs > 0 ? now + ttlMs : 0 });
  }

  private num(key: string, seed: number | undefined, ttlMs: number | undefined, now: number): number {
    const e = this.live(key, now);
    if (e) return typeof e.value === 'number' ? e.value : Number(e.value);
    if (seed !== undefined) this.write(key, seed, ttlMs, now);
    return seed ?? 0;
  }

  private add(key: string, delta: number, ttlMs?: number, now = this.now()): number {
    const e = this.live(key, now);
    if (e) {
      e.value = (typeof e.value === 'number' ? e.value : Number(e.value)) + delta;
      return e.value;
    }
    this.write(key, delta, ttlMs, now);
    return delta;
  }

  async get(key: string): Promise<string | null> {
    const value = this.live(key)?.value;
    return value === undefined ? null : String(value);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.sweep();
    this.write(key, value, ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.write(key, value, ttlMs);
    return true;
  }

  async del(...keys: string[]): Promise<void> {
    // Tracking sets are keys too (as on Redis), so deleting one must not leave its members behind.
    for (const k of keys) {
      this.data.delete(k);
      this.sets.delete(k);
    }
  }

  async incr(key: string, by: number, ttlMs?: number): Promise<number> {
    this.sweep();
    return this.add(key, by, ttlMs);
  }

  async ttl(key: string): Promise<number> {
    return this.ttlNow(key);
  }

  private ttlNow(key: string): number {
    const e = this.live(key);
    if (!e) return -2;
    return e.expiresAt === 0 ? -1 : e.expiresAt - this.now();
  }

  /**
   * Refuses (changing nothing) when a `mustExist` line without a seed has no counter. Loops, one
   * clock read, no array unless one is missing: a hold and its settle call this on every request.
   */
  private present(lines: Array<Pick<ReserveLine, 'key' | 'seed' | 'mustExist'>>, now: number): void {
    let missing: number[] | undefined;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (l.mustExist && l.seed === undefined && !this.live(l.key, now)) (missing ??= []).push(i);
    }
    if (missing) throw new CountersMissing(missing);
  }

  async reserve(lines: ReserveLine[], track?: Tracked): Promise<ReserveResult> {
    return this.reserveNow(lines, track);
  }

  reserveNow(lines: ReserveLine[], track?: Tracked): ReserveResult {
    const now = this.now();
    this.sweep(now);
    if (track?.replaces !== undefined && !this.sets.get(track.key)?.has(track.replaces)) return { ok: false, index: -1, current: 0, ttlMs: -2, gone: true };
    this.present(lines, now);
    // Every line is read (and seeded) before any limit is judged, as one script on Redis does.
    let refused = -1;
    let current = 0;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      const value = this.num(l.key, l.seed, l.ttlMs, now);
      if (refused < 0 && l.limit !== null && value + l.amount > l.limit) {
        refused = i;
        current = value;
      }
    }
    if (refused >= 0) return { ok: false, index: refused, current, ttlMs: this.ttlNow(lines[refused]!.key) };
    const values = new Array<number>(lines.length);
    for (let i = 0; i < lines.length; i++) values[i] = this.add(lines[i]!.key, lines[i]!.amount, lines[i]!.ttlMs, now);
    if (track?.replaces !== undefined) this.zset(track.key).delete(track.replaces);
    if (track) {
      const set = this.zset(track.key);
      set.set(track.member, track.score);
      if (track.more) for (const m of track.more) set.set(m, track.score);
    }
    return { ok: true, values };
  }

  async adjust(lines: AdjustLine[], untrack?: Untrack): Promise<number[]> {
    return this.adjustNow(lines, untrack);
  }

  async adjustEach(calls: readonly AdjustCall[]): Promise<Array<boolean | Error>> {
    return calls.map((c) => {
      if (c.untrack?.required && !this.tracked(c.untrack)) return false;
      try {
        this.adjustNow(c.lines, c.untrack);
        return true;
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    });
  }

  adjustNow(lines: AdjustLine[], untrack?: Untrack): number[] {
    if (untrack?.required && !this.tracked(untrack)) return [];
    const now = this.now();
    this.present(lines, now);
    const values = new Array<number>(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      this.num(l.key, l.seed, l.ttlMs, now);
      values[i] = this.add(l.key, l.delta, l.ttlMs, now);
    }
    if (untrack) {
      const set = this.sets.get(untrack.key);
      set?.delete(untrack.member);
      if (untrack.more) for (const m of untrack.more) set?.delete(m);
    }
    return values;
  }

  /** Whether every member of `untrack` is in its set. */
  private tracked(untrack: Untrack): boolean {
    const set = this.sets.get(untrack.key);
    if (!set?.has(untrack.member)) return false;
    if (untrack.more) for (const m of untrack.more) if (!set.has(m)) return false;
    return true;
  }

  private zset(key: string): ChurnMap<number> {
    let s = this.sets.get(key);
    if (!s) this.sets.set(key, (s = new ChurnMap()));
    return s;
  }

  async members(key: string): Promise<string[]> {
    return this.sets.get(key)?.keys() ?? [];
  }

  async expired(key: string, maxScore: number, limit: number): Promise<string[]> {
    const s = this.sets.get(key);
    if (!s || limit <= 0) return [];
    return s.pairs().filter(([, score]) => score <= maxScore).sort((a, b) => a[1] - b[1]).slice(0, limit).map(([m]) => m);
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const h of this.channels.get(channel) ?? []) queueMicrotask(() => h(message));
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    let hs = this.channels.get(channel);
    if (!hs) this.channels.set(channel, (hs = new Set()));
    hs.add(handler);
    return async () => {
      hs.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.data.clear();
    this.sets.clear();
    this.channels.clear();
  }
}
