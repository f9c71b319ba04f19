/**
 * The built-in sentence encoder: a distilled "student" table (scripts/routing-student/ builds it;
 * student/SOURCES.md says from what). A text's vector is the SIF-weighted sum of its features'
 * rows (features.ts), normalised: about a hundred int8 row additions, on the calling thread, in a
 * fraction of a millisecond. The table was fitted so that the vector of a sentence, and of its
 * translations, is close to the English sentence's Universal Sentence Encoder vector (projected).
 */
import { readFileSync } from 'node:fs';
import { featureCounts } from './features.js';
import { Vocabulary } from './vocabulary.js';

/** The committed artifact's folder (a source folder: tsc does not copy it into dist/). */
export const studentDir = new URL('../../../../plugins/routing/classifier/student/', import.meta.url);

/** Feature ids with their weights: w · (1 + ln count), unit length (unknown features dropped). */
export function featureWeights(counts: Map<string, number>, index: Pick<Vocabulary, 'get'>, weights: ArrayLike<number>): { ids: number[]; values: number[] } {
  const ids: number[] = [];
  const values: number[] = [];
  let sum = 0;
  for (const [f, n] of counts) {
    const id = index.get(f);
    if (id === undefined) continue;
    const x = weights[id]! * (1 + Math.log(n));
    ids.push(id);
    values.push(x);
    sum += x * x;
  }
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < values.length; i++) values[i] = values[i]! / norm;
  return { ids, values };
}

export class StudentEncoder {
  private constructor(
    private readonly index: Vocabulary,
    private readonly weights: Float32Array,
    private readonly table: Int8Array,
    private readonly scales: Float32Array,
    readonly dimensions: number,
  ) {}

  /** Reads vocab.txt (feature TAB weight) and table.bin (rows of int8, then one float32 scale per row). */
  static load(dir: URL = studentDir): StudentEncoder {
    const { vocabulary: index, weights } = Vocabulary.parse(readFileSync(new URL('vocab.txt', dir)));
    const bytes = readFileSync(new URL('table.bin', dir));
    const rows = index.size;
    const dimensions = (bytes.length - 4 * rows) / rows;
    if (!Number.isInteger(dimensions) || dimensions < 16) throw new Error('student table.bin does not match vocab.txt');
    const table = new Int8Array(bytes.buffer, bytes.byteOffset, rows * dimensions);
    const scales = new Float32Array(bytes.buffer.slice(bytes.byteOffset + rows * dimensions, bytes.byteOffset + bytes.length));
    return new StudentEncoder(index, weights, table, scales, dimensions);
  }

  /** The text's unit vector (all zeros when none of its features is known). */
  embed(text: string): Float32Array {
    return this.embedCounts(featureCounts(text));
  }

  /** The same from features already counted (featureCounts). */
  embedCounts(counts: Map<string, number>): Float32Array {
    const { ids, values } = featureWeights(counts, this.index, this.weights);
    const d = this.dimensions;
    const out = new Float32Array(d);
    for (let k = 0; k < ids.length; k++) {
      const row = ids[k]!;
      const w = values[k]! * this.scales[row]!;
      const base = row * d;
      for (let j = 0; j < d; j++) out[j] = out[j]! + w * this.table[base + j]!;
    }
    let sum = 0;
    for (let j = 0; j < d; j++) sum += out[j]! * out[j]!;
    const norm = Math.sqrt(sum);
    if (norm > 0) for (let j = 0; j < d; j++) out[j] = out[j]! / norm;
    return out;
  }
}
