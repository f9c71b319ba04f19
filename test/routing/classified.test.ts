import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { DEFAULT_CONFIDENCE_THRESHOLD } from '../../plugins/routing/classifier/index.js';
import { shape } from '../support/harness.js';
import { models, routingHeaders, startRoutingWorld, type RoutingWorld } from './support.js';

const test = suite(`routing: the classifier stage of auto over HTTP (${shape})`);
let w: RoutingWorld;

/** Routes as an operator would write them (the evaluation harness's assistant set): a sentence and five example phrasings each. */
const operatorRoutes = (JSON.parse(readFileSync(resolve(packageRoot, 'bench/routing/sets/assistant/routes.json'), 'utf8')) as { routes: Array<{ name: string; description: string; examples: string[] }> }).routes
  .filter((r) => ['code', 'writing', 'math', 'data', 'translation'].includes(r.name));
const modelOf: Record<string, string> = { code: models.coder, writing: models.writer, math: models.general, data: models.coderBackup, translation: models.writer };

type Health = { status: string; checks: Record<string, { status: string; latency_ms: number; error_code?: string }> };
const health = async (url: string): Promise<Health> => (await (await fetch(`${url}/healthz`)).json()) as Health;

/** The headers of an auto reply, confidence parsed. */
async function route(text: string, world = w): Promise<{ rule: string | null; route: string | null; reason: string | null; model: string | null; confidence: number | null }> {
  const h = routingHeaders((await world.ask('auto', text)).headers);
  const c = h['x-svc-routing-confidence'];
  if (c !== null) assert.match(c, /^(0\.\d\d|1\.00)$/);
  return { rule: h['x-svc-routing-rule'], route: h['x-svc-route'], reason: h['x-svc-routing-reason'], model: h['x-svc-model'], confidence: c === null ? null : Number(c) };
}

test.before(async () => {
  w = await startRoutingWorld({});
  // Readiness: the built-in classifier is loaded before the service listens, so /healthz is ok at once.
  const h = await health(w.svc.url);
  assert.equal([h.status, h.checks.classifier?.status], ['ok', 'ok']);
  for (const r of operatorRoutes) await w.ws('POST', '/routes', { ...r, model: modelOf[r.name] });
  await w.ws('PATCH', '/routing', { default_model: models.plain });
});
test.after(async () => w?.stop());

test('classified: each realistic prompt goes to its route, with the route\'s model and a confidence at or above the threshold', async () => {
  const cases: Array<[string, string]> = [
    ['Write a Python function that checks whether a string is a palindrome', 'code'],
    ['Translate "where is the train station" into German', 'translation'],
    ['Write a SQL query that counts orders per customer in 2023', 'data'],
    ['Solve the equation 2x^2 - 8 = 0 step by step', 'math'],
    ['Draft a polite email to my landlord about the broken heating', 'writing'],
  ];
  for (const [text, name] of cases) {
    const r = await route(text);
    assert.equal({ ...r, confidence: null }, { rule: 'classified', route: name, reason: null, model: modelOf[name]!, confidence: null }, text);
    assert.ok(r.confidence! >= DEFAULT_CONFIDENCE_THRESHOLD && r.confidence! <= 1, `${text}: ${r.confidence}`);
  }
});

test('below_threshold: a prompt no route claims goes to the default, with the confidence it got', async () => {
  const r = await route('What should I name my new puppy?');
  assert.equal({ ...r, confidence: null }, { rule: 'default', route: null, reason: 'below_threshold', model: models.plain, confidence: null });
  assert.ok(r.confidence! < DEFAULT_CONFIDENCE_THRESHOLD);
});

test("a route's own threshold and margin override the configured ones", async () => {
  const text = 'How do you say "good luck" in Portuguese?';
  const before = await route(text);
  assert.equal([before.rule, before.route], ['classified', 'translation']);
  // Just above what it got: below_threshold with the route's own threshold, classified without it.
  await w.ws('PATCH', '/routes/translation', { confidence_threshold: Math.min(1, before.confidence! + 0.01) });
  assert.equal((await route(text)).reason, 'below_threshold');
  await w.ws('PATCH', '/routes/translation', { confidence_threshold: null, margin: 0.999 });
  assert.equal((await route(text)).reason, 'ambiguous');
  await w.ws('PATCH', '/routes/translation', { margin: null });
  assert.equal((await route(text)).rule, 'classified');
});

