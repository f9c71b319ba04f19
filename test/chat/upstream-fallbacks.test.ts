import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { faults } from '../support/mock-faults.js';
import { DispatchStatsToken, GatewayError } from '../../kernel/index.js';
import { modelName } from './setup.js';
import { addRoute, backupModel, startFaultWorld, upstream, type FaultWorld } from './faults-setup.js';
import { expectSdk, hello, post, readEvents, sseEvents, waitUsageRecord } from './support.js';

/**
 * Issue 19 with routes (a route's model, then its fallbacks), the context-window check, the
 * cool-down with its single probe, mid-request stops, and issue 9 item 3 (a reply that reports
 * more than its hold).
 */
const test = suite(`chat: upstream fallbacks, cool-down, stops, overruns (${shape})`);
let w: FaultWorld;
const tiny = 'local:tiny';

test.before(async () => {
  // Cool-down is driven by its own world below; here no model cools down between tests.
  w = await startFaultWorld({ upstream: { cooldownFailures: 1000 } });
  await w.admin.model(tiny, { context_window: 60, output_limit: 20 });
  await addRoute(w, 'main', [modelName, backupModel]);
  await addRoute(w, 'small', [tiny, backupModel]);
});
test.after(async () => w.stop());
test.before.each(() => {
  w.mock.reset();
  w.backup.reset();
  w.mock.defaultBehaviour = faults.ok();
});

const long = [{ role: 'user' as const, content: 'Please summarise this. '.repeat(40) }];

/** The reply's text, whole or streamed. */
async function textOf(data: unknown, stream: boolean): Promise<string> {
  if (!stream) return (data as { choices: Array<{ message: { content: string | null } }> }).choices[0]!.message.content ?? '';
  let text = '';
  for await (const c of data as AsyncIterable<{ choices: Array<{ delta: { content?: string | null } }> }>) text += c.choices[0]?.delta.content ?? '';
  return text;
}

test('a route whose model is down for good is answered by its fallback: x-svc-model and the record name it, no budget headers', async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    w.backup.reset();
    for (let i = 0; i < 3; i++) w.mock.enqueue(faults.unavailable());
    w.backup.enqueue({ chunks: ['From ', 'backup.'], usage: { prompt_tokens: 10, completion_tokens: 4 } });
    const { data, response } = await w.client.chat.completions.create({ model: 'route/main', messages: hello, stream }).withResponse();
    const text = await textOf(data, stream);
    assert.is(text, 'From backup.');
    assert.is(response.headers.get('x-svc-model'), backupModel);
    assert.is(response.headers.get('x-svc-route'), 'main');
    assert.is(response.headers.get('x-svc-fallback-from'), null);
    assert.is(w.mock.requests.length, 3, 'the primary was tried with its retries first');
    const row = await waitUsageRecord(w, response.headers.get('x-svc-request-id')!);
    assert.is(row.model, backupModel);
    // Only the answer is charged: 10 × $1/M + 4 × $2/M.
    assert.is(Number(row.cost_micro_usd), 18);
  }
});

test("a deadline on a route's model moves to its fallback at once: the silent model is not tried again", async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    w.backup.reset();
    for (let i = 0; i < 3; i++) w.mock.enqueue(faults.silence());
    w.backup.enqueue({ chunks: ['From ', 'backup.'], usage: { prompt_tokens: 10, completion_tokens: 4 } });
    const { data, response } = await w.client.chat.completions.create({ model: 'route/main', messages: hello, stream }).withResponse();
    const text = await textOf(data, stream);
    assert.is(text, 'From backup.');
    assert.is(response.headers.get('x-svc-model'), backupModel);
    assert.is(w.mock.requests.length, 1, 'one attempt on the silent model, then the fallback');
    assert.is(await w.mock.requests[0]!.settled, 'aborted');
  }
});

test("the primary's own context refusal moves a route on; a fallback's prefill refusal is the exact 400", async () => {
  w.mock.enqueue(faults.contextTooLong());
  const r = await w.client.chat.completions.create({ model: 'route/main', messages: hello }).withResponse();
  assert.is(r.response.headers.get('x-svc-model'), backupModel);
  assert.is(w.mock.requests.length, 1);
  w.mock.reset();
  for (let i = 0; i < 3; i++) w.mock.enqueue(faults.unavailable());
  w.backup.enqueue(faults.refusesPrefill());
  const prefill = [...hello, { role: 'assistant' as const, content: 'Sure, ' }];
  await expectSdk(w.client.chat.completions.create({ model: 'route/main', messages: prefill }), { status: 400, code: 'provider_rejected_request', param: 'messages' });
});

