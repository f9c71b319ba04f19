/**
 * An operator's ONNX sentence encoder (onnxruntime-node): `model.onnx` and `tokenizer.json` in a
 * local folder. Inputs by name (input_ids, attention_mask, token_type_ids when the model has
 * them); the first output is either a sentence vector [1, d] or token vectors [1, n, d], which
 * are mean-pooled. Only the classifier's ONNX worker imports this file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { loadTokenizer, type Tokenizer } from './tokenizer.js';

/** Most tokens an encoder reads per text (sentence encoders are trained on short inputs). */
export const MAX_TOKENS = 256;

export class OnnxEncoder {
  private constructor(private readonly session: InferenceSession, private readonly tokenizer: Tokenizer) {}

  static async load(dir: string): Promise<OnnxEncoder> {
    const [model, tokenizer] = await Promise.all([readFile(join(dir, 'model.onnx')), readFile(join(dir, 'tokenizer.json'), 'utf8')]);
    // One thread: the worker is one of several users of the machine's cores.
    const session = await InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    if (!session.inputNames.includes('input_ids')) throw new Error('model.onnx has no input named input_ids');
    return new OnnxEncoder(session, loadTokenizer(JSON.parse(tokenizer), MAX_TOKENS));
  }

  async embed(text: string): Promise<Float32Array> {
    const ids = this.tokenizer.encode(text);
    if (ids.length === 0) ids.push(0);
    const n = ids.length;
    const feeds: Record<string, Tensor> = {};
    const int64 = (values: number[]) => new Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), [1, n]);
    feeds.input_ids = int64(ids);
    if (this.session.inputNames.includes('attention_mask')) feeds.attention_mask = int64(ids.map(() => 1));
    if (this.session.inputNames.includes('token_type_ids')) feeds.token_type_ids = int64(ids.map(() => 0));
    const out = (await this.session.run(feeds))[this.session.outputNames[0]!]!;
    const data = out.data as Float32Array;
    const dims = out.dims;
    const d = dims[dims.length - 1]!;
    const vector = new Float32Array(d);
    const rows = dims.length === 3 ? dims[1]! : 1;
    for (let r = 0; r < rows; r++) for (let j = 0; j < d; j++) vector[j] = vector[j]! + data[r * d + j]!;
    let sum = 0;
    for (let j = 0; j < d; j++) sum += vector[j]! * vector[j]!;
    const norm = Math.sqrt(sum) || 1;
    for (let j = 0; j < d; j++) vector[j] = vector[j]! / norm;
    return vector;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
