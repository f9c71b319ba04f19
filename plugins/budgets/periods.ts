/**
 * Budget periods, all in UTC: `day`; `week` (ISO 8601: starts Monday 00:00, named by its ISO
 * week-numbering year and week, e.g. 2026-W01); `month` (calendar month); `lifetime` (never
 * resets). A running total is kept per scope and period key.
 */
export const periods = ['day', 'week', 'month', 'lifetime'] as const;
export type Period = (typeof periods)[number];

const DAY = 86_400_000;

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Monday 00:00 UTC of the ISO week containing `t`. */
function weekStart(t: number): number {
  const day = Math.floor(t / DAY);
  // 1970-01-01 was a Thursday: (day + 3) % 7 is 0 on Mondays.
  return (day - ((day + 3) % 7)) * DAY;
}

/** ISO week-numbering year and week of the week containing `t` (its Thursday decides the year). */
function isoWeek(t: number): { year: number; week: number } {
  const thursday = new Date(weekStart(t) + 3 * DAY);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / DAY / 7) + 1;
  return { year, week };
}

/**
 * The key of the period that contains `t`.
 *
 * @example
 * periodKey('week', Date.UTC(2026, 0, 1)) // '2026-W01'
 */
export function periodKey(period: Period, t: number): string {
  // Every period key changes only at a UTC midnight: the day's four keys are computed once.
  const day = Math.floor(t / DAY);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedKeys = { day: computeKey('day', t), week: computeKey('week', t), month: computeKey('month', t), lifetime: 'all' };
  }
  return cachedKeys[period];
}

let cachedDay = Number.NaN;
let cachedKeys: Record<Period, string> = { day: '', week: '', month: '', lifetime: 'all' };

function computeKey(period: Period, t: number): string {
  const d = new Date(t);
  switch (period) {
    case 'day':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    case 'week': {
      const { year, week } = isoWeek(t);
      return `${year}-W${pad(week)}`;
    }
    case 'month':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
    case 'lifetime':
      return 'all';
  }
}

/** When the period containing `t` ends (exclusive), or null for lifetime. */
export function periodEnd(period: Period, t: number): number | null {
  if (period === 'lifetime') return null;
  // Every end depends only on the UTC day of `t`: worked out once a day (a Date per call was
  // garbage on every hold and settle).
  const day = Math.floor(t / DAY);
  if (day !== endsDay) {
    ends = { day: computeEnd('day', t)!, week: computeEnd('week', t)!, month: computeEnd('month', t)! };
    endsDay = day;
  }
  return ends[period];
}

let endsDay = Number.NaN;
let ends: Record<Exclude<Period, 'lifetime'>, number> = { day: 0, week: 0, month: 0 };

function computeEnd(period: Period, t: number): number | null {
  const d = new Date(t);
  switch (period) {
    case 'day':
      return (Math.floor(t / DAY) + 1) * DAY;
    case 'week':
      return weekStart(t) + 7 * DAY;
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    case 'lifetime':
      return null;
  }
}

/**
 * Expiry of a cache counter for the period containing `t`: its end plus a grace, so holds taken
 * just before the end can still be settled or reaped against it; none for lifetime.
 */
export function counterTtlMs(period: Period, t: number, graceMs: number): number | undefined {
  const end = periodEnd(period, t);
  return end === null ? undefined : end - t + graceMs;
}
