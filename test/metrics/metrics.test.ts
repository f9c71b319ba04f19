import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, type Backing } from '../support/harness.js';
import { MockUpstream, vendorError } from '../support/mock-upstream.js';
import { charged, client, newKey, provision, startInstance, type Instance } from '../budgets/support.js';
import { histogramCount, metricsPlugins, scrape, scrapeToken, value } from './support.js';

/**
 * GET /metrics with a scrape token on the service's port: every kind of request the pipeline
 * settles, counted and checked against what was sent (issue 30 item 5).
 */
const test = suite('metrics: /metrics with a token — counters against the requests sent');

/** Model requests that reach admission (the rate limit counts them); the next one is refused. */
const admitted = 7;
let backing: Backing;
let svc: Instance;
let mock: MockUpstream;
let url: string;

test.before(async () => {
  backing = await createBacking();
  mock = await new MockUpstream().start();
  svc = await startInstance(backing, { plugins: metricsPlugins(admitted), env: { SVC_METRICS_TOKEN: scrapeToken } });
  url = `${svc.url}/metrics`;
  await provision(svc.admin, mock, { big: { input: '3.33', output: '17.77' }, small: { input: '0.07', output: '0.29' } });
});
test.after(async () => {
  await svc?.stop();
  await mock?.stop();
  await backing?.drop();
});

test('without the token, or with another, 401 invalid_api_key; with it, the Prometheus text format', async () => {
  for (const token of [undefined, 'metrics-scrape-token-wrong-one']) {
    const r = await scrape(url, token);
    assert.is(r.status, 401);
    assert.is((JSON.parse(r.text) as { error: { code: string } }).error.code, 'invalid_api_key');
  }
  const ok = await scrape(url, scrapeToken);
  assert.is(ok.status, 200);
  assert.is(ok.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  assert.is(value(ok.families, 'svc_dependency_up', { dependency: 'database' }), 1);
  assert.is(value(ok.families, 'svc_dependency_up', { dependency: 'cache' }), 1);
  assert.ok(ok.families.has('process_cpu_user_seconds_total') && ok.families.has('nodejs_eventloop_lag_seconds'), 'process metrics');
});

/**
 * The rate limit counts in fixed 60 s windows: requests that straddle a window's end start over
 * in the next one and the last is not refused. Waits for a window with 20 s left.
 */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((r) => setTimeout(r, left + 50));
}

