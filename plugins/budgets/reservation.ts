import type { AdjustLine, ReserveLine } from '../../kernel/index.js';
import type { Seeded } from './seeds.js';
import { capScopeId, scopes, totalKey, type Cap, type Scope } from './caps.js';
import { counterTtlMs, periodEnd, periods, type Period } from './periods.js';

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

/** The id a hold's own principal has in `scope` (caps.ts scopeId for the hold's ids). */
function scopeIdOf(scope: Scope, h: Pick<TrackedHold, 'w' | 'p' | 'y'>): string | null {
  switch (scope) {
    case 'instance':
      return '*';
    case 'workspace':
      return h.w;
    case 'member':
      return `${h.w}/${h.p}`;
    case 'key':
      return h.y;
  }
}

/**
 * A hold's totals list as `scope.period` pairs (`key.day,member.month,…`) when every total is the
 * one the hold's own ids and time name (holds made here always are), else null. Worked out once
 * per list (one list serves a principal's holds all day: heldTotals) and used again only for a
 * hold of the same ids and UTC day, the ones it was checked for.
 */
interface TotalsCode { code: string | null; w: string; p: string; y: string | null; day: number }
const totalsCodes = new WeakMap<TrackedHold['k'], TotalsCode>();
function totalsCode(h: TrackedHold): string | null {
  const day = Math.floor(h.t / 86_400_000);
  const known = totalsCodes.get(h.k);
  if (known !== undefined && known.w === h.w && known.p === h.p && known.y === h.y && known.day === day) return known.code;
  const pairs: string[] = [];
  for (const [total, period] of h.k) {
    const scope = scopes.find((s) => total.startsWith(`${s}:`));
    const id = scope === undefined ? null : scopeIdOf(scope, h);
    if (scope === undefined || id === null || totalKey(scope, id, period, h.t) !== total) return null;
    pairs.push(`${scope}.${period}`);
  }
  const code = pairs.length > 0 ? pairs.join(',') : null;
  totalsCodes.set(h.k, { code, w: h.w, p: h.p, y: h.y, day });
  return code;
}

/** The totals a `totalsCode` names, for the hold's ids and time; null when the code is not one. */
function totalsOfCode(code: string, h: Pick<TrackedHold, 'w' | 'p' | 'y' | 't'>): TrackedHold['k'] | null {
  const k: TrackedHold['k'] = [];
  for (const pair of code.split(',')) {
    const [scope, period] = pair.split('.') as [Scope, Period];
    const id = scopes.includes(scope) && periods.includes(period) ? scopeIdOf(scope, h) : null;
    if (id === null) return null;
    k.push([totalKey(scope, id, period, h.t), period]);
  }
  return k;
}

/** The hold written with its totals as a code: one object of a fixed shape, filled and stringified per hold. */
const wire: Omit<TrackedHold, 'k'> & { k: string } = { i: '', a: 0, k: '', r: '', w: '', p: '', y: null, m: '', t: 0 };

/**
 * The hold as JSON, its totals list as a code (`totalsCode`) when it has one: the list spelled out
 * was more than half of every member, some 250 bytes a hold, written to the cache's set of live
 * holds (and to Redis) on every request. One JSON.stringify writes one flat string; building it
 * from template pieces made some twenty intermediate strings (bench/README.md "Eighteenth look").
 */
export function encodeTrack(h: TrackedHold): string {
  const code = totalsCode(h);
  if (code === null) return JSON.stringify(h);
  wire.i = h.i;
  wire.a = h.a;
  wire.k = code;
  wire.r = h.r;
  wire.w = h.w;
  wire.p = h.p;
  wire.y = h.y;
  wire.m = h.m;
  wire.t = h.t;
  return JSON.stringify(wire);
}

/** Null for a member that is not ours (never throws on foreign data). Reads both forms of `k` (a code, or the list members written before). */
export function decodeTrack(member: string): TrackedHold | null {
  try {
    const h = JSON.parse(member) as Omit<TrackedHold, 'k'> & { k: unknown };
    if (typeof h.i !== 'string' || !Number.isSafeInteger(h.a)) return null;
    if (Array.isArray(h.k)) return h as TrackedHold;
    if (typeof h.k !== 'string' || typeof h.w !== 'string' || typeof h.p !== 'string' || !Number.isSafeInteger(h.t)) return null;
    const k = totalsOfCode(h.k, h);
    return k === null ? null : { ...h, k };
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
