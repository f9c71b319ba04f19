import { once } from 'node:events';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { shape } from '../support/harness.js';
import { faults } from '../support/mock-faults.js';
import { StoreToken } from '../../kernel/index.js';
import { modelName } from './setup.js';
import { backupModel, startFaultWorld, type FaultWorld } from './faults-setup.js';
import { expectSdk, hello, post, sseEvents, waitUsageRecord } from './support.js';

/**
 * Issue 19 with an explicit model: transient faults before the first chunk are retried on the same
 * model and answered; faults that cannot be answered give the exact error; nothing waits past its
 * deadline; failed attempts cost nothing; the explicit model is never replaced by another.
 */
const test = suite(`chat: upstream faults, explicit model (${shape})`);
let w: FaultWorld;
const local = { provider: 'local' };

test.before(async () => {
  w = await startFaultWorld();
  // A budget fallback model exists: it must never stand in for upstream failures.
  await w.admin.ok('PUT', `/workspaces/${w.workspaceId}/budget-settings`, { fallback_model: backupModel });
});
test.after(async () => w.stop());
test.before.each(() => {
  w.mock.reset();
  w.backup.reset();
});

async function spans(id: string): Promise<Array<{ name: string; attributes: Record<string, unknown> }>> {
  const rows = await w.svc.service.get(StoreToken).execute<{ name: string; attributes: string }>('select name, attributes from spans where trace_id = ?', [id]);
  return rows.map((r) => ({ name: r.name, attributes: JSON.parse(r.attributes) as Record<string, unknown> }));
}

/** Whole and streamed: one transient fault, then a good answer, complete through the SDK. */
async function answeredAfter(fault: () => Parameters<FaultWorld['mock']['enqueue']>[0], label: string, kinds = [false, true]): Promise<void> {
  for (const stream of kinds) {
    w.mock.reset();
    w.mock.enqueue(fault()).enqueue({ chunks: ['Fine ', 'answer.'], usage: { prompt_tokens: 9, completion_tokens: 3 } });
    let text = '';
    let id = '';
    if (stream) {
      const { data, response } = await w.client.chat.completions.create({ model: modelName, messages: hello, stream: true, stream_options: { include_usage: true } }).withResponse();
      for await (const c of data) text += c.choices[0]?.delta.content ?? '';
      id = response.headers!.get('x-svc-request-id')!;
      assert.is(response.headers!.get('x-svc-model'), modelName);
    } else {
      const { data, response } = await w.client.chat.completions.create({ model: modelName, messages: hello }).withResponse();
      text = data.choices[0]!.message.content ?? '';
      id = response.headers!.get('x-svc-request-id')!;
    }
    assert.is(text, 'Fine answer.', `${label} stream=${stream}`);
    assert.is(w.mock.requests.length, 2, `${label}: one retry`);
    assert.is(w.backup.requests.length, 0, 'never another model');
    const row = await waitUsageRecord(w, id);
    // Only the answering attempt is charged: 9 × $2.50/M + 3 × $10/M, rounded up.
    assert.is(Number(row.cost_micro_usd), 53, label);
    assert.is(row.model, modelName);
    const s = await spans(id);
    const attempts = s.filter((x) => x.name === 'upstream.attempt').map((x) => x.attributes['svc.outcome']);
    assert.equal(attempts.sort(), ['ok', 'upstream_unavailable'].sort(), label);
  }
}

test('a single 500, a reset before the headers, a 429 with Retry-After: 1: retried and answered', async () => {
  await answeredAfter(faults.serverError, '500 once');
  await answeredAfter(faults.resetBeforeHeaders, 'reset');
  const started = performance.now();
  await answeredAfter(() => faults.rateLimited(1), '429 Retry-After 1');
  assert.ok(performance.now() - started >= 1900, 'the Retry-After wait was honoured (twice)');
});

test('silence and a slow first token: abandoned at the deadline, retried, answered', async () => {
  await answeredAfter(faults.silence, 'silence');
  // A whole reply has no first token to wait for: its total deadline applies (tested with silence).
  await answeredAfter(() => faults.slowFirstToken(1500), 'slow first token', [true]);
});

test('503 for good: 502 upstream_unavailable after 3 attempts within the deadlines, nothing charged', async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    for (let i = 0; i < 3; i++) w.mock.enqueue(faults.unavailable());
    const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: local });
    assert.is(w.mock.requests.length, 3);
    assert.is(w.backup.requests.length, 0, 'the budget fallback model is not an upstream fallback');
    assert.is(e.headers!.get('x-svc-fallback-from'), null);
    const row = await waitUsageRecord(w, e.headers!.get('x-svc-request-id')!);
    assert.is(Number(row.cost_micro_usd), 0);
    assert.is(row.error_code, 'upstream_unavailable');
  }
  // The model cooled down after those failures; an explicit request still tries it (it is the only candidate).
  w.mock.reset();
  const r = await w.client.chat.completions.create({ model: modelName, messages: hello });
  assert.is(r.choices[0]!.message.content, 'Hello from the mock.');
});

