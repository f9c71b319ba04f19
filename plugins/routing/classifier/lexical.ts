/**
 * Lexical TF-IDF scoring: word-bounded character 3–5-grams plus word 1–2-grams, each route a
 * centroid of its texts. Catches what the English sentence encoder misses: identifiers, product
 * names, and words shared across languages (SQL, Python, "función", "traducir").
 */

export type SparseVector = Map<string, number>;

const WORD = /[\p{L}\p{N}_#+]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function features(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (key: string): void => void counts.set(key, (counts.get(key) ?? 0) + 1);
  const words = text.toLowerCase().normalize('NFKC').match(WORD) ?? [];
  let previous = '';
  for (const word of words) {
    add(`w:${word}`);
    if (previous) add(`b:${previous} ${word}`);
    previous = word;
    // Scripts written without spaces get shorter grams: one CJK character already carries a word's meaning.
    const smallest = CJK.test(word) ? 1 : 3;
    const padded = smallest === 1 ? word : ` ${word} `;
    const symbols = Array.from(padded);
    for (let n = smallest; n <= (smallest === 1 ? 3 : 5); n++) {
      for (let i = 0; i + n <= symbols.length; i++) add(`c:${symbols.slice(i, i + n).join('')}`);
    }
  }
  return counts;
}

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

  constructor(routeTexts: string[][]) {
    const perText = routeTexts.map((texts) => texts.map(features));
    const all = perText.flat();
    this.documents = all.length;
    const df = new Map<string, number>();
    for (const f of all) for (const k of f.keys()) df.set(k, (df.get(k) ?? 0) + 1);
    for (const [k, n] of df) this.idf.set(k, Math.log((1 + this.documents) / (1 + n)) + 1);
    this.centroids = perText.map((texts) => {
      const sum: SparseVector = new Map();
      for (const f of texts) for (const [k, x] of this.weigh(f)) sum.set(k, (sum.get(k) ?? 0) + x);
      return unit(sum);
    });
  }

  /** Cosine of the text with every route centroid, in route order. */
  score(text: string): number[] {
    const v = this.weigh(features(text));
    return this.centroids.map((c) => sparseDot(v, c));
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