test('context-aware order: a route skips a model that cannot hold the input; an explicit one is refused without a call', async () => {
  const r = await w.client.chat.completions.create({ model: 'route/small', messages: long }).withResponse();
  assert.is(r.response.headers.get('x-svc-model'), backupModel);
  assert.is(w.mock.requests.length, 0, 'the small model was never called');
  const e = await expectSdk(w.client.chat.completions.create({ model: tiny, messages: long }), { status: 400, code: 'context_length_exceeded', param: 'messages' });
  assert.is(w.mock.requests.length + w.backup.requests.length, 1);
  const row = await waitUsageRecord(w, e.headers!.get('x-svc-request-id')!);
  assert.is(Number(row.cost_micro_usd), 0);
  // Near the limit is sent, never refused on an estimate.
  const near = await w.client.chat.completions.create({ model: tiny, messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 10 });
  assert.is(near.choices[0]!.message.content, 'Hello from the mock.');
});

test('cool-down: twenty requests across an outage of the primary are all answered by the fallback; one probe brings it back', async () => {
  const outer = w;
  w = await startFaultWorld();
  try {
    await addRoute(w, 'main', [modelName, backupModel]);
    await cooldown();
  } finally {
    await w.stop();
    w = outer;
  }
});

async function cooldown(): Promise<void> {
  const backAt = Date.now() + 2 * upstream.cooldownMs + 500;
  w.mock.defaultBehaviour = faults.downUntil(backAt);
  const models: string[] = [];
  for (let i = 0; i < 20; i++) {
    const { response } = await w.client.chat.completions.create({ model: 'route/main', messages: hello }).withResponse();
    models.push(response.headers.get('x-svc-model')!);
    await new Promise((done) => setTimeout(done, (backAt - Date.now() - 300) / (20 - i)));
  }
  assert.ok(Date.now() < backAt, 'the outage lasted for all twenty');
  assert.equal(new Set(models), new Set([backupModel]), models.join(','));
  // Three failures started the cool-down; then at most one probe per cool-down period.
  assert.ok(w.mock.requests.length <= 3 + 3, `the primary was called ${w.mock.requests.length} times`);
  await new Promise((done) => setTimeout(done, backAt - Date.now() + upstream.cooldownMs));
  const { response } = await w.client.chat.completions.create({ model: 'route/main', messages: hello }).withResponse();
  assert.is(response.headers.get('x-svc-model'), modelName, 'the probe found the primary back');
  const again = await w.client.chat.completions.create({ model: 'route/main', messages: hello }).withResponse();
  assert.is(again.response.headers.get('x-svc-model'), modelName);
}

test("a model's own deadlines over its provider's: a reasoning model's long first token is waited for", async () => {
  await w.admin.model('local:thinker', { deadlines: { first_token_ms: 3000 } });
  const view = await w.admin.ok<{ deadlines: unknown }>('GET', `/models/${encodeURIComponent('local:thinker')}`);
  assert.equal(view.deadlines, { first_token_ms: 3000 });
  w.mock.enqueue(faults.slowFirstToken(1000));
  const stream = await w.client.chat.completions.create({ model: 'local:thinker', messages: hello, stream: true });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  assert.is(text, 'slow answer');
  assert.is(w.mock.requests.length, 1, 'no attempt was abandoned');
  // The provider's 400 ms still applies to the other model: its first attempt is abandoned.
  w.mock.reset();
  w.mock.enqueue(faults.slowFirstToken(1000)).enqueue({ chunks: ['quick'] });
  let quick = '';
  for await (const c of await w.client.chat.completions.create({ model: modelName, messages: hello, stream: true })) quick += c.choices[0]?.delta.content ?? '';
  assert.is(quick, 'quick');
  assert.is(w.mock.requests.length, 2);
});

/** The request context of the request the mock is serving now (the route stand-in keeps them). */
async function running(): Promise<{ stop(reason: GatewayError): void; id: string }> {
  for (let i = 0; i < 200 && w.mock.requests.length === 0; i++) await new Promise((done) => setTimeout(done, 10));
  return globalThis.svcFaultRequests.at(-1)!;
}