test('silence for good: a deadline is tried once more on an explicit model (another attempt still fits 60 s), then 502', async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    for (let i = 0; i < 3; i++) w.mock.enqueue(faults.silence());
    const started = performance.now();
    await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: local });
    const took = performance.now() - started;
    // Two attempts of at most totalMs (1.5 s) whole or firstByteMs (0.4 s) streamed, plus backoff.
    assert.ok(took < (stream ? 2500 : 4500), `stream=${stream}: ${Math.round(took)} ms`);
    assert.is(w.mock.requests.length, 2, 'a deadline is retried once at most, never twice');
    for (const r of w.mock.requests) assert.is(await r.settled, 'aborted');
  }
});

test("a deadline whose repeat would pass the client's budget is not retried: 502 after one attempt", async () => {
  const tight = await startFaultWorld({ upstream: { clientBudgetMs: 600 } });
  try {
    for (const stream of [false, true]) {
      tight.mock.reset();
      for (let i = 0; i < 3; i++) tight.mock.enqueue(faults.silence());
      await expectSdk(tight.client.chat.completions.create({ model: modelName, messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: local });
      assert.is(tight.mock.requests.length, 1, `stream=${stream}: 400 ms spent, another 400 ms would end past 600 ms`);
      // A 503 is an answer, not a deadline: it keeps its retries.
      tight.mock.reset();
      for (let i = 0; i < 3; i++) tight.mock.enqueue(faults.unavailable());
      await expectSdk(tight.client.chat.completions.create({ model: modelName, messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: local });
      assert.is(tight.mock.requests.length, 3);
    }
  } finally {
    await tight.stop();
  }
});

test('429 with a Retry-After beyond the bound: no wait, 502 rate_limited with retry_after_seconds and Retry-After', async () => {
  for (const stream of [false, true]) {
    w.mock.reset();
    w.mock.enqueue(faults.rateLimited(30));
    const started = performance.now();
    const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello, stream }), {
      status: 502,
      code: 'upstream_unavailable',
      svc: { provider: 'local', rate_limited: true, retry_after_seconds: 30 },
    });
    assert.ok(performance.now() - started < 1500, 'did not wait 30 s');
    assert.is(e.headers!.get('retry-after'), '30');
    assert.is(e.headers!.get('retry-after-ms'), '30000');
    assert.is(w.mock.requests.length, 1);
  }
});

test('429 without Retry-After every time: retried, then 502 rate_limited with the default wait', async () => {
  for (let i = 0; i < 3; i++) w.mock.enqueue(faults.rateLimitedBare());
  const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), {
    status: 502,
    code: 'upstream_unavailable',
    svc: { provider: 'local', rate_limited: true, retry_after_seconds: 1 },
  });
  assert.is(e.headers!.get('retry-after'), '1');
  assert.is(w.mock.requests.length, 3);
});

test('content filter and a prefill refusal are not retried: the exact 400 after one call', async () => {
  w.mock.enqueue(faults.contentFilter());
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 400, code: 'content_filter' });
  assert.is(w.mock.requests.length, 1);
  w.mock.reset();
  w.mock.enqueue(faults.refusesPrefill());
  const prefill = [...hello, { role: 'assistant' as const, content: 'Sure, ' }];
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: prefill, stream: true }), { status: 400, code: 'provider_rejected_request', param: 'messages' });
  assert.is(w.mock.requests.length, 1);
});

test('context too long: the upstream refusal is exact and not retried', async () => {
  w.mock.enqueue(faults.contextTooLong());
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 400, code: 'context_length_exceeded', param: 'messages' });
  assert.is(w.mock.requests.length, 1);
});

