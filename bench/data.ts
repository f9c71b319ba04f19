import type { Figures } from './scenarios.js';
import { spread, type Spread } from './stats.js';
import type { TargetName } from './targets.js';
import type { BurstFigures } from './burst.js';

/** Everything one run measured; written as JSON beside the markdown. */
export interface RunData {
  date: string;
  machine: { cpus: number; cpuModel: string; memGiB: number; node: string; os: string };
  settings: { seconds: number; reps: number; warmupSeconds: number; idleSeconds?: number };
  targets: Array<{ name: TargetName; governance?: string[] }>;
  /** Targets not run, with the reason. */
  skipped: string[];
  /** Per scenario, per target: one Figures per repetition, in run order. */
  results: Record<string, Partial<Record<TargetName, Figures[]>>>;
  /** VmHWM of each gateway process at the end of the run (MiB). */
  peakRssMb: Partial<Record<TargetName, number>>;
  /** VmRSS of each gateway process after start-up and the smoke test, before any load (MiB); older runs lack it. */
  idleRssMb?: Partial<Record<TargetName, number>>;
  /** VmRSS of each svc right after start-up, before routes and models were provisioned (MiB). */
  bootRssMb?: Partial<Record<TargetName, number>>;
  /** Bytes allocated (garbage included) and promoted per request at one connection (alloc.ts). */
  allocations?: Partial<Record<TargetName, { allocatedBytes: number; promotedBytes: number; scenario: string }>>;
  /** Allocation by layer of svc (layers.ts): the bare proxy, svc without governance, then one plugin more a row. */
  layers?: { shape: string; scenario: string; rows: Array<{ name: string; allocatedBytes: number; promotedBytes: number }> };
  /** The highest rate sustained with p99 under 1 s against a 20 ms upstream (sustain.ts). */
  sustained?: Partial<Record<TargetName, { rate: number; p99Ms: number }>>;
  /** Memory around the hostile burst, on freshly started gateways (burst.ts); older runs lack it. */
  burst?: Partial<Record<TargetName, BurstFigures>>;
}

/** Per-repetition values of one figure. */
export function runs(d: RunData, scenario: string, target: TargetName, figure: string): number[] {
  return (d.results[scenario]?.[target] ?? []).map((f) => f[figure] ?? NaN);
}

/** One value per repetition from two targets' figures of the same repetition (they ran back to back). */
export function paired(d: RunData, scenario: string, a: TargetName, b: TargetName, figure: string, op: (x: number, y: number) => number): Spread {
  const xs = runs(d, scenario, a, figure);
  const ys = runs(d, scenario, b, figure);
  return spread(xs.map((x, i) => (ys[i] === undefined ? NaN : op(x, ys[i]!))));
}

export const minus = (x: number, y: number): number => x - y;
export const over = (x: number, y: number): number => x / y;

/** A number for the table: precision by size. */
export function num(v: number): string {
  if (!Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/** `median (min–max)`, or just the value when every repetition agrees. */
export function cell(s: Spread, suffix = ''): string {
  if (!Number.isFinite(s.median)) return '—';
  if (s.min === s.max) return `${num(s.median)}${suffix}`;
  return `${num(s.median)}${suffix} (${num(s.min)}–${num(s.max)})`;
}
