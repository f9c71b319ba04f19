import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClassifier, type LocalClassifier, type RouteText } from '../../plugins/routing/classifier/index.js';
import { shape } from '../support/harness.js';

const test = suite(`route classifier (${shape})`);
const routes: RouteText[] = [
  { name: 'code', version: '1', description: 'Programming help: writing, fixing and explaining source code.', examples: ['Fix this Python function', 'Why does my JavaScript throw TypeError?', 'Write a bash script that renames files'] },
  { name: 'math', version: '1', description: 'Mathematics: equations, calculus, probability and proofs.', examples: ['Solve 3x + 7 = 22', 'What is the derivative of sin(x)?', 'Probability of two sixes with two dice'] },
  { name: 'translation', version: '1', description: 'Translating text between languages.', examples: ['Translate this sentence into French', 'How do you say thank you in Japanese?', 'Translate this email from German to English'] },
];
let classifier: LocalClassifier;

test.before(async () => {
  // No result cache, so the worker's prompt LRU is what the tests below observe.
  classifier = createClassifier({ resultCacheSize: 0, promptCacheSize: 2 });
  await classifier.ready();
});
test.after(async () => {
  await classifier.close();
});

test('loads the shipped model and scores every route, best first, confidences in 0–1', async () => {
  assert.is(classifier.state, 'ready');
  const { scores } = await classifier.classify('My Python script crashes with a KeyError when reading the config dict', routes);
  assert.equal(scores.map((s) => s.route).sort(), ['code', 'math', 'translation']);
  assert.is(scores[0]!.route, 'code');
  for (let i = 1; i < scores.length; i++) assert.ok(scores[i - 1]!.confidence >= scores[i]!.confidence);
  for (const s of scores) assert.ok(s.confidence >= 0 && s.confidence <= 1, String(s.confidence));
  assert.ok(scores[0]!.confidence > scores[2]!.confidence);
});

test('determinism: the same text and routes give the same scores, in this classifier and in a fresh one', async () => {
  const text = 'What is the integral of x squared from zero to three?';
  const first = await classifier.classify(text, routes);
  const again = await classifier.classify(text, routes);
  const other = createClassifier({ resultCacheSize: 0, promptCacheSize: 0 });
  try {
    await other.ready();
    assert.equal(await other.classify(text, routes), first);
  } finally {
    await other.close();
  }
  assert.equal(again, first);
  assert.is(first.scores[0]!.route, 'math');
});

test('LRU: a prompt is encoded once while cached; the least recently used one is evicted', async () => {
  const before = await classifier.stats();
  await classifier.classify('alpha: translate good morning into Spanish', routes);
  await classifier.classify('beta: how many primes are below fifty', routes);
  await classifier.classify('alpha: translate good morning into Spanish', routes);
  let now = await classifier.stats();
  assert.is(now.encoded - before.encoded, 2, 'the repeated prompt came from the cache');
  assert.is(now.promptCacheHits - before.promptCacheHits, 1);
  // Capacity 2: gamma evicts beta (alpha was used more recently), so beta is encoded again.
  await classifier.classify('gamma: sort an array in Go', routes);
  await classifier.classify('beta: how many primes are below fifty', routes);
  now = await classifier.stats();
  assert.is(now.encoded - before.encoded, 4);
});

test('result cache on the calling thread: a repeated prompt never reaches the worker', async () => {
  const cached = createClassifier({ resultCacheSize: 8 });
  try {
    await cached.ready();
    const a = await cached.classify('convert this callback to async await in Node', routes);
    const b = await cached.classify('convert this callback to async await in Node', routes);
    const stats = await cached.stats();
    assert.equal(a, b);
    assert.is(stats.encoded, 1);
    assert.is(stats.resultCacheHits, 1);
    assert.is(stats.promptCacheHits, 0);
    // A new route version is a different key: classified again (the prompt vector comes from the worker's LRU).
    await cached.classify('convert this callback to async await in Node', routes.map((r) => ({ ...r, version: '2' })));
    assert.is((await cached.stats()).promptCacheHits, 1);
  } finally {
    await cached.close();
  }
});

test('off the event loop: the loop keeps turning while a batch is encoded in the worker', async () => {
  const texts = Array.from({ length: 12 }, (_, i) => `batch prompt ${i}: explain recursion with an example in Haskell number ${i}`);
  let turns = 0;
  let spinning = true;
  const spin = (): void => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  const before = await classifier.stats();
  const results = await Promise.all(texts.map((t) => classifier.classify(t, routes)));
  spinning = false;
  assert.is((await classifier.stats()).encoded - before.encoded, texts.length);
  assert.is(results.length, texts.length);
  // Twelve encodes on this thread would leave the loop a turn or two between them; in the worker it turns freely.
  assert.ok(turns > 10 * texts.length, `the loop turned only ${turns} times`);
});

test('a model path that does not exist leaves the classifier unavailable, without crashing', async () => {
  const states: string[] = [];
  const broken = createClassifier({ modelDir: join(tmpdir(), 'no-such-model-dir'), onStateChange: (s) => states.push(s) });
  await broken.ready();
  assert.is(broken.state, 'unavailable');
  assert.equal(states, ['unavailable']);
  try {
    await broken.classify('anything at all here', routes);
    assert.unreachable('classify must reject when unavailable');
  } catch (err) {
    assert.match((err as Error).message, /route classifier unavailable/);
  }
  await broken.close();
});

test('a corrupt model file leaves the classifier unavailable too', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-broken-model-'));
  await writeFile(join(dir, 'model.json'), '{"modelTopology": 42');
  await writeFile(join(dir, 'vocab.json'), '[]');
  const broken = createClassifier({ modelDir: dir });
  try {
    await broken.ready();
    assert.is(broken.state, 'unavailable');
    assert.is((await broken.stats()).encoded, 0);
    await broken.classify('anything at all here', routes).then(() => assert.unreachable('classify must reject'), (err: Error) => assert.match(err.message, /unavailable/));
  } finally {
    await broken.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