test('a stream without [DONE] after its finish reason is complete: usage chunk, [DONE], the SDK does not throw', async () => {
  w.mock.enqueue(faults.noDone(['All ', 'of ', 'it.']));
  const { data, response } = await w.client.chat.completions.create({ model: modelName, messages: hello, stream: true, stream_options: { include_usage: true } }).withResponse();
  let text = '';
  let usage: unknown;
  for await (const c of data) {
    text += c.choices[0]?.delta.content ?? '';
    if (c.usage) usage = c.usage;
  }
  assert.is(text, 'All of it.');
  assert.ok(usage, 'the usage chunk was forwarded');
  const row = await waitUsageRecord(w, response.headers!.get('x-svc-request-id')!);
  assert.is(Number(row.status), 200);
  assert.is(row.error_code, null);
  // Without stream_options the client gets the answer and [DONE], no usage chunk.
  w.mock.enqueue(faults.noDone(['x']));
  const raw = sseEvents(await (await post(w, { model: modelName, messages: hello, stream: true })).text());
  assert.is(raw.at(-1), '[DONE]');
  assert.not.ok(raw.slice(0, -1).some((e) => (JSON.parse(e) as { usage?: unknown }).usage), 'no usage chunk unasked');
});

test('one malformed event is skipped (counted, logged once without its text); three in a row interrupt', async () => {
  w.mock.enqueue(faults.malformed(['a ', 'b ', 'c'], 1));
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  const id = res.headers.get('x-svc-request-id')!;
  const events = sseEvents(await res.text());
  assert.is(events.at(-1), '[DONE]');
  const text = events.slice(0, -1).map((e) => (JSON.parse(e) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '').join('');
  assert.is(text, 'a b c');
  await waitUsageRecord(w, id);
  const span = (await spans(id)).find((s) => s.name === 'chat.completions')!;
  assert.is(span.attributes['svc.malformed_events'], 1);
  const logged = w.svc.logs.events('upstream.malformed_event').filter((e) => e.request_id === id);
  assert.is(logged.length, 1);
  assert.not.match(w.svc.logs.text, /trunc/);

  w.mock.reset();
  w.mock.enqueue(faults.malformed(['a ', 'b ', 'c'], 1, 3));
  const broken = sseEvents(await (await post(w, { model: modelName, messages: hello, stream: true })).text());
  assert.is((JSON.parse(broken.at(-1)!) as { error: { code: string } }).error.code, 'stream_interrupted');
});

test('a stream cut mid-answer: stream_interrupted, request.failed logged, charged by the tokenizer count of what was produced', async () => {
  w.mock.enqueue(faults.cutMidStream(['one ', 'two ', 'three ', 'four'], 2));
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  const id = res.headers.get('x-svc-request-id')!;
  const events = sseEvents(await res.text());
  assert.is((JSON.parse(events.at(-1)!) as { error: { code: string } }).error.code, 'stream_interrupted');
  assert.is(w.mock.requests.length, 1, 'nothing is retried after the first chunk');
  const row = await waitUsageRecord(w, id);
  assert.is(Number(row.completion_tokens), countTokens('one two '));
  assert.is(row.error_code, 'stream_interrupted');
  assert.ok(w.svc.logs.events('request.failed').some((e) => e.request_id === id && e.code === 'stream_interrupted'));
});

test('a stream that stalls is interrupted at the idle deadline', async () => {
  w.mock.enqueue(faults.stall(['one ', 'two ', 'three'], 2));
  const started = performance.now();
  const events = sseEvents(await (await post(w, { model: modelName, messages: hello, stream: true })).text());
  assert.ok(performance.now() - started < 2500);
  assert.is((JSON.parse(events.at(-1)!) as { error: { code: string } }).error.code, 'stream_interrupted');
});

test('an https provider that accepts TCP and never answers the TLS handshake: 502 at the connect deadline, not the reply deadlines', async () => {
  // Reply deadlines far longer than the connect deadline: only connectMs can end these calls early.
  const slow = await startFaultWorld({ providers: { connectMs: 300, firstByteMs: 8000, firstTokenMs: 8000, totalMs: 8000 } });
  let connections = 0;
  const silent = net.createServer((socket) => {
    connections++;
    socket.on('data', () => undefined).on('error', () => undefined);
  });
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  try {
    await slow.admin.provider('silent', `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, 'sk-silent');
    await slow.admin.model('silent:model-s');
    for (const stream of [false, true]) {
      const before = connections;
      const started = performance.now();
      const e = await expectSdk(slow.client.chat.completions.create({ model: 'silent:model-s', messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: { provider: 'silent' } });
      const took = performance.now() - started;
      // At most two attempts of 300 ms plus backoff; a handshake without a deadline waits 8 s.
      assert.ok(took < 4000, `stream=${stream}: ${Math.round(took)} ms`);
      assert.ok(connections - before >= 1 && connections - before <= 2, `stream=${stream}: ${connections - before} connections`);
      const row = await waitUsageRecord(slow, e.headers!.get('x-svc-request-id')!);
      assert.is(Number(row.cost_micro_usd), 0);
      assert.is(row.error_code, 'upstream_unavailable');
    }
  } finally {
    await slow.stop();
    silent.close();
  }
});

test.run();
