import { defineToken } from '../container/tokens.js';

/** One counter of an all-or-nothing reservation. */
export interface ReserveLine {
  key: string;
  /** Added to the counter when every line fits. */
  amount: number;
  /** The line fits when current + amount <= limit; null means no limit (always fits). */
  limit: number | null;
  /** Expiry set when the counter is created (rate-limit windows, budget periods). */
  ttlMs?: number;
  /**
   * Value the counter starts from when it does not exist (for example a running total loaded from
   * the database after the cache lost its data). Applied even when the reservation is refused.
   */
  seed?: number;
  /**
   * When the counter does not exist (the cache lost it, or its period is new), change nothing and
   * reject with `CountersMissing` naming it, so the caller can read a fresh seed and try again.
   * Ignored when `seed` is given.
   */
  mustExist?: boolean;
}

export type ReserveResult =
  | { ok: true; values: number[] }
  /**
   * `index` is the first line that did not fit; `current` its value; `ttlMs` its remaining expiry (-1 none).
   * `gone`: the member `track.replaces` named was not in its set (index -1): nothing changed, nothing was seeded.
   */
  | { ok: false; index: number; current: number; ttlMs: number; gone?: true };

export interface AdjustLine {
  key: string;
  delta: number;
  ttlMs?: number;
  seed?: number;
  /** As on a reserve line: a counter that does not exist is reported, nothing changes. */
  mustExist?: boolean;
}

/**
 * A `reserve` or `adjust` changed nothing because counters marked `mustExist` do not exist.
 *
 * @example
 * try { await cache.reserve(lines); } catch (err) { if (err instanceof CountersMissing) seed(err.lines); }
 */
export class CountersMissing extends Error {
  constructor(
    /** Indexes of the missing lines, in the order given. */
    readonly lines: number[],
  ) {
    super(`cache: ${lines.length} counter(s) marked mustExist do not exist`);
    this.name = 'CountersMissing';
  }
}

/** A member of a sorted set with a score, for expiring records (holds left by a crashed process). */
export interface Tracked {
  key: string;
  member: string;
  score: number;
  /**
   * A member this one takes the place of (a hold that grew), or `member` itself to re-score it:
   * then nothing changes unless that member is still in the set, so a record another client
   * already removed is never brought back.
   */
  replaces?: string;
  /**
   * More members recorded with the same score in the same step (never with `replaces`): several
   * holds reserved ahead in one call. No member may hold a newline (Redis sends them as one text).
   */
  more?: readonly string[];
}

/**
 * A member to remove from its set in the same step, with `more` members removed with it (the holds
 * of one principal's settles, moved as one); `required`: only if every one is still there.
 */
export type Untrack = Omit<Tracked, 'score' | 'replaces'> & { required?: boolean };

/** One call of `adjustEach`: what `adjust` takes. */
export interface AdjustCall {
  readonly lines: AdjustLine[];
  readonly untrack?: Untrack;
}

/**
 * The cache port: the shared, atomic state that replicas agree on. In memory (single node) every
 * call is one synchronous step; on Redis every call is atomic (a Lua script where several keys
 * change together), and the counter calls of one event-loop turn share a round trip. Keys are given
 * without the configured prefix; the implementation adds it.
 *
 * @example
 * const r = await cache.reserve([
 *   { key: 'rl:p1:1732170000', amount: 1, limit: 60, ttlMs: 60_000 },
 *   { key: 'cap:ws:w1:2026-11', amount: 1200, limit: 1_000_000, seed: 0 },
 * ], { key: 'holds', member: 'h1', score: Date.now() + 600_000 });
 */
export interface CachePort {
  readonly kind: 'memory' | 'redis';
  /** Resolves when the cache answers; rejects otherwise (health checks, fail-closed checks). */
  ping(): Promise<void>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; true when it set. */
  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean>;
  del(...keys: string[]): Promise<void>;
  /** Adds `by` to an integer counter, creating it (with `ttlMs`) at 0 if absent; returns the new value. */
  incr(key: string, by: number, ttlMs?: number): Promise<number>;
  /** Remaining expiry in ms; -1 when the key has none, -2 when it does not exist. */
  ttl(key: string): Promise<number>;
  /**
   * All lines fit, then all are added (and `track` is recorded, in place of `track.replaces`), or
   * nothing changes (`gone` when `track.replaces` was not in the set; `CountersMissing`: see `mustExist`).
   */
  reserve(lines: ReserveLine[], track?: Tracked): Promise<ReserveResult>;
  /**
   * `reserve`, answered at once: only an in-process cache has it (nothing to wait for, nothing to
   * time out). Throws where `reserve` rejects. A budget hold on every request uses it when present,
   * so the request's hold phase stays synchronous (no promise, no suspended frame).
   */
  reserveNow?(lines: ReserveLine[], track?: Tracked): ReserveResult;
  /**
   * Adds every delta at once (and removes `untrack` from its set); returns the new values. With
   * `untrack.required`, nothing changes unless the member was still in its set, and the result is
   * empty then: a settle retried after a lost reply, or raced by a reaper, never moves twice.
   */
  adjust(lines: AdjustLine[], untrack?: Untrack): Promise<number[]>;
  /**
   * Several `adjust` calls in one step (one round trip and script run on Redis), each all or
   * nothing on its own and applied in order: for each call, true when it applied, false when its
   * required member was gone (nothing changed), or the error that call alone got (CountersMissing,
   * …). No counter values come back (a caller that reads them uses `adjust`). Rejects only when the
   * cache could not be asked at all. The settles of a group commit move their holds so (budgets).
   */
  adjustEach(calls: readonly AdjustCall[]): Promise<Array<boolean | Error>>;
  /** `adjust`, answered at once (in-process cache only, as `reserveNow`): a settle's counter move. */
  adjustNow?(lines: AdjustLine[], untrack?: Untrack): number[];
  /** Every member of a sorted set (empty when there is none); for rare paths, never per request. */
  members(key: string): Promise<string[]>;
  /**
   * Up to `limit` members of a sorted set whose score is <= maxScore, lowest first, left in place:
   * a caller that must act on each (a reaper) removes it with `adjust(…, { required: true })`, so a
   * member whose handling failed half-way is still there to be tried again.
   */
  expired(key: string, maxScore: number, limit: number): Promise<string[]>;
  publish(channel: string, message: string): Promise<void>;
  /**
   * Calls `handler` for each message on the channel, from any replica (this one included); returns
   * an unsubscribe. Resolves even while the cache is unreachable: the subscription is made when it
   * connects. Messages published while it was away are lost, so subscribers also reload periodically.
   */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const CacheToken = defineToken<CachePort>('kernel.cache');
