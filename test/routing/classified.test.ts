import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { shape } from '../support/harness.js';
import { eventually, models, routingHeaders, startRoutingWorld, type RoutingWorld } from './support.js';

const test = suite(`routing: the classifier stage of auto over HTTP (${shape})`);
let w: RoutingWorld;

/** Routes as an operator would write them (the evaluation harness's): a sentence and five example phrasings each. */
const operatorRoutes = (JSON.parse(readFileSync(resolve(packageRoot, 'bench/routing/routes.json'), 'utf8')) as Array<{ name: string; description: string; examples: string[] }>)
  .filter((r) => ['code', 'writing', 'math', 'data', 'translation'].includes(r.name));
const modelOf: Record<string, string> = { code: models.coder, writing: models.writer, math: models.general, data: models.coderBackup, translation: models.writer };

type Health = { status: string; checks: Record<string, { status: string; latency_ms: number; error_code?: string }> };
const health = async (url: string): Promise<Health> => (await (await fetch(`${url}/healthz`)).json()) as Health;

/** The headers of an auto reply, confidence parsed. */
async function route(text: string): Promise<{ rule: string | null; route: string | null; reason: string | null; model: string | null; confidence: number | null }> {
  const h = routingHeaders((await w.ask('auto', text)).headers);
  const c = h['x-svc-routing-confidence'];
  if (c !== null) assert.match(c, /^(0\.\d\d|1\.00)$/);
  return { rule: h['x-svc-routing-rule'], route: h['x-svc-route'], reason: h['x-svc-routing-reason'], model: h['x-svc-model'], confidence: c === null ? null : Number(c) };
}

test.before(async () => {
  w = await startRoutingWorld({});
  for (const r of operatorRoutes) await w.ws('POST', '/routes', { ...r, model: modelOf[r.name] });
  await w.ws('PATCH', '/routing', { default_model: models.plain });
  // Loading never blocks boot; the check turns ok once the worker has the model.
  assert.ok((await eventually(async () => (await health(w.svc.url)).checks.classifier?.status === 'ok', 30_000)) >= 0, 'classifier did not load');
});
test.after(async () => w?.stop());

test('/healthz: checks.classifier ok once loaded, status ok', async () => {
  const h = await health(w.svc.url);
  assert.equal([h.status, h.checks.classifier], ['ok', { status: 'ok', latency_ms: h.checks.classifier!.latency_ms }]);
});

test('classified: each realistic prompt goes to its route, with the route\'s model and a confidence at or above the threshold', async () => {
  const cases: Array<[string, string]> = [
    ['Write a Python function that checks whether a string is a palindrome', 'code'],
    ['Translate "where is the train station" into German', 'translation'],
    ['Write a SQL query that counts orders per customer in 2023', 'data'],
    ['Solve the equation 2x^2 - 8 = 0 step by step', 'math'],
    ['Draft a friendly email inviting my team to a picnic', 'writing'],
  ];
  for (const [text, name] of cases) {
    const r = await route(text);
    assert.equal({ ...r, confidence: null }, { rule: 'classified', route: name, reason: null, model: modelOf[name]!, confidence: null }, text);
    assert.ok(r.confidence! >= 0.45 && r.confidence! <= 1, `${text}: ${r.confidence}`);
  }
});

test('below_threshold: a prompt no route claims goes to the default, with the confidence it got', async () => {
  const r = await route('What should I name my new puppy?');
  assert.equal({ ...r, confidence: null }, { rule: 'default', route: null, reason: 'below_threshold', model: models.plain, confidence: null });
  assert.ok(r.confidence! < 0.45);
});

test('ambiguous: a prompt two routes claim almost equally goes to the default', async () => {
  const r = await route('Write a Python script that loads a CSV into a pandas dataframe and plots it');
  assert.equal({ ...r, confidence: null }, { rule: 'default', route: null, reason: 'ambiguous', model: models.plain, confidence: null });
  assert.ok(r.confidence! >= 0.45);
});

test("a route's own threshold and margin override the configured ones", async () => {
  const text = 'Translate "where is the train station" into German';
  await w.ws('PATCH', '/routes/translation', { confidence_threshold: 0.999 });
  assert.equal((await route(text)).reason, 'below_threshold');
  await w.ws('PATCH', '/routes/translation', { confidence_threshold: null, margin: 0.999 });
  assert.equal((await route(text)).reason, 'ambiguous');
  await w.ws('PATCH', '/routes/translation', { margin: null });
  assert.equal((await route(text)).rule, 'classified');
});

test('the same latest user message always routes the same way (same route, same confidence)', async () => {
  const text = 'Prove that the sum of two even numbers is even';
  const first = await route(text);
  for (let i = 0; i < 3; i++) assert.equal(await route(text), first);
  // Earlier turns do not matter: only the latest user message is read.
  const { response } = await w.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'Translate hello into French' }, { role: 'assistant', content: 'Bonjour' }, { role: 'user', content: text }] }).withResponse();
  assert.equal([response.headers.get('x-svc-route'), response.headers.get('x-svc-routing-confidence')], [first.route, first.confidence!.toFixed(2)]);
});

test('a model that cannot load: checks.classifier down (unavailable), status degraded, auto → classifier_unavailable', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'svc-no-model-'));
  const broken = await startRoutingWorld({ plugins: { routing: { config: { classifier: { modelDir: empty } } } } });
  try {
    // The encoder loads once a route exists (plugins/routing/README.md): before that nothing needs it.
    assert.equal((await health(broken.svc.url)).checks.classifier?.status, 'ok');
    await broken.ws('POST', '/routes', { ...operatorRoutes[0], model: models.coder });
    await broken.ws('PATCH', '/routing', { default_model: models.plain });
    assert.ok((await eventually(async () => (await health(broken.svc.url)).checks.classifier?.error_code === 'unavailable', 10_000)) >= 0);
    const h = await health(broken.svc.url);
    assert.equal([h.status, h.checks.classifier!.status], ['degraded', 'down']);
    const r = routingHeaders((await broken.ask('auto', 'Write a Python function that checks whether a string is a palindrome')).headers);
    assert.equal([r['x-svc-routing-rule'], r['x-svc-routing-reason'], r['x-svc-model'], r['x-svc-routing-confidence']], ['default', 'classifier_unavailable', models.plain, null]);
  } finally {
    await broken.stop();
    rmSync(empty, { recursive: true, force: true });
  }
});

test.run();
