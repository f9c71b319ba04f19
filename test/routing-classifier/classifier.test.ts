import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createClassifier, createStudentClassifier, MAX_CLASSIFIED_CHARS, type RouteText } from '../../plugins/routing/classifier/index.js';
import { probabilities } from '../../plugins/routing/classifier/calibration.js';
import { signalHints } from '../../plugins/routing/classifier/signals.js';
import { shape } from '../support/harness.js';

const test = suite(`route classifier: the built-in student table (${shape})`);
const routes: RouteText[] = [
  { name: 'code', version: '1', description: 'Programming help: writing, fixing and explaining source code.', examples: ['Fix this Python function', 'Why does my JavaScript throw TypeError?', 'Write a bash script that renames files'] },
  { name: 'math', version: '1', description: 'Mathematics: equations, calculus, probability and proofs.', examples: ['Solve 3x + 7 = 22', 'What is the derivative of sin(x)?', 'Probability of two sixes with two dice'] },
  { name: 'translation', version: '1', description: 'Translating text between languages.', examples: ['Translate this sentence into French', 'How do you say thank you in Japanese?', 'Translate this email from German to English'] },
];
const classifier = createStudentClassifier();

test.before(async () => {
  await classifier.ready();
});

test('loads the committed table and scores every route, best first, with similarities and a probability for none', async () => {
  assert.is(classifier.state, 'ready');
  assert.is(classifier.encoder, 'student');
  const { scores, none } = await classifier.classify('My Python script crashes with a KeyError when reading the config dict', routes);
  assert.equal(scores.map((s) => s.route).sort(), ['code', 'math', 'translation']);
  assert.is(scores[0]!.route, 'code');
  for (let i = 1; i < scores.length; i++) assert.ok(scores[i - 1]!.confidence >= scores[i]!.confidence);
  for (const s of scores) for (const x of [s.confidence, s.centroid, s.nearest, s.lexical]) assert.ok(x >= -1 && x <= 1, String(x));
  // Confidences are probabilities over the routes and "none": they sum to 1 (rounding aside).
  assert.ok(Math.abs(scores.reduce((a, s) => a + s.confidence, none) - 1) < 0.005);
});

test('determinism: the same text and routes give the same scores, in this classifier and in a fresh one', async () => {
  const text = 'What is the integral of x squared from zero to three?';
  const first = await classifier.classify(text, routes);
  const other = createClassifier();
  await other.ready();
  assert.equal(await other.classify(text, routes), first);
  assert.equal(await classifier.classify(text, routes), first);
  assert.is(first.scores[0]!.route, 'math');
});

test('the classifier reads a capped prefix: what follows the first MAX_CLASSIFIED_CHARS characters changes nothing', async () => {
  const head = 'Translate this paragraph into Spanish please. '.repeat(60).slice(0, MAX_CLASSIFIED_CHARS);
  const a = await classifier.classify(`${head}${'solve the integral of x dx '.repeat(50)}`, routes);
  const b = await classifier.classify(`${head}${'fix my python code '.repeat(5000)}`, routes);
  assert.equal(a, b);
  assert.is(a.scores[0]!.route, 'translation');
});

test('language-neutral signals add the same hints whatever language the prose is in', () => {
  assert.is(signalHints('¿Por qué falla SELECT nombre FROM clientes WHERE id = 3?'), ' sql database query');
  assert.is(signalHints('Warum gibt =SVERWEIS nichts zurück? Ich nutze =VLOOKUP(A2, B:C, 2)'), ' spreadsheet formula');
  assert.is(signalHints('この関数 def parse(x): return x のバグ'), ' programming source code');
  assert.is(signalHints('Löse 3x + 7 = 22'), ' math equation calculation');
  assert.is(signalHints('Bonjour, comment allez-vous ?'), '');
});

test('a route that changes version is embedded again; its old vectors are not used', async () => {
  const text = 'Write a limerick about a cat';
  const before = await classifier.classify(text, routes);
  const poetry = { name: 'code', version: '2', description: 'Poems, limericks and rhymes.', examples: ['Write a poem about the sea', 'A limerick about my dog'] };
  const after = await classifier.classify(text, [poetry, ...routes.slice(1)]);
  assert.is(after.scores[0]!.route, 'code');
  assert.ok(after.scores.find((s) => s.route === 'code')!.confidence > before.scores.find((s) => s.route === 'code')!.confidence);
});

test('calibration: two equally similar routes share the probability; a far better one takes most of it', () => {
  const same = probabilities([{ centroid: 0.6, nearest: 0.7, lexical: 0.3, lexicalNearest: 0.4 }, { centroid: 0.6, nearest: 0.7, lexical: 0.3, lexicalNearest: 0.4 }]);
  assert.ok(Math.abs(same[0]! - same[1]!) < 1e-9);
  const apart = probabilities([{ centroid: 0.8, nearest: 0.9, lexical: 0.6, lexicalNearest: 0.7 }, { centroid: 0.1, nearest: 0.2, lexical: 0, lexicalNearest: 0 }]);
  assert.ok(apart[0]! > 0.5 && apart[1]! < 0.1, JSON.stringify(apart));
});

test('an ONNX folder that does not exist leaves the classifier unavailable, without crashing', async () => {
  const broken = createClassifier({ onnxDir: '/nonexistent/svc-onnx-model' });
  await broken.ready();
  assert.is(broken.state, 'unavailable');
  await broken.classify('anything at all here', routes).then(() => assert.unreachable('classify must reject'), (err: Error) => assert.match(err.message, /unavailable/));
  await broken.close();
});

test.run();
