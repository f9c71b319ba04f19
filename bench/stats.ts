/** Small statistics helpers for the benchmark's figures. */

/** The q-quantile (0..1) of the values by nearest rank; NaN for none. */
export function quantile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Min, median and max of the repetitions of one figure. */
export interface Spread {
  min: number;
  median: number;
  max: number;
  /** Every repetition's value, in run order. */
  runs: number[];
}

/**
 * @example
 * spread([3, 1, 2]) // { min: 1, median: 2, max: 3, runs: [3, 1, 2] }
 */
export function spread(runs: number[]): Spread {
  const ok = runs.filter((v) => Number.isFinite(v));
  if (ok.length === 0) return { min: NaN, median: NaN, max: NaN, runs };
  const s = [...ok].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { min: s[0]!, median, max: s[s.length - 1]!, runs };
}
