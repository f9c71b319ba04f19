import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createClassifier, type RouteText } from '../../plugins/routing/classifier/index.js';
import { OnnxEncoder } from '../../plugins/routing/classifier/onnx/encoder.js';
import { shape } from '../support/harness.js';
import { eventually, models, routingHeaders, startRoutingWorld, type RoutingWorld } from '../routing/support.js';
import { writeTinyEncoder } from './tiny-onnx.js';

const test = suite(`route classifier: an operator's ONNX encoder (${shape})`);
const routes: RouteText[] = [
  { name: 'code', version: '1', description: 'Programming help: writing, fixing and explaining source code.', examples: ['Fix this Python function', 'Why does my JavaScript script error?'] },
  { name: 'math', version: '1', description: 'Mathematics: equations, calculus, probability and proofs.', examples: ['Solve this equation', 'What is the integral of this?'] },
  { name: 'translation', version: '1', description: 'Translating text between languages.', examples: ['Translate this sentence into French', 'How do you say this in Japanese?'] },
];
let dir: string;
let w: RoutingWorld | undefined;

test.before(async () => {
  dir = await writeTinyEncoder();
});
test.after(async () => {
  await w?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the encoder tokenizes with the folder\'s WordPiece vocabulary and mean-pools the token vectors to a unit vector', async () => {
  const encoder = await OnnxEncoder.load(dir);
  const v = await encoder.embed('Solve the integral, please');
  assert.is(v.length, 4);
  assert.ok(Math.abs(v.reduce((s, x) => s + x * x, 0) - 1) < 1e-5);
  assert.ok(v[1]! > v[0]! && v[1]! > v[2]!, `math words point along the math axis: ${[...v]}`);
  await encoder.close();
});

test('in its worker, with the same scoring: each prompt goes to the route of its topic, deterministically', async () => {
  const c = createClassifier({ onnxDir: dir });
  await c.ready();
  assert.equal([c.state, c.encoder], ['ready', 'onnx']);
  const cases: Array<[string, string]> = [['my python function has a bug', 'code'], ['solve this equation with the derivative', 'math'], ['translate this into spanish please', 'translation']];
  for (const [text, route] of cases) {
    const first = await c.classify(text, routes);
    assert.is(first.scores[0]!.route, route, text);
    assert.equal(await c.classify(text, routes), first);
  }
  await c.close();
  assert.is(c.state, 'unavailable');
});

test('a folder without a usable model leaves the classifier unavailable', async () => {
  await writeFile(join(dir, 'broken.onnx'), 'not a model');
  const c = createClassifier({ onnxDir: join(dir, 'missing') });
  await c.ready();
  assert.is(c.state, 'unavailable');
  await c.close();
});

test('over HTTP: routing config names the folder; /healthz turns ok once the worker has loaded it, and auto classifies with it', async () => {
  w = await startRoutingWorld({ plugins: { routing: { config: { classifier: { onnxDir: dir } } } } });
  const health = async () => ((await (await fetch(`${w!.svc.url}/healthz`)).json()) as { checks: Record<string, { status: string }> }).checks.classifier?.status;
  assert.ok((await eventually(async () => (await health()) === 'ok', 30_000)) >= 0, 'the ONNX classifier did not become ready');
  for (const r of routes) await w.ws('POST', '/routes', { name: r.name, description: r.description, examples: r.examples, model: r.name === 'code' ? models.coder : models.writer });
  await w.ws('PATCH', '/routing', { default_model: models.plain });
  const h = routingHeaders((await w.ask('auto', 'why does this javascript function throw an error')).headers);
  assert.equal([h['x-svc-routing-rule'], h['x-svc-route'], h['x-svc-model']], ['classified', 'code', models.coder]);
  assert.match(h['x-svc-routing-confidence']!, /^(0\.\d\d|1\.00)$/);
  const explained = await w.ws('POST', '/routing/explain', { prompt: 'solve the integral of this equation' });
  assert.equal([explained.status, explained.body.classifier, explained.body.decision.route], [200, { state: 'ready', encoder: 'onnx' }, 'math']);
});

test.run();
