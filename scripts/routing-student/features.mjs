/**
 * Step 3 of the routing student table (README.md beside this file): picks the feature vocabulary
 * (per kind of feature, the most frequent in the training inputs by how many inputs use them), their
 * SIF weights, and writes the training inputs as a sparse matrix for fit.py:
 *   vocab.txt (feature<TAB>weight per line), X.indptr.i32, X.indices.i32, X.data.f32, X.target.i32
 * Uses the routing plugin's own feature function (build with `npx tsc` first).
 *   node scripts/routing-student/features.mjs /tmp/rcorp/out
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { featureCounts } from '../../dist/plugins/routing/classifier/features.js';
import { featureWeights } from '../../dist/plugins/routing/classifier/student.js';

const dir = process.argv[2] ?? '/tmp/rcorp/out';
const VOCAB = Number(process.env.VOCAB ?? 49152);
/** SIF's a: features used more often than this share of all feature uses are weighed down. */
const SIF_A = 1e-4;
const rows = readFileSync(`${dir}/pairs.tsv`, 'utf8').split('\n').filter(Boolean).map((l) => {
  const [lang, target, ...text] = l.split('\t');
  return { lang, target: Number(target), counts: featureCounts(text.join('\t')) };
});
const df = new Map();
const total = new Map();
for (const r of rows) for (const [f, n] of r.counts) { df.set(f, (df.get(f) ?? 0) + 1); total.set(f, (total.get(f) ?? 0) + n); }
// A share of the vocabulary per kind of feature: by frequency alone, character 4-grams (shared by
// many words) crowd out the words, which carry most of the meaning ("vuelo", "Koffer", "hotel").
const SHARES = { w: 0.625, g: 0.28125, c: 0.0625, k: 0.03125 };
const byKind = (kind) => [...df].filter(([f, n]) => n >= 2 && f[0] === kind).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
const kept = Object.entries(SHARES).flatMap(([kind, share]) => byKind(kind).slice(0, Math.round(VOCAB * share)).map(([f]) => f));
// Probability of each feature among all uses of features of its kind (words, 4-grams, CJK grams).
const kindTotal = new Map();
for (const [f, n] of total) kindTotal.set(f[0], (kindTotal.get(f[0]) ?? 0) + n);
const weight = kept.map((f) => SIF_A / (SIF_A + total.get(f) / kindTotal.get(f[0])));
writeFileSync(`${dir}/vocab.txt`, kept.map((f, i) => `${f}\t${weight[i].toPrecision(4)}`).join('\n') + '\n');
const index = new Map(kept.map((f, i) => [f, i]));
const rounded = kept.map((_, i) => Number(weight[i].toPrecision(4)));
const indptr = [0];
const indices = [];
const data = [];
const targets = [];
for (const r of rows) {
  const { ids, values } = featureWeights(r.counts, index, rounded);
  if (ids.length === 0) continue;
  ids.forEach((id, k) => { indices.push(id); data.push(values[k]); });
  indptr.push(indices.length);
  targets.push(r.target);
}
writeFileSync(`${dir}/X.indptr.i32`, new Int32Array(indptr));
writeFileSync(`${dir}/X.indices.i32`, new Int32Array(indices));
writeFileSync(`${dir}/X.data.f32`, new Float32Array(data));
writeFileSync(`${dir}/X.target.i32`, new Int32Array(targets));
console.log(`${kept.length} features kept of ${df.size}; ${targets.length} rows, ${indices.length} non-zeros`);
