/**
 * From similarities to a probability. Each route's logit is a fixed linear function of its three
 * similarities to the prompt (cosine to the route's centroid, to its nearest text, lexical), and
 * "none of the routes" has a constant logit; a softmax over the routes and "none" gives each
 * route's confidence. The nine numbers are fitted by maximum likelihood over many route sets at
 * once (bench/routing/, `npm run eval:routing -- --write`), never over one operator's routes, so
 * a confidence reads as "how likely this route is right" on route sets nobody tuned on. Two
 * close routes share the probability, so the margin rule is built in.
 */
import { MODEL } from './calibration-table.js';

/** A route's similarities to the prompt. */
export interface Components {
  centroid: number;
  nearest: number;
  lexical: number;
  /** Lexical similarity to the route's nearest text. */
  lexicalNearest: number;
}

export interface LogitModel {
  /** Weight of the cosine to the route's centroid. */
  centroid: number;
  /** Weight of that cosine minus the mean over the routes (what sets this route apart). */
  relative: number;
  nearest: number;
  nearestRelative: number;
  lexical: number;
  lexicalRelative: number;
  lexicalNearest: number;
  lexicalNearestRelative: number;
  /** The logit of "none of the routes". */
  none: number;
}

export const FEATURES = ['centroid', 'relative', 'nearest', 'nearestRelative', 'lexical', 'lexicalRelative', 'lexicalNearest', 'lexicalNearestRelative'] as const;

/** Each route's feature vector, in FEATURES order. */
export function featureRows(components: Components[]): number[][] {
  const n = Math.max(1, components.length);
  const mean = (key: keyof Components): number => components.reduce((s, c) => s + c[key], 0) / n;
  const [c0, n0, l0, ln0] = [mean('centroid'), mean('nearest'), mean('lexical'), mean('lexicalNearest')];
  return components.map((c) => [c.centroid, c.centroid - c0, c.nearest, c.nearest - n0, c.lexical, c.lexical - l0, c.lexicalNearest, c.lexicalNearest - ln0]);
}

/** Probabilities: one per route (same order), then "none" last; they sum to 1. */
export function probabilities(components: Components[], model: LogitModel = MODEL): number[] {
  const w = FEATURES.map((f) => model[f]);
  const logits = featureRows(components).map((f) => f.reduce((s, x, i) => s + x * w[i]!, 0));
  logits.push(model.none);
  const max = Math.max(...logits);
  const exp = logits.map((z) => Math.exp(z - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((e) => e / sum);
}

/** Rounded so that a confidence read back from a header or a log equals the one compared with the threshold. */
export function roundConfidence(x: number): number {
  return Math.round(Math.min(1, Math.max(0, x)) * 1000) / 1000;
}
