import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { DEFAULT_CONFIDENCE_THRESHOLD, MAX_CLASSIFIED_CHARS } from '../../plugins/routing/classifier/index.js';
import { shape, startService, type TestService } from '../support/harness.js';
import { adminEnv } from '../support/provision.js';
import { fence, member, models, startRoutingWorld, type RoutingWorld } from './support.js';

const test = suite(`routing: the explain call, recent decisions, replicas (${shape})`);
let w: RoutingWorld;

const routes = [
  { name: 'code', model: models.coder, description: 'Programming help: writing, fixing, reviewing or explaining source code and scripts.', examples: ['Write a Python function that removes duplicates from a list', 'Why does this JavaScript code throw TypeError?', 'Refactor this Java class'] },
  { name: 'math', model: models.general, description: 'Mathematics: equations, calculus, probability and proofs.', examples: ['Solve 3x + 7 = 22 and show the steps', 'What is the derivative of x^2 * sin(x)?', 'Prove that the square root of 2 is irrational'] },
  { name: 'translation', model: models.writer, description: 'Translating text between languages.', examples: ['Translate this sentence into French', "How do you say 'thank you' in Japanese?", 'Translate the following paragraph from German to English'] },
];
const explain = (prompt: string, world = w) => world.ws<any>('POST', '/routing/explain', { prompt });

test.before(async () => {
  w = await startRoutingWorld({});
  for (const r of routes) await w.ws('POST', '/routes', r);
  await w.ws('PATCH', '/routing', { default_model: models.plain });
});
test.after(async () => w?.stop());

test('explain: each route\'s score and the decision auto would make, without calling a model', async () => {
  const upstreamCalls = w.mock.requests.length;
  const r = await explain('Solve the equation 2x + 6 = 14 step by step');
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['classified_chars', 'classifier', 'decision', 'none', 'scores']);
  assert.equal(r.body.classifier, { state: 'ready', encoder: 'student' });
  assert.equal({ ...r.body.decision, confidence: null }, { rule: 'classified', route: 'math', model: models.general, reason: null, confidence: null });
  assert.is(r.body.classified_chars, 'Solve the equation 2x + 6 = 14 step by step'.length);
  assert.equal(r.body.scores.map((s: any) => s.route).sort(), ['code', 'math', 'translation']);
  assert.is(r.body.scores[0].route, 'math');
  assert.is(r.body.scores[0].confidence, r.body.decision.confidence);
  for (const s of r.body.scores) {
    assert.equal(Object.keys(s).sort(), ['centroid', 'confidence', 'lexical', 'lexical_nearest', 'nearest', 'route', 'threshold']);
    assert.is(s.threshold, DEFAULT_CONFIDENCE_THRESHOLD);
  }
  assert.ok(Math.abs(r.body.scores.reduce((a: number, s: any) => a + s.confidence, r.body.none) - 1) < 0.005);
  // The same prompt through chat: the same route and confidence as explained.
  const asked = await w.ask('auto', 'Solve the equation 2x + 6 = 14 step by step');
  assert.equal([asked.headers.get('x-svc-route'), asked.headers.get('x-svc-routing-confidence')], ['math', r.body.decision.confidence.toFixed(2)]);
  assert.is(w.mock.requests.length, upstreamCalls + 1, 'explain called no model');
});

test('explain: the rules before the classifier decide, and the scores are shown all the same; long prompts are read up to the cap', async () => {
  await w.ws('PATCH', '/routing', { code_route: 'code' });
  const signal = await explain(fence);
  assert.equal([signal.body.decision.rule, signal.body.decision.route, signal.body.scores.length], ['signal', 'code', 3]);
  await w.ws('PATCH', '/routing', { code_route: null });
  const short = await explain('hi');
  assert.equal([short.body.decision.rule, short.body.decision.reason, short.body.decision.model], ['default', 'too_short', models.plain]);
  const long = await explain('Translate this into French. '.repeat(1000));
  assert.equal([long.body.classified_chars, long.body.decision.route], [MAX_CLASSIFIED_CHARS, 'translation']);
  const invalid = await w.ws<any>('POST', '/routing/explain', {});
  assert.equal([invalid.status, invalid.body.error.code], [400, 'invalid_request']);
});

test('explain and recent: workspace admins only (a member gets 403)', async () => {
  const m = await member(w, 'explain-member@example.com');
  for (const [method, path, body] of [['POST', 'routing/explain', { prompt: 'x' }], ['GET', 'routing/recent', undefined]] as const) {
    const r = await m.admin.call<any>(method, `/workspaces/${w.workspaceId}/${path}`, body);
    assert.equal([r.status, r.body.error.code], [403, 'forbidden']);
  }
});

test('recent decisions: per route the prompts it claimed, and those that fell to the default; text only where the workspace records prompts', async () => {
  await w.ask('auto', 'Translate "good night" into Spanish');
  await w.ask('auto', 'What should I name my new puppy?');
  let r = await w.ws('GET', '/routing/recent');
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body.claimed).sort(), ['code', 'math', 'translation']);
  const claimed = r.body.claimed.translation[0];
  assert.equal({ ...claimed, at: null, request_id: null, confidence: null }, { at: null, request_id: null, confidence: null, rule: 'classified', reason: null, chars: 'Translate "good night" into Spanish'.length, text: null });
  assert.equal([r.body.fell_to_default[0].reason, r.body.fell_to_default[0].text, r.body.fell_to_default[0].chars], ['below_threshold', null, 'What should I name my new puppy?'.length]);
  // Recording on: the prompt's text is shown too.
  await w.admin.ok('PUT', `/workspaces/${w.workspaceId}/recording`, { enabled: true });
  const { headers } = await w.ask('auto', 'Translate "see you tomorrow" into Italian');
  r = await w.ws('GET', '/routing/recent');
  assert.equal([r.body.claimed.translation[0].text, r.body.claimed.translation[0].request_id], ['Translate "see you tomorrow" into Italian', headers.get('x-request-id')]);
  await w.admin.ok('PUT', `/workspaces/${w.workspaceId}/recording`, { enabled: false });
});

test('replicas: a second service on the same database decides exactly as the first (route and confidence)', async () => {
  const two: TestService = await startService({ backing: w.backing, overrides: {}, env: adminEnv });
  try {
    const other = new OpenAI({ baseURL: `${two.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
    for (const text of ['Write a Python function that checks for palindromes', '¿Cuál es la derivada de x al cuadrado?', 'Translate "good morning" into German', 'Recommend a good novel']) {
      const a = (await w.ask('auto', text)).headers;
      // The second replica reads the routes from the shared database (its snapshot loads at start).
      const { response } = await other.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: text }] }).withResponse();
      for (const h of ['x-svc-routing-rule', 'x-svc-route', 'x-svc-routing-reason', 'x-svc-routing-confidence']) assert.is(response.headers.get(h), a.get(h), `${text}: ${h}`);
    }
  } finally {
    await two.stop();
  }
});

test.run();