test('requests by model, route, rule, status and code; attempts, retries, fallbacks, cool-downs; spend; refusals', async () => {
  await freshWindow();
  const ws = await svc.admin.workspace();
  const key = await newKey(svc.admin, ws);
  await svc.admin.ok('POST', `/workspaces/${ws}/routes`, { name: 'r1', model: 'mock:big', fallbacks: ['mock:small'], description: 'anything at all' });
  await svc.admin.ok('PATCH', `/workspaces/${ws}/routing`, { default_model: 'mock:small' });
  const ai = client(svc, key.value);
  const ask = (model: string, stream = false) => ai.chat.completions.create({ model, messages: [{ role: 'user', content: 'tell me something useful' }], max_tokens: 200, stream });
  const usage = { prompt_tokens: 1000, completion_tokens: 100 };
  mock.enqueue({ reply: { content: 'a', usage } }).enqueue({ reply: { content: 'b', usage } });
  await ask('mock:big');
  await ask('mock:big');
  mock.enqueue({ chunks: ['Hel', 'lo'], usage: { prompt_tokens: 10, completion_tokens: 2 } });
  const stream = await ai.chat.completions.create({ model: 'mock:small', messages: [{ role: 'user', content: 'tell me something useful' }], max_tokens: 200, stream: true });
  for await (const _ of stream) void _;
  mock.enqueue({ error: vendorError('openai-content-filter') });
  await ask('mock:big').catch(() => {});
  // A transient failure, then the retry answers.
  mock.enqueue({ error: vendorError('openai-server-error') }).enqueue({ reply: { content: 'c', usage } });
  await ask('mock:big');
  // route/r1: two failures of mock:big (a cool-down begins), then its fallback answers.
  mock.enqueue({ error: vendorError('openai-server-error') }).enqueue({ error: vendorError('openai-server-error') }).enqueue({ reply: { content: 'd', usage } });
  await ask('route/r1');
  // auto: the classifier is off, so the workspace default answers (rule default, classifier_unavailable).
  mock.enqueue({ reply: { content: 'e', usage } });
  await ask('auto');
  await ask('mock:nope').catch(() => {});
  const limited = await ask('mock:big').catch((e: { status: number }) => e);
  assert.is((limited as { status: number }).status, 429);
  await svc.flush();

  const scraped = await scrape(url, scrapeToken);
  const m = scraped.families;
  assert.is(value(m, 'svc_requests_total'), 9, 'every model request, refusals included');
  const req = (labels: Record<string, string>) => value(m, 'svc_requests_total', labels);
  assert.is(req({ model: 'mock:big', route: '', routing_rule: 'explicit', status: '200', error_code: '' }), 3);
  assert.is(req({ model: 'mock:small', routing_rule: 'explicit', route: '', status: '200' }), 1);
  assert.is(req({ model: 'mock:big', status: '400', error_code: 'content_filter' }), 1);
  assert.is(req({ model: 'mock:small', route: 'r1', routing_rule: 'explicit', status: '200' }), 1);
  assert.is(req({ model: 'mock:small', route: '', routing_rule: 'default', status: '200' }), 1);
  assert.is(req({ model: '', status: '404', error_code: 'model_not_found' }), 1);
  assert.is(req({ model: 'mock:big', status: '429', error_code: 'rate_limited' }), 1);
  assert.is(value(m, 'svc_rate_limit_refusals_total'), 1);
  assert.is(histogramCount(scraped, 'svc_request_duration_seconds'), 9);
  assert.is(histogramCount(scraped, 'svc_request_duration_seconds', { model: 'mock:big' }), 5);
  assert.is(histogramCount(scraped, 'svc_time_to_first_chunk_seconds', { model: 'mock:small' }), 1, 'the one stream');

  assert.is(value(m, 'svc_upstream_attempts_total', { provider: 'mock', outcome: 'ok' }), 6);
  assert.is(value(m, 'svc_upstream_attempts_total', { provider: 'mock', outcome: 'content_filter' }), 1);
  assert.is(value(m, 'svc_upstream_attempts_total', { provider: 'mock', outcome: 'upstream_unavailable' }), 3);
  assert.is(value(m, 'svc_upstream_retries_total', { provider: 'mock' }), 2);
  assert.is(value(m, 'svc_upstream_fallbacks_total', { provider: 'mock' }), 1);
  assert.is(value(m, 'svc_upstream_cooldowns_total', { provider: 'mock' }), 1);
  assert.is(value(m, 'svc_upstream_models_cooling', { provider: 'mock' }), 1);
  assert.is(value(m, 'svc_routing_decisions_total', { rule: 'default', reason: 'classifier_unavailable', route: '' }), 1);
  assert.is(value(m, 'svc_routing_decisions_total'), 1, 'explicit models and routes are not decisions');

  // Spend: the usage records' charges, by provider and model; what was held covers it.
  const spent = await charged(svc);
  assert.ok(spent > 0);
  assert.is(value(m, 'svc_spend_micro_usd_total'), spent);
  assert.is(value(m, 'svc_spend_micro_usd_total', { model: 'mock:small' }), await charged(svc, "model = 'mock:small'"));
  // Holds are reserved on an estimate of the prompt (the mock reports 1,000 tokens): they need not cover the charge.
  assert.ok(value(m, 'svc_held_micro_usd_total', { model: 'mock:big' }) > 0);
  assert.is(value(m, 'svc_holds_in_flight'), 0);
  assert.is(value(m, 'svc_held_in_flight_micro_usd'), 0);
  // Each request that reached the provider committed its money records once.
  assert.is(value(m, 'svc_group_commit_requests_total'), 7);
  assert.is(value(m, 'svc_group_commit_failures_total'), 0);
  assert.is(value(m, 'svc_group_commit_pending_requests'), 0);
  assert.is(value(m, 'svc_dependency_pending_calls', { dependency: 'database' }), 0);
});

test('bounded labels: never a person, key or workspace id; names follow the conventions', async () => {
  const r = await scrape(url, scrapeToken);
  const ids = (await svc.sql<{ v: string }>('select workspace_id as v from usage_records union select person_id from usage_records union select key_id from usage_records')).map((x) => x.v).filter(Boolean);
  assert.ok(ids.length >= 3);
  for (const id of ids) assert.not.ok(r.text.includes(id), `${id} appears in /metrics`);
  assert.not.ok(r.text.includes(scrapeToken));
  for (const [name, f] of r.families) {
    if (!name.startsWith('svc_')) continue;
    assert.match(name, /^svc_[a-z0-9_]+$/);
    if (f.type === 'COUNTER') assert.match(name, /_total$/, name);
    else assert.not.match(name, /_total$/, name);
    for (const s of f.metrics) for (const label of Object.keys(s.labels ?? {})) assert.not.match(label, /person|key_id|workspace|request/, `${name}{${label}}`);
  }
});

test.run();
