/**
 * What the evaluation harness measures, and the logit model it fits (calibration.ts in the
 * classifier says what the model is).
 */
import { FEATURES, featureRows, probabilities, type Components, type LogitModel } from '../../plugins/routing/classifier/calibration.js';
import { NONE, type LabelledPrompt } from './dataset.js';

/** One prompt's similarities to every route of its set (in the set's route order). */
export interface Measured {
  prompt: LabelledPrompt;
  routes: string[];
  components: Components[];
  ms: number;
}

/** The routing rule: the top route when its probability reaches the threshold, else the default. */
export function decide(m: Measured, model: LogitModel, threshold: number): { predicted: string; confidence: number } {
  const p = probabilities(m.components, model);
  let best = 0;
  for (let i = 1; i < m.routes.length; i++) if (p[i]! > p[best]!) best = i;
  return p[best]! >= threshold ? { predicted: m.routes[best]!, confidence: p[best]! } : { predicted: NONE, confidence: p[best]! };
}

export interface Tally {
  n: number;
  right: number;
  wrong: number;
  toDefault: number;
  toDefaultRight: number;
}

export const emptyTally = (): Tally => ({ n: 0, right: 0, wrong: 0, toDefault: 0, toDefaultRight: 0 });

export function count(t: Tally, prompt: LabelledPrompt, predicted: string): void {
  t.n++;
  if (prompt.labels.includes(predicted)) t.right++;
  else if (predicted !== NONE) t.wrong++;
  if (predicted === NONE) {
    t.toDefault++;
    if (prompt.labels.includes(NONE)) t.toDefaultRight++;
  }
}

export const accuracy = (t: Tally): number => t.right / t.n;
export const wrongRate = (t: Tally): number => t.wrong / t.n;
export const defaultPrecision = (t: Tally): number => (t.toDefault ? t.toDefaultRight / t.toDefault : NaN);

export function tally(set: Measured[], model: LogitModel, threshold: number): Tally {
  const t = emptyTally();
  for (const m of set) count(t, m.prompt, decide(m, model, threshold).predicted);
  return t;
}

/**
 * Maximum likelihood of the right answers (lenient: the probability of any right label) under the
 * softmax over routes and "none", with a small L2 penalty; Adam, deterministic.
 */
export function fitModel(set: Measured[], iterations = 1500): LogitModel {
  const k = FEATURES.length + 1;
  const theta = new Float64Array(k);
  theta.set([4, 4, 4, 4, 4, 4, 4, 4, 2]);
  const m1 = new Float64Array(k);
  const m2 = new Float64Array(k);
  const rows = set.map((m) => featureRows(m.components));
  for (let it = 1; it <= iterations; it++) {
    const grad = new Float64Array(k);
    set.forEach((m, s) => {
      const f = rows[s]!;
      const logits = f.map((x) => x.reduce((a, v, i) => a + v * theta[i]!, 0));
      logits.push(theta[k - 1]!);
      const max = Math.max(...logits);
      const e = logits.map((z) => Math.exp(z - max));
      const sum = e.reduce((a, b) => a + b, 0);
      const p = e.map((x) => x / sum);
      const right = [...m.routes, NONE].map((r) => m.prompt.labels.includes(r));
      const pRight = p.reduce((a, x, i) => a + (right[i] ? x : 0), 0) || 1e-12;
      // d(-log Σ_right p)/dz_j = p_j - [j right] p_j / pRight
      for (let j = 0; j < p.length; j++) {
        const g = p[j]! - (right[j] ? p[j]! / pRight : 0);
        if (j < f.length) for (let i = 0; i < FEATURES.length; i++) grad[i] = grad[i]! + g * f[j]![i]!;
        else grad[k - 1] = grad[k - 1]! + g;
      }
    });
    for (let i = 0; i < k; i++) {
      const g = grad[i]! / set.length + 1e-3 * (i < k - 1 ? theta[i]! : 0);
      m1[i] = 0.9 * m1[i]! + 0.1 * g;
      m2[i] = 0.999 * m2[i]! + 0.001 * g * g;
      theta[i] = theta[i]! - (0.05 * (m1[i]! / (1 - 0.9 ** it))) / (Math.sqrt(m2[i]! / (1 - 0.999 ** it)) + 1e-8);
    }
  }
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  const model = Object.fromEntries(FEATURES.map((f, i) => [f, r(theta[i]!)])) as Omit<LogitModel, 'none'>;
  return { ...model, none: r(theta[k - 1]!) };
}

/**
 * Wrong routes cost more than the default (a wrong model for the task): the threshold maximises
 * accuracy minus `wrongCost` × wrong-route rate (1: a wrong route counts twice, since it is also
 * not right).
 */
export function chooseThreshold(set: Measured[], model: LogitModel, wrongCost = 1): number {
  let best = { t: 0.5, u: -Infinity };
  for (let t = 0.2; t <= 0.901; t += 0.025) {
    const x = tally(set, model, t);
    const u = accuracy(x) - wrongCost * wrongRate(x);
    if (u > best.u + 1e-9) best = { t: Math.round(t * 1000) / 1000, u };
  }
  return best.t;
}

/** Reliability: of the decisions whose confidence fell in each band, how many were right. */
export function reliability(decisions: { confidence: number; right: boolean }[]): { band: string; n: number; right: number }[] {
  const bands = [0, 0.3, 0.5, 0.7, 0.9, 1.0001];
  return bands.slice(0, -1).map((lo, i) => {
    const inBand = decisions.filter((d) => d.confidence >= lo && d.confidence < bands[i + 1]!);
    return { band: `${lo.toFixed(1)}–${Math.min(1, bands[i + 1]!).toFixed(1)}`, n: inBand.length, right: inBand.filter((d) => d.right).length };
  });
}
