import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { readFixture, vendorError } from '../support/mock-upstream.js';
import { assertSchema } from '../support/openapi.js';
import { StoreToken } from '../../kernel/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { startChatWorld, modelName, type ChatWorld } from './setup.js';
import { checkRawError, expectSdk, hello, post, readEvents, sdkError, sseEvents, waitUsageRecord } from './support.js';

/** SPEC.md "Streamed reply": not started → ordinary errors; started → a final error event (shutdown: shutdown.test.ts). */
const test = suite(`chat streams (${shape})`);
let w: ChatWorld;
const streamBody = { model: modelName, messages: hello, stream: true };

test.before(async () => {
  // One attempt per request (retries: upstream-faults tests); an output limit that covers the long back-pressure stream.
  w = await startChatWorld({ plugins: { 'chat-api': { config: { upstream: { retries: 0 } } } } }, { context_window: 1_000_000, output_limit: 100_000 });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

/** A raw stream's chunks (each checked against the wire schema) and its last event. */
function split(events: string[]): { chunks: Array<{ choices: Array<{ delta: { content?: string } }> }>; last: string } {
  const last = events.at(-1)!;
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: Array<{ delta: { content?: string } }> });
  for (const c of chunks) assertSchema('CreateChatCompletionStreamResponse', c);
  return { chunks, last };
}

test('not started: an error before the first chunk is a JSON error with its real status, not a 200 stream', async () => {
  w.mock.enqueue({ error: vendorError('openai-context-length') });
  const res = await post(w, streamBody);
  assert.not.match(res.headers.get('content-type') ?? '', /event-stream/);
  await checkRawError(res, { status: 400, code: 'context_length_exceeded' });
  w.mock.enqueue({ error: vendorError('openai-server-error') });
  await expectSdk(w.client.chat.completions.create({ ...streamBody, stream: true }), { status: 502, code: 'upstream_unavailable', svc: { provider: 'local' } });
});

test('started: a reply that breaks off ends with a stream_interrupted event and no [DONE]', async () => {
  w.mock.enqueue({ chunks: ['one ', 'two ', 'three ', 'four'], breakAfter: 2 });
  const res = await post(w, streamBody);
  assert.is(res.status, 200);
  const requestId = res.headers.get('x-svc-request-id')!;
  const { chunks, last } = split(sseEvents(await res.text()));
  assert.is(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'one two ');
  assert.not.match(last, /\[DONE\]/);
  const error = JSON.parse(last) as { error: { code: string; type: string; svc?: Record<string, unknown> } };
  assertSchema('ErrorResponse', error);
  assert.is(error.error.code, 'stream_interrupted');
  assert.is(error.error.svc?.provider, 'local');

  const row = await waitUsageRecord(w, requestId);
  assert.is(row.error_code, 'stream_interrupted');
  assert.is(Number(row.status), 200);
  assert.is(Number(row.stream), 1);
  assert.ok(Number(row.completion_tokens) > 0, 'charged for what was produced');
  assert.ok(Number(row.cost_micro_usd) > 0);
  assert.is(Number(row.client_closed), 0);
});

test('started: the SDK surfaces the final error event as an APIError after the chunks', async () => {
  w.mock.enqueue({ chunks: ['alpha ', 'beta ', 'gamma'], breakAfter: 2 });
  const stream = await w.client.chat.completions.create({ model: modelName, messages: hello, stream: true });
  let text = '';
  const e = await sdkError(
    (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })(),
  );
  assert.is(text, 'alpha beta ');
  assert.is((e.error as { code?: string }).code, 'stream_interrupted');
});

test('started: a vendor error event mid-stream (recorded OpenAI stream) ends with stream_interrupted', async () => {
  w.mock.enqueue({
    raw: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(readFixture('openai-midstream-error.chunks.txt'));
    },
  });
  const res = await post(w, streamBody);
  assert.is(res.status, 200);
  const { chunks, last } = split(sseEvents(await res.text()));
  assert.is(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), '**Holiday Name');
  const error = JSON.parse(last) as { error: { code: string } };
  assertSchema('ErrorResponse', error);
  assert.is(error.error.code, 'stream_interrupted');
  const row = await waitUsageRecord(w, res.headers.get('x-svc-request-id')!);
  assert.is(row.error_code, 'stream_interrupted');
});

test('a client that disconnects mid-stream aborts the upstream call and is recorded as client_closed', async () => {
  w.mock.enqueue({ chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), gapMs: 100 });
  const abort = new AbortController();
  const res = await post(w, streamBody, { signal: abort.signal });
  const requestId = res.headers.get('x-svc-request-id')!;
  let seen = 0;
  await readEvents(res, () => {
    if (++seen === 2) abort.abort();
  }).catch((err: unknown) => assert.is((err as Error).name, 'AbortError'));
  assert.is(await w.mock.requests[0]!.settled, 'aborted');
  const row = await waitUsageRecord(w, requestId);
  assert.is(Number(row.client_closed), 1);
  assert.ok(Number(row.completion_tokens) > 0, 'charged for what was produced before the client left');
});