test('readiness: a route created or changed is used by the very next auto request (never classifier_unavailable)', async () => {
  const text = 'Is this mountain hike safe in winter with kids?';
  assert.equal((await route(text)).reason, 'below_threshold');
  await w.ws('POST', '/routes', { name: 'outdoors', model: models.general, description: 'Hiking, camping and mountain trips.', examples: ['Best hiking trail near Munich', 'What to pack for a camping weekend in the mountains', 'Is this mountain hike safe in winter?'] });
  const created = await route(text);
  assert.equal([created.rule, created.route], ['classified', 'outdoors']);
  // Changed texts (a new version) are read at once too: the route now claims something else.
  await w.ws('PATCH', '/routes/outdoors', { description: 'Gardening: plants, soil and lawns.', examples: ['When should I plant tulips?', 'My tomato leaves turn yellow', 'How often to water a lawn'] });
  assert.equal((await route(text)).reason, 'below_threshold');
  assert.equal((await route('How often should I water the lawn in summer?')).route, 'outdoors');
  await w.ws('DELETE', '/routes/outdoors');
});

test('the same latest user message always routes the same way (same route, same confidence)', async () => {
  const text = 'Prove that the sum of two even numbers is even';
  const first = await route(text);
  for (let i = 0; i < 3; i++) assert.equal(await route(text), first);
  // Earlier turns do not matter: only the latest user message is read.
  const { response } = await w.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'Translate hello into French' }, { role: 'assistant', content: 'Bonjour' }, { role: 'user', content: text }] }).withResponse();
  assert.equal([response.headers.get('x-svc-route'), response.headers.get('x-svc-routing-confidence')], [first.route, first.confidence!.toFixed(2)]);
});

test('decisions are identical after a restart: a new service over the same routes gives the same route and confidence', async () => {
  const texts = ['Write a Python function that checks whether a string is a palindrome', 'Prove that the sum of two even numbers is even', '¿Cómo se dice "mariposa" en alemán?', 'What should I name my new puppy?'];
  const before = [];
  for (const t of texts) before.push(await route(t));
  const other = await startRoutingWorld({});
  try {
    for (const r of operatorRoutes) await other.ws('POST', '/routes', { ...r, model: modelOf[r.name] });
    await other.ws('PATCH', '/routing', { default_model: models.plain });
    const after = [];
    for (const t of texts) after.push(await route(t, other));
    assert.equal(after, before);
  } finally {
    await other.stop();
  }
});

test('an ONNX folder that cannot load: checks.classifier down (unavailable), status degraded, auto → classifier_unavailable', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'svc-no-model-'));
  const broken = await startRoutingWorld({ plugins: { routing: { config: { classifier: { onnxDir: empty } } } } });
  try {
    await broken.ws('POST', '/routes', { ...operatorRoutes[0], model: models.coder });
    await broken.ws('PATCH', '/routing', { default_model: models.plain });
    let h = await health(broken.svc.url);
    for (let i = 0; i < 100 && h.checks.classifier?.error_code !== 'unavailable'; i++) h = await new Promise((r) => setTimeout(r, 50)).then(() => health(broken.svc.url));
    assert.equal([h.status, h.checks.classifier!.status, h.checks.classifier!.error_code], ['degraded', 'down', 'unavailable']);
    const r = routingHeaders((await broken.ask('auto', 'Write a Python function that checks whether a string is a palindrome')).headers);
    assert.equal([r['x-svc-routing-rule'], r['x-svc-routing-reason'], r['x-svc-model'], r['x-svc-routing-confidence']], ['default', 'classifier_unavailable', models.plain, null]);
  } finally {
    await broken.stop();
    rmSync(empty, { recursive: true, force: true });
  }
});

test.run();
