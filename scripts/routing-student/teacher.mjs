/**
 * Step 2 of the routing student table (README.md beside this file): embeds every English target
 * (targets.txt from corpus.py) with the teacher, Universal Sentence Encoder Lite, into
 * teacher.f32 (512 float32 per line, in line order). Resumable: teacher.progress counts the texts done
 * (shortest first). Needs `npx tsc` first (it uses the routing plugin's own encoder and tokenizer).
 *   node scripts/routing-student/teacher.mjs /tmp/rcorp/out
 */
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { defaultModelDir, SentenceEncoder } from '../../dist/bench/routing/use-lite.js';

const dir = process.argv[2] ?? '/tmp/rcorp/out';
const targets = readFileSync(`${dir}/targets.txt`, 'utf8').split('\n').slice(0, -1);
const out = `${dir}/teacher.f32`;
const progressFile = `${dir}/teacher.progress`;
// Shortest first, in batches of similar length: a batch costs as much as its longest text.
const order = targets.map((_, i) => i).sort((a, b) => targets[a].length - targets[b].length || a - b);
const done = existsSync(progressFile) ? Number(readFileSync(progressFile, 'utf8')) : 0;
const encoder = await SentenceEncoder.load(defaultModelDir());
const fd = openSync(out, existsSync(out) ? 'r+' : 'w');
const started = performance.now();
const BATCH = 32;
for (let k = done; k < order.length; k += BATCH) {
  const ids = order.slice(k, k + BATCH);
  const vectors = await encoder.embed(ids.map((i) => targets[i]));
  vectors.forEach((v, j) => writeSync(fd, new Uint8Array(v.buffer, v.byteOffset, 2048), 0, 2048, ids[j] * 2048));
  writeFileSync(progressFile, String(k + ids.length));
  if ((k / BATCH) % 100 === 0) console.log(`${k + ids.length}/${order.length} ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
closeSync(fd);
console.log(`done: ${targets.length} vectors`);
