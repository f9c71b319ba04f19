import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { studentDir } from '../../plugins/routing/classifier/student.js';
import { Vocabulary } from '../../plugins/routing/classifier/vocabulary.js';

/** The student's vocabulary kept as the file's bytes (classifier/vocabulary.ts) finds what a Map of its lines finds. */
const test = suite('routing: the student vocabulary without a Map of strings');

test('every feature of the shipped vocabulary has its own row and weight; features it lacks have none', () => {
  const file = readFileSync(new URL('vocab.txt', studentDir));
  const { vocabulary, weights } = Vocabulary.parse(file);
  const lines = file.toString('utf8').split('\n').filter(Boolean);
  assert.is(vocabulary.size, lines.length);
  assert.ok(lines.some((l) => /[^\x00-\x7f]/.test(l)), 'the vocabulary has non-ASCII features');
  lines.forEach((line, row) => {
    const tab = line.lastIndexOf('\t');
    const feature = line.slice(0, tab);
    if (vocabulary.get(feature) !== row) assert.unreachable(`${feature}: row ${vocabulary.get(feature)}, not ${row}`);
    if (Math.abs(weights[row]! - Number(line.slice(tab + 1))) > 1e-6) assert.unreachable(`${feature}: weight ${weights[row]}`);
  });
  for (const absent of ['w:zzqqxxvv', '', 'w:', 'w:a ', 'W:a', 'w:日本語の文章です長い', 'x'.repeat(5000)]) assert.is(vocabulary.get(absent), undefined, absent);
});

test('a small vocabulary: lookups, a repeated feature maps to its last row, a line without a weight is refused', () => {
  const { vocabulary, weights } = Vocabulary.parse(Buffer.from('w:a\t0.5\nc:ünï\t1.25\nw:a\t2\n'));
  assert.is(vocabulary.get('w:a'), 2);
  assert.is(vocabulary.get('c:ünï'), 1);
  assert.is(vocabulary.get('c:uni'), undefined);
  assert.equal([...weights], [0.5, 1.25, 2]);
  assert.throws(() => Vocabulary.parse(Buffer.from('w:a\t1\nno weight here\n')), /line 2 has no weight/);
});

test.run();
