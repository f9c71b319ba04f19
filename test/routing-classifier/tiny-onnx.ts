/**
 * A small ONNX sentence encoder the tests build themselves (no download): a word-embedding table
 * and one Gather node, so token vectors come out as [1, n, 4] for the encoder to mean-pool, and a
 * WordPiece tokenizer.json with [CLS]/[SEP]. Words of a topic share a direction, so a prompt's
 * topic is what its vector points at.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export const topics: Record<string, string[]> = {
  code: ['python', 'javascript', 'function', 'bug', 'code', 'script', 'compile', 'error', 'programming', 'fix', 'bash', 'source', 'explaining', 'writing', 'fixing'],
  math: ['equation', 'solve', 'integral', 'derivative', 'probability', 'proof', 'mathematics', 'calculus', 'dice', 'proofs', 'equations', 'sum'],
  translation: ['translate', 'french', 'spanish', 'german', 'japanese', 'translating', 'languages', 'english', 'sentence', 'say'],
};
const filler = ['the', 'a', 'this', 'my', 'please', 'of', 'in', 'into', 'and', 'with', 'between', 'text', 'help', 'what', 'is', 'how', 'do', 'you', 'why', 'does', 'me', 'for', 'to', ':', ',', '.', '?'];

export async function writeTinyEncoder(): Promise<string> {
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', ...Object.values(topics).flat(), ...filler];
  const rows: number[] = [];
  for (const word of vocab) {
    const topic = Object.values(topics).findIndex((words) => words.includes(word));
    rows.push(...[0, 1, 2].map((d) => (d === topic ? 1 : 0)), topic === -1 ? 0.3 : 0.05);
  }
  const { TensorProto } = onnx;
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'svc-tests',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny-encoder',
      node: [{ opType: 'Gather', input: ['embeddings', 'input_ids'], output: ['last_hidden_state'], attribute: [{ name: 'axis', i: 0, type: onnx.AttributeProto.AttributeType.INT }] }],
      initializer: [{ name: 'embeddings', dataType: TensorProto.DataType.FLOAT, dims: [vocab.length, 4], floatData: rows }],
      input: [{ name: 'input_ids', type: { tensorType: { elemType: TensorProto.DataType.INT64, shape: { dim: [{ dimValue: 1 }, { dimParam: 'n' }] } } } }],
      output: [{ name: 'last_hidden_state', type: { tensorType: { elemType: TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 1 }, { dimParam: 'n' }, { dimValue: 4 }] } } } }],
    },
  });
  const tokenizer = {
    version: '1.0',
    normalizer: { type: 'BertNormalizer', lowercase: true },
    post_processor: { type: 'BertProcessing', cls: ['[CLS]', 2], sep: ['[SEP]', 3] },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: Object.fromEntries(vocab.map((w, i) => [w, i])) },
  };
  const dir = await mkdtemp(join(tmpdir(), 'svc-tiny-onnx-'));
  await writeFile(join(dir, 'model.onnx'), onnx.ModelProto.encode(model).finish());
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  return dir;
}
