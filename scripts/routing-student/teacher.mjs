/**
 * Step 2 of the routing student table (README.md beside this file): embeds every English target
 * (targets.txt from corpus.py) with the teacher, Universal Sentence Encoder Lite, into
 * teacher.f32 (512 float32 per line, in line order). teacher.done marks the lines done (one byte
 * each), so a run can stop and resume; `--reuse <dir>` first copies the vectors of identical texts
 * from an earlier run's folder (targets.txt, teacher.f32, teacher.done). Shortest texts first: a
 * batch costs as much as its longest text. Needs `npx tsc` first (it uses bench/routing/use-lite).
 *   node scripts/routing-student/teacher.mjs /tmp/rcorp/out [--reuse /tmp/rcorp/old]
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { defaultModelDir, SentenceEncoder } from '../../dist/bench/routing/use-lite.js';

const dir = process.argv[2] ?? '/tmp/rcorp/out';
const reuse = process.argv.includes('--reuse') ? process.argv[process.argv.indexOf('--reuse') + 1] : undefined;
const BYTES = 512 * 4;
const lines = (file) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const targets = lines(`${dir}/targets.txt`);
const out = `${dir}/teacher.f32`;
const doneFile = `${dir}/teacher.done`;
const done = existsSync(doneFile) ? new Uint8Array(readFileSync(doneFile)) : new Uint8Array(targets.length);
const fd = openSync(out, existsSync(out) ? 'r+' : 'w+');

if (reuse) {
  const old = lines(`${reuse}/targets.txt`);
  const oldDone = existsSync(`${reuse}/teacher.done`) ? readFileSync(`${reuse}/teacher.done`) : null;
  const oldFd = openSync(`${reuse}/teacher.f32`, 'r');
  const at = new Map(old.map((t, i) => [t, i]));
  const buf = new Uint8Array(BYTES);
  let copied = 0;
  targets.forEach((t, i) => {
    const j = at.get(t);
    if (done[i] || j === undefined || (oldDone && !oldDone[j])) return;
    if (readSync(oldFd, buf, 0, BYTES, j * BYTES) !== BYTES || buf.every((b) => b === 0)) return;
    writeSync(fd, buf, 0, BYTES, i * BYTES);
    done[i] = 1;
    copied++;
  });
  closeSync(oldFd);
  writeFileSync(doneFile, done);
  console.log(`reused ${copied} vectors from ${reuse}`);
}

const order = targets.map((_, i) => i).filter((i) => !done[i]).sort((a, b) => targets[a].length - targets[b].length || a - b);
const encoder = await SentenceEncoder.load(defaultModelDir());
const started = performance.now();
const BATCH = 32;
for (let k = 0; k < order.length; k += BATCH) {
  const ids = order.slice(k, k + BATCH);
  const vectors = await encoder.embed(ids.map((i) => targets[i]));
  vectors.forEach((v, j) => writeSync(fd, new Uint8Array(v.buffer, v.byteOffset, BYTES), 0, BYTES, ids[j] * BYTES));
  for (const i of ids) done[i] = 1;
  writeFileSync(doneFile, done);
  if ((k / BATCH) % 100 === 0) console.log(`${k + ids.length}/${order.length} ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
closeSync(fd);
console.log(`done: ${targets.length} vectors`);