test('a client that leaves before the first chunk: upstream aborted, recorded as closed (499), not as a server failure', async () => {
  for (const stream of [true, false]) {
    w.mock.reset();
    w.mock.enqueue({ hang: true });
    const abort = new AbortController();
    const sent = post(w, { ...streamBody, stream }, { signal: abort.signal });
    while (w.mock.requests.length === 0) await new Promise((done) => setTimeout(done, 10));
    abort.abort();
    await sent.catch(() => undefined);
    assert.is(await w.mock.requests[0]!.settled, 'aborted');
    await w.svc.service.get(TracingFlushToken)();
    await new Promise((done) => setTimeout(done, 100));
    const rows = await w.svc.service.get(StoreToken).execute<Record<string, unknown>>('select * from usage_records where client_closed = 1 and stream = ? and status <> 200', [stream ? 1 : 0]);
    assert.is(rows.length, 1, `stream=${stream}: ${JSON.stringify(rows)}`);
    assert.is(Number(rows[0]!.status), 499);
    assert.is.not(rows[0]!.error_code, 'internal_error');
    assert.not.ok(w.svc.logs.lines.some((l) => l.includes('"internal_error"')), 'a client leaving is not logged as a server failure');
  }
});

test('chunks are forwarded as they arrive, not buffered until the upstream ends', async () => {
  w.mock.enqueue({ chunks: ['a', 'b', 'c', 'd'], gapMs: 300 });
  const order: string[] = [];
  const res = await post(w, streamBody);
  void w.mock.requests[0]!.settled.then(() => order.push('upstream finished'));
  let n = 0;
  await readEvents(res, (data) => {
    if (data !== '[DONE]') order.push(`client chunk ${++n}`);
  });
  assert.is(order[0], 'client chunk 1');
  assert.ok(order.indexOf('client chunk 2') < order.indexOf('upstream finished'), order.join(', '));
});

test('a stream with a slow client (back-pressure) still delivers every chunk in order', async () => {
  const pieces = Array.from({ length: 300 }, (_, i) => `${i}:${'x'.repeat(2000)} `);
  w.mock.enqueue({ chunks: pieces });
  const res = await post(w, streamBody);
  const got: string[] = [];
  await readEvents(res, async (data) => {
    if (data === '[DONE]') return void got.push(data);
    const c = JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> };
    if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
    if (got.length % 50 === 0) await new Promise((done) => setTimeout(done, 20));
  });
  assert.is(got.at(-1), '[DONE]');
  assert.equal(got.slice(0, -1), pieces);
});

test('streamed tool calls: every chunk validates and the SDK assembles the call', async () => {
  const call = { id: 'call_9', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"svc"}' } };
  w.mock.enqueue({ reply: { content: null, tool_calls: [call] }, usage: { prompt_tokens: 4, completion_tokens: 6 } });
  const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
  const stream = await w.client.chat.completions.create({ model: modelName, messages: hello, tools, stream: true, stream_options: { include_usage: true } });
  let name = '';
  let args = '';
  let finish: string | null = null;
  let usage: unknown;
  for await (const chunk of stream) {
    assertSchema('CreateChatCompletionStreamResponse', chunk);
    for (const t of chunk.choices[0]?.delta.tool_calls ?? []) {
      name += t.function?.name ?? '';
      args += t.function?.arguments ?? '';
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.is(name, 'lookup');
  assert.is(args, call.function.arguments);
  assert.is(finish, 'tool_calls');
  assert.equal(usage, { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
});

test('a provider that goes silent mid-stream (idle timeout) ends the stream with stream_interrupted', async () => {
  const q = await startChatWorld({ plugins: { providers: { config: { idleMs: 300 } } } });
  try {
    q.mock.enqueue({ chunks: ['quick ', 'then very slow'], gapMs: 5000 });
    const started = performance.now();
    const res = await post(q, streamBody);
    const { chunks, last } = split(sseEvents(await res.text()));
    assert.ok(performance.now() - started < 3000, 'cut by the idle timeout, not by the upstream');
    assert.is(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'quick ');
    assert.is((JSON.parse(last) as { error: { code: string } }).error.code, 'stream_interrupted');
    assert.is(await q.mock.requests.find((r) => r.path === '/v1/chat/completions')!.settled, 'aborted');
  } finally {
    await q.stop();
  }
});

test.run();
