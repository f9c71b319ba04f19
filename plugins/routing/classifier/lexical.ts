/**
 * Lexical TF-IDF scoring over the student's own features (features.ts: words, word-bounded
 * character 4-grams, CJK character grams), each route a centroid of its texts. Catches what the
 * sentence encoder misses: identifiers, product names, words shared across languages (SQL,
 * Python, "función") and, with examples in the users' language, that language's own words. The
 * prompt's features are counted once and shared with the encoder.
 */
import { featureCounts } from './features.js';

export type SparseVector = Map<string, number>;

function unit(v: SparseVector): SparseVector {
  let sum = 0;
  for (const x of v.values()) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  for (const [k, x] of v) v.set(k, x / norm);
  return v;
}

export function sparseDot(a: SparseVector, b: SparseVector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let sum = 0;
  for (const [k, x] of small) {
    const y = large.get(k);
    if (y !== undefined) sum += x * y;
  }
  return sum;
}

/** TF-IDF over one set of routes (the IDF depends on every route's texts, so it is rebuilt when the set changes). */
export class LexicalIndex {
  private readonly idf = new Map<string, number>();
  private readonly documents: number;
  readonly centroids: SparseVector[];
  /** Each route's texts, weighed and unit length (an example in the user's language counts fully on its own). */
  readonly texts: SparseVector[][];

  constructor(routeTexts: string[][]) {
    const perText = routeTexts.map((texts) => texts.map(featureCounts));
    const all = perText.flat();
    this.documents = all.length;
    const df = new Map<string, number>();
    for (const f of all) for (const k of f.keys()) df.set(k, (df.get(k) ?? 0) + 1);
    for (const [k, n] of df) this.idf.set(k, Math.log((1 + this.documents) / (1 + n)) + 1);
    this.texts = perText.map((texts) => texts.map((f) => unit(this.weigh(f))));
    this.centroids = this.texts.map((texts) => {
      const sum: SparseVector = new Map();
      for (const v of texts) for (const [k, x] of v) sum.set(k, (sum.get(k) ?? 0) + x);
      return unit(sum);
    });
  }

  /** Cosine of the text's features (featureCounts) with every route's centroid and with its nearest text, in route order. */
  score(counts: Map<string, number>): { centroid: number; nearest: number }[] {
    const v = this.weigh(counts);
    return this.centroids.map((c, i) => {
      let nearest = 0;
      for (const t of this.texts[i]!) nearest = Math.max(nearest, sparseDot(v, t));
      return { centroid: sparseDot(v, c), nearest };
    });
  }

  private weigh(counts: Map<string, number>): SparseVector {
    const v: SparseVector = new Map();
    const unseenIdf = Math.log(1 + this.documents) + 1;
    let sum = 0;
    // Features no route uses still count in the norm (a prompt mostly about something else scores low) but are not kept.
    for (const [k, n] of counts) {
      const idf = this.idf.get(k);
      const x = (1 + Math.log(n)) * (idf ?? unseenIdf);
      sum += x * x;
      if (idf !== undefined) v.set(k, x);
    }
    const norm = Math.sqrt(sum) || 1;
    for (const [k, x] of v) v.set(k, x / norm);
    return v;
  }
}
