import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { MockUpstream, vendorError } from '../support/mock-upstream.js';
import { fence, lastUpstreamModel, models, routingHeaders, startRoutingWorld, type RoutingWorld } from './support.js';

const test = suite(`routing: route/<name> and auto rules over HTTP (${shape})`);
let w: RoutingWorld;

const want = (model: string, rule: string, more: { route?: string; reason?: string } = {}) => ({
  'x-svc-model': model, 'x-svc-routing-rule': rule, 'x-svc-route': more.route ?? null, 'x-svc-routing-reason': more.reason ?? null,
  'x-svc-routing-confidence': null, 'x-svc-fallback-from': null, 'x-svc-fallback-scope': null,
});

async function refused(p: Promise<unknown>): Promise<{ status: number; code: string; param: unknown }> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    assert.ok(e.headers?.get('x-svc-request-id'));
    return { status: e.status!, code: String(e.code), param: e.param };
  }
  throw new Error('expected a refusal');
}

test.before(async () => {
  w = await startRoutingWorld();
  await w.ws('POST', '/routes', { name: 'code', model: models.coder, fallbacks: [models.coderBackup], description: 'Programming help', examples: ['Fix this bug', 'Write a function'] });
  await w.ws('POST', '/routes', { name: 'writing', model: models.plain, fallbacks: [models.writer], description: 'Prose and editing' });
  await w.ws('POST', '/routes', { name: 'off', model: models.writer, enabled: false });
});
test.after(async () => w?.stop());
test.before.each(() => w.mock.reset());

test('route/<name>: the route\'s model, headers name the route (rule explicit), the upstream gets its own id, streams too', async () => {
  const r = await w.ask('route/code', 'Write a function that adds two numbers');
  assert.equal(routingHeaders(r.headers), want(models.coder, 'explicit', { route: 'code' }));
  assert.is(lastUpstreamModel(w.mock), 'coder/v2:latest');
  const s = await w.ask('route/code', 'Write it again', { stream: true });
  assert.is(s.content, 'Hello from the mock.');
  assert.equal(routingHeaders(s.headers), want(models.coder, 'explicit', { route: 'code' }));
});

test('route/<name>: a fallback takes over when the model cannot call the tools (capability rule)', async () => {
  const r = await w.ask('route/writing', 'Polish this paragraph please', { tools: true });
  assert.equal(routingHeaders(r.headers), want(models.writer, 'explicit', { route: 'writing' }));
  const plain = await w.ask('route/writing', 'Polish this paragraph please');
  assert.is(plain.headers.get('x-svc-model'), models.plain);
});

test('route/<name>: a failure before the first chunk falls back to the next model', async () => {
  // Not a transient failure (those are retried on the same model first): the model is unknown upstream.
  w.mock.enqueue({ error: vendorError('openai-model-not-found') });
  const r = await w.ask('route/code', 'Write a function');
  assert.equal(routingHeaders(r.headers), want(models.coderBackup, 'explicit', { route: 'code' }));
  assert.equal(w.mock.requests.map((q) => q.body.model), ['coder/v2:latest', 'coder-backup']);
});

test("route/<name>: a model whose provider was removed is skipped; with nothing left, 422 provider_not_configured", async () => {
  const spare = await new MockUpstream().start();
  try {
    await w.admin.provider('spare', spare.url);
    await w.admin.model('spare:m1');
    await w.ws('POST', '/routes', { name: 'fragile', model: 'spare:m1', fallbacks: [models.general] });
    await w.ws('POST', '/routes', { name: 'lonely', model: 'spare:m1' });
    assert.is((await w.ask('route/fragile', 'Anything at all, please')).headers.get('x-svc-model'), 'spare:m1');
    await w.admin.ok('DELETE', '/providers/spare?confirm=spare');
    const r = await w.ask('route/fragile', 'Anything at all, please');
    assert.equal(routingHeaders(r.headers), want(models.general, 'explicit', { route: 'fragile' }));
    assert.equal(await refused(w.ask('route/lonely', 'Anything at all, please')), { status: 422, code: 'provider_not_configured', param: 'model' });
  } finally {
    await w.ws('DELETE', '/routes/fragile');
    await w.ws('DELETE', '/routes/lonely');
    await spare.stop();
  }
});

test('route/<name>: unknown and disabled routes are 404 model_not_found', async () => {
  assert.equal(await refused(w.ask('route/nope', 'hello there friend')), { status: 404, code: 'model_not_found', param: 'model' });
  assert.equal(await refused(w.ask('route/off', 'hello there friend')), { status: 404, code: 'model_not_found', param: 'model' });
  assert.is(w.mock.requests.length, 0);
});

test('auto without a default model: 422 no_model, nothing sent', async () => {
  assert.equal(await refused(w.ask('auto', 'Tell me something about the weather in spring')), { status: 422, code: 'no_model', param: 'model' });
  assert.is(w.mock.requests.length, 0);
});

test('auto: classifier not loaded → the default with classifier_unavailable; the same message routes the same way', async () => {
  await w.ws('PATCH', '/routing', { default_model: models.general });
  for (let i = 0; i < 2; i++) {
    const r = await w.ask('auto', 'Tell me something about the weather in spring');
    assert.equal(routingHeaders(r.headers), want(models.general, 'default', { reason: 'classifier_unavailable' }));
  }
});

