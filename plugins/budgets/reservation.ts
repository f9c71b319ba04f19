import type { AdjustLine, ReserveLine } from '../../kernel/index.js';
import type { Seeded } from './seeds.js';
import { capScopeId, totalKey, type Cap } from './caps.js';
import { counterTtlMs, periodEnd, type Period } from './periods.js';

/** The cache's sorted set of live holds, scored by when each expires unless kept alive. */
export const holdsSet = 'budget:holds';

/** The cache counter of a running total: the settled total plus the holds in flight. */
export const counterKey = (total: string): string => `budget:${total}`;

/** One cap's line of a reservation: the cache's line itself, with the cap and its running total (one object a cap, not two). */
export interface CapLine extends ReserveLine {
  cap: Cap;
  /** Running total key (durable record). */
  total: string;
}

/**
 * The lines that reserve `amount` against every cap: the counter may grow up to the cap's amount.
 * A counter the cache does not have is reported, not started from zero (`mustExist`): its seed is
 * read fresh (seeds.ts). Caps sharing a counter (same scope and period) keep the lowest amount, so
 * one counter is never added to twice. Fresh line objects every call (a seed may be set on them).
 */
export function capLines(caps: Cap[], amount: number, t: number, graceMs: number): CapLine[] {
  const picks = capPlan(caps, t).picks;
  const lines = new Array<CapLine>(picks.length);
  for (let i = 0; i < picks.length; i++) {
    const { cap, total, counter, end } = picks[i]!;
    lines[i] = { key: counter, amount, limit: cap.amountMicroUsd, ttlMs: end === null ? undefined : end - t + graceMs, mustExist: true, cap, total };
  }
  return lines;
}

/** The running totals (with their period) that `capLines` at `t` reserves on, in its order: one shared array a day. */
export function heldTotals(caps: Cap[], t: number): TrackedHold['k'] {
  return capPlan(caps, t).held;
}

/**
 * Which caps `capLines` reserves on and their counters, worked out once per applicable-caps list
 * (applicableCaps keeps one per principal and snapshot) and UTC day, since only the amount and
 * the expiry change from request to request.
 */
interface CapPick { cap: Cap; total: string; counter: string; end: number | null }
interface CapPlan { day: number; picks: CapPick[]; held: TrackedHold['k'] }
const capPlans = new WeakMap<Cap[], CapPlan>();
function capPlan(caps: Cap[], t: number): CapPlan {
  const day = Math.floor(t / 86_400_000);
  let plan = capPlans.get(caps);
  if (!plan || plan.day !== day) {
    const byTotal = new Map<string, CapPick>();
    for (const cap of caps) {
      const { total, counter, end } = periodOf(cap, t);
      const seen = byTotal.get(total);
      if (seen && seen.cap.amountMicroUsd <= cap.amountMicroUsd) continue;
      byTotal.set(total, { cap, total, counter, end });
    }
    const picks = [...byTotal.values()];
    plan = { day, picks, held: picks.map((p) => [p.total, p.cap.period]) };
    capPlans.set(caps, plan);
  }
  return plan;
}

/**
 * A cap's running total, counter key and period end at `t`: the same all day (period keys change
 * only at a UTC midnight), so they are kept on the cap (snapshot caps are replaced, never edited).
 */
interface CapPeriod { day: number; total: string; counter: string; end: number | null }
const capPeriods = new WeakMap<Cap, CapPeriod>();
function periodOf(cap: Cap, t: number): CapPeriod {
  const day = Math.floor(t / 86_400_000);
  let p = capPeriods.get(cap);
  if (!p || p.day !== day) {
    const total = totalKey(cap.scope, capScopeId(cap), cap.period, t);
    p = { day, total, counter: counterKey(total), end: periodEnd(cap.period, t) };
    capPeriods.set(cap, p);
  }
  return p;
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

/**
 * The hold as JSON. One JSON.stringify writes one flat string; building it from template pieces
 * (to write the day's shared totals list once) made some twenty intermediate strings, and the
 * cache flattened the result again to use it as a key (bench/README.md "Eighteenth look").
 */
export function encodeTrack(h: TrackedHold): string {
  return JSON.stringify(h);
}

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
 * cache lost is reported (`mustExist`) and seeded fresh less `delta`, so the move lands on the truth.
 */
export function moveLines(keys: TrackedHold['k'], delta: number, t: number, graceMs: number): AdjustLine[] {
  const counters = counterKeysOf(keys);
  const lines = new Array<AdjustLine>(keys.length);
  for (let i = 0; i < keys.length; i++) lines[i] = { key: counters[i]!, delta, ttlMs: counterTtlMs(keys[i]![1], t, graceMs), mustExist: true };
  return lines;
}

/** The counter keys of a hold's totals list, made once per list (most holds share a day's list: heldTotals). */
const counterKeys = new WeakMap<TrackedHold['k'], string[]>();
function counterKeysOf(keys: TrackedHold['k']): string[] {
  let c = counterKeys.get(keys);
  if (c === undefined) counterKeys.set(keys, (c = keys.map(([total]) => counterKey(total))));
  return c;
}

/** How seeds.ts seeds the move lines of a hold (aligned with `moveLines`). */
export const movesSeeded = (keys: TrackedHold['k'], delta: number): Seeded[] => keys.map(([total]) => ({ total, offset: -delta }));