test('a mid-request stop before the first chunk: 403 access_revoked, the upstream call aborted, nothing more sent, nothing charged', async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    w.mock.enqueue(faults.silence());
    const pending = post(w, { model: modelName, messages: hello, stream });
    const rc = await running();
    rc.stop(new GatewayError('access_revoked', 'Access to this workspace was removed during the request.'));
    const res = await pending;
    assert.is(res.status, 403);
    assert.is(((await res.json()) as { error: { code: string } }).error.code, 'access_revoked');
    assert.is(await w.mock.requests[0]!.settled, 'aborted');
    await new Promise((done) => setTimeout(done, 100));
    assert.is(w.mock.requests.length, 1, 'no retry after a stop');
    const row = await waitUsageRecord(w, rc.id);
    assert.is(row.error_code, 'access_revoked');
    assert.is(Number(row.cost_micro_usd), 0);
  }
});

test('a mid-request stop while waiting to retry: no further attempt, the reason is the answer', async () => {
  w.mock.enqueue(faults.rateLimited(1));
  const pending = post(w, { model: modelName, messages: hello });
  const rc = await running();
  await w.mock.requests[0]!.settled;
  rc.stop(new GatewayError('access_revoked', 'Access to this workspace was removed during the request.'));
  const res = await pending;
  assert.is(res.status, 403);
  await new Promise((done) => setTimeout(done, 1200));
  assert.is(w.mock.requests.length, 1, 'the retry after Retry-After: 1 was never sent');
});

test('a mid-request stop after the first chunk ends the stream with an access_revoked event, no [DONE]; what was produced is charged', async () => {
  w.mock.enqueue({ chunks: ['one ', 'two ', 'three ', 'four'], gapMs: 300 });
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  const rc = await running();
  const events: string[] = [];
  await readEvents(res, (data) => {
    events.push(data);
    if (events.length === 1) rc.stop(new GatewayError('access_revoked', 'Access to this workspace was removed during the request.'));
  });
  const last = JSON.parse(events.at(-1)!) as { error: { code: string } };
  assert.is(last.error.code, 'access_revoked');
  assert.not.ok(events.includes('[DONE]'));
  assert.is(await w.mock.requests[0]!.settled, 'aborted');
  const row = await waitUsageRecord(w, rc.id);
  assert.is(row.error_code, 'access_revoked');
  assert.ok(Number(row.completion_tokens) >= 1 && Number(row.cost_micro_usd) > 0);
});

test('a reply reporting more output than its hold: a whole reply is charged as reported and logged; a stream is cut at the hold', async () => {
  const stats = w.svc.service.get(DispatchStatsToken);
  const before = stats.snapshot();
  w.mock.enqueue(faults.overReports(1000));
  const { response } = await w.client.chat.completions.create({ model: modelName, messages: hello, max_tokens: 100 }).withResponse();
  const id = response.headers.get('x-svc-request-id')!;
  const row = await waitUsageRecord(w, id);
  assert.is(Number(row.completion_tokens), 1000);
  assert.is(Number(row.cost_micro_usd), Math.ceil((20 * 2.5 + 1000 * 10)));
  assert.ok(w.svc.logs.events('budget.overrun').some((e) => e.request_id === id && e.excess_tokens === 900 && e.held_tokens === 100));
  assert.is(stats.snapshot().overruns, before.overruns + 1);

  w.mock.enqueue({ ...faults.overReports(1000), gapMs: 2 });
  const res = await post(w, { model: modelName, messages: hello, max_tokens: 100, stream: true, stream_options: { include_usage: true } });
  const sid = res.headers.get('x-svc-request-id')!;
  const events = sseEvents(await res.text());
  assert.is(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: Array<{ finish_reason: string | null }>; usage?: { completion_tokens: number } });
  assert.is(chunks.at(-2)!.choices[0]!.finish_reason, 'length');
  assert.is(chunks.at(-1)!.usage?.completion_tokens, 100);
  assert.is(await w.mock.requests.at(-1)!.settled, 'aborted');
  const srow = await waitUsageRecord(w, sid);
  assert.is(Number(srow.completion_tokens), 100);
  assert.is(stats.snapshot().cutAtHold, before.cutAtHold + 1);
});

test.run();