test('auto: a message too short for any route → default, too_short (a route\'s own min_chars counts)', async () => {
  const r = await w.ask('auto', 'hi');
  assert.equal(routingHeaders(r.headers), want(models.general, 'default', { reason: 'too_short' }));
  // Every enabled route asks for more than this message has: too_short again, even though it passes the configured 12.
  await w.ws('PATCH', '/routes/code', { min_chars: 200 });
  await w.ws('PATCH', '/routes/writing', { min_chars: 200 });
  const longer = await w.ask('auto', 'Tell me about the weather');
  assert.equal(routingHeaders(longer.headers), want(models.general, 'default', { reason: 'too_short' }));
  await w.ws('PATCH', '/routes/code', { min_chars: null });
  await w.ws('PATCH', '/routes/writing', { min_chars: null });
});

test('auto: a fenced code block goes to the code route (rule signal), only once one is declared', async () => {
  const before = await w.ask('auto', fence);
  assert.equal(routingHeaders(before.headers), want(models.general, 'default', { reason: 'classifier_unavailable' }));
  assert.is((await w.ws('PATCH', '/routing', { code_route: 'code' })).status, 200);
  const r = await w.ask('auto', fence, { stream: true });
  assert.equal(routingHeaders(r.headers), want(models.coder, 'signal', { route: 'code' }));
  // Inline backticks are not a fenced block.
  const inline = await w.ask('auto', 'What does `print(1/0)` do in Python?');
  assert.is(inline.headers.get('x-svc-routing-reason'), 'classifier_unavailable');
});

test('auto: a pinned model wins over everything (rule pinned, no route)', async () => {
  await w.ws('PATCH', '/routing', { pinned_model: models.writer });
  const r = await w.ask('auto', fence);
  assert.equal(routingHeaders(r.headers), want(models.writer, 'pinned'));
  await w.ws('PATCH', '/routing', { pinned_model: null });
});

test('auto: routing off → default, routing_off; no enabled routes → default, no_routes', async () => {
  await w.ws('PATCH', '/routing', { routing_enabled: false });
  assert.equal(routingHeaders((await w.ask('auto', fence)).headers), want(models.general, 'default', { reason: 'routing_off' }));
  await w.ws('PATCH', '/routing', { routing_enabled: true });
  await w.ws('PATCH', '/routes/code', { enabled: false });
  await w.ws('PATCH', '/routes/writing', { enabled: false });
  assert.equal(routingHeaders((await w.ask('auto', fence)).headers), want(models.general, 'default', { reason: 'no_routes' }));
  await w.ws('PATCH', '/routes/code', { enabled: true });
  await w.ws('PATCH', '/routes/writing', { enabled: true });
});

test('auto: the default model removed → 404 model_not_found naming it, never a silent other model', async () => {
  await w.admin.model('local:temp-default');
  await w.ws('PATCH', '/routing', { default_model: 'local:temp-default' });
  await w.admin.ok('DELETE', `/models/${encodeURIComponent('local:temp-default')}?confirm=local:temp-default`);
  assert.equal(await refused(w.ask('auto', 'Tell me something about the weather in spring')), { status: 404, code: 'model_not_found', param: 'model' });
  const settings = await w.ws('GET', '/routing');
  assert.equal([settings.body.needs_model, settings.body.missing_models], [true, ['local:temp-default']]);
  await w.ws('PATCH', '/routing', { default_model: models.general });
});

test("budgets' cheaper-model fallback still applies after routing: routing headers plus x-svc-fallback-from/scope", async () => {
  const ws = await w.admin.workspace();
  const key = await w.admin.key(ws);
  await w.admin.model('local:cheap', { input_price: '0.10', output_price: '0.40' });
  await w.admin.ok('POST', `/workspaces/${ws}/routes`, { name: 'code', model: models.coder });
  await w.admin.ok('PUT', `/workspaces/${ws}/budget-settings`, { fallback_model: 'local:cheap' });
  // Room for the cheap model's hold (~400) but not the route's model's (~10,000) with max_tokens 1000.
  await w.admin.ok('POST', `/workspaces/${ws}/budget-caps`, { scope: 'workspace', amount_micro_usd: 5_000, period: 'day' });
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: key, maxRetries: 0 });
  const { response } = await client.chat.completions.create({ model: 'route/code', messages: [{ role: 'user', content: 'Write a function' }], max_tokens: 1000 }).withResponse();
  assert.equal(routingHeaders(response.headers), { ...want('local:cheap', 'explicit', { route: 'code' }), 'x-svc-fallback-from': models.coder, 'x-svc-fallback-scope': 'workspace' });
  assert.is(lastUpstreamModel(w.mock), 'cheap');
});

test('/healthz: checks.classifier down with error_code unavailable makes the service degraded (HTTP 200)', async () => {
  const res = await fetch(`${w.svc.url}/healthz`);
  assert.is(res.status, 200);
  const body = (await res.json()) as { status: string; checks: Record<string, { status: string; error_code?: string }> };
  assert.is(body.status, 'degraded');
  assert.equal([body.checks.classifier!.status, body.checks.classifier!.error_code], ['down', 'unavailable']);
  assert.is(body.checks.database!.status, 'ok');
});

test.run();
