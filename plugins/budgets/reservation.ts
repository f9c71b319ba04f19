import type { ReserveLine } from '../../kernel/index.js';
import { capScopeId, totalKey, type Cap } from './caps.js';
import { counterTtlMs, type Period } from './periods.js';

/** The cache's sorted set of live holds, scored by when each expires unless kept alive. */
export const holdsSet = 'budget:holds';

/** The cache counter of a running total: the settled total plus the holds in flight. */
export const counterKey = (total: string): string => `budget:${total}`;

/** One cap's line of a reservation. */
export interface CapLine {
  cap: Cap;
  /** Running total key (durable record). */
  total: string;
  line: ReserveLine;
}

/**
 * The lines that reserve `amount` against every cap: the counter may grow up to the cap's amount.
 * A counter the cache does not have starts from the settled total known in memory (`known`), so
 * seeding needs no database call. Caps sharing a counter (same scope and period) keep the lowest
 * amount, so one counter is never added to twice.
 */
export function capLines(caps: Cap[], amount: number, t: number, known: (total: string) => number, graceMs: number): CapLine[] {
  const byKey = new Map<string, CapLine>();
  for (const cap of caps) {
    const total = totalKey(cap.scope, capScopeId(cap), cap.period, t);
    const seen = byKey.get(total);
    if (seen && seen.line.limit! <= cap.amountMicroUsd) continue;
    byKey.set(total, {
      cap,
      total,
      line: { key: counterKey(total), amount, limit: cap.amountMicroUsd, ttlMs: counterTtlMs(cap.period, t, graceMs), seed: known(total) },
    });
  }
  return [...byKey.values()];
}

/** What the cache's set of live holds remembers of a hold, so any replica can reap it. */
export interface TrackedHold {
  /** Hold id. */
  i: string;
  /** Amount held on each counter. */
  a: number;
  /** Running totals (with their period) the hold was reserved on. */
  k: Array<[total: string, period: Period]>;
  /** Request id, workspace, person, key, model, taken at. */
  r: string;
  w: string;
  p: string;
  y: string | null;
  m: string;
  t: number;
}

export const encodeTrack = (h: TrackedHold): string => JSON.stringify(h);

/** Null for a member that is not ours (never throws on foreign data). */
export function decodeTrack(member: string): TrackedHold | null {
  try {
    const h = JSON.parse(member) as TrackedHold;
    return typeof h.i === 'string' && Number.isSafeInteger(h.a) && Array.isArray(h.k) ? h : null;
  } catch {
    return null;
  }
}

/**
 * Lines that move held counters by `delta` (settle: charge − hold; reap: −hold). A counter the
 * cache lost restarts from the known total plus this hold, so adding `delta` lands on the truth.
 */
export function moveLines(keys: TrackedHold['k'], amount: number, delta: number, t: number, known: (total: string) => number, graceMs: number) {
  return keys.map(([total, period]) => ({ key: counterKey(total), delta, ttlMs: counterTtlMs(period, t, graceMs), seed: known(total) + amount }));
}
