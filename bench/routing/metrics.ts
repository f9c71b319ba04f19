/** What the evaluation harness measures, and the calibration it fits (isotonic regression of "top pick right" on the raw score). */
import { NONE, type LabelledPrompt } from './dataset.js';

export interface Scored {
  prompt: LabelledPrompt;
  /** Best first. */
  scores: { route: string; raw: number }[];
  ms: number;
}

/** The routing plugin's rule, as far as the classifier's figures go: top route unless below the threshold or too close to the runner-up. */
export function decide(scores: { route: string; confidence: number }[], threshold: number, margin: number): string {
  const [top, second] = scores;
  if (!top || top.confidence < threshold) return NONE;
  if (second && top.confidence - second.confidence < margin) return NONE;
  return top.route;
}

export interface Report {
  n: number;
  accuracy: number;
  wrongRoute: number;
  defaultPrecision: number;
  defaultRecall: number;
  recall: Map<string, number>;
  confusion: Map<string, Map<string, number>>;
  byLanguage: Map<string, { n: number; accuracy: number }>;
}

export function report(decisions: { prompt: LabelledPrompt; predicted: string }[], labels: string[]): Report {
  const confusion = new Map(labels.map((l) => [l, new Map(labels.map((p) => [p, 0]))]));
  const languages = new Map<string, { n: number; right: number }>();
  let right = 0;
  let wrong = 0;
  for (const { prompt, predicted } of decisions) {
    const row = confusion.get(prompt.label)!;
    row.set(predicted, row.get(predicted)! + 1);
    const ok = predicted === prompt.label;
    if (ok) right++;
    else if (predicted !== NONE) wrong++;
    const lang = languages.get(prompt.lang) ?? { n: 0, right: 0 };
    lang.n++;
    if (ok) lang.right++;
    languages.set(prompt.lang, lang);
  }
  const predictedNone = decisions.filter((d) => d.predicted === NONE);
  const labelledNone = decisions.filter((d) => d.prompt.label === NONE);
  const bothNone = predictedNone.filter((d) => d.prompt.label === NONE).length;
  const recall = new Map(labels.map((l) => {
    const row = [...confusion.get(l)!.values()].reduce((a, b) => a + b, 0);
    return [l, row ? confusion.get(l)!.get(l)! / row : NaN];
  }));
  return {
    n: decisions.length,
    accuracy: right / decisions.length,
    wrongRoute: wrong / decisions.length,
    defaultPrecision: predictedNone.length ? bothNone / predictedNone.length : NaN,
    defaultRecall: labelledNone.length ? bothNone / labelledNone.length : NaN,
    recall,
    confusion,
    byLanguage: new Map([...languages].map(([l, v]) => [l, { n: v.n, accuracy: v.right / v.n }])),
  };
}

/**
 * Pool-adjacent-violators: the probability that the top pick is right, as a non-decreasing
 * function of its raw score, with a half-count prior so small blocks never reach 0 or 1.
 * Returns [raw, confidence] points at each block's mean raw score.
 */
export function fitCalibration(samples: { raw: number; right: boolean }[]): [number, number][] {
  const sorted = [...samples].sort((a, b) => a.raw - b.raw);
  const blocks: { rawSum: number; right: number; n: number }[] = [];
  for (const s of sorted) {
    blocks.push({ rawSum: s.raw, right: s.right ? 1 : 0, n: 1 });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1]!;
      const a = blocks[blocks.length - 2]!;
      if (a.right / a.n < b.right / b.n) break;
      blocks.splice(-2, 2, { rawSum: a.rawSum + b.rawSum, right: a.right + b.right, n: a.n + b.n });
    }
  }
  const round = (x: number): number => Math.round(x * 10_000) / 10_000;
  return blocks.map((b) => [round(b.rawSum / b.n), round((b.right + 0.5) / (b.n + 1))]);
}
