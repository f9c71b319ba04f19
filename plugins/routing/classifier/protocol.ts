/** Messages between the classifier (main thread) and its worker thread. */
import type { RouteText } from './contract.js';
import type { RawScore, ScoreWeights } from './scoring.js';

export interface WorkerOptions {
  modelDir: string;
  promptCacheSize: number;
  weights: ScoreWeights;
  /** Raw → confidence points; empty: the raw score clamped to 0–1 (the evaluation harness fits the table from it). */
  calibration: ReadonlyArray<readonly [number, number]>;
}

export type ToWorker =
  | { kind: 'classify'; id: number; text: string; routesKey: string; routes?: RouteText[] }
  | { kind: 'stats'; id: number };

export type FromWorker =
  | { kind: 'ready'; loadMs: number }
  | { kind: 'failed'; reason: string }
  | { kind: 'scores'; id: number; scores: RawScore[] }
  | { kind: 'needRoutes'; id: number }
  | { kind: 'stats'; id: number; encoded: number; promptCacheHits: number }
  | { kind: 'error'; id: number; reason: string };
