import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:net';
import { isGatewayError, type ProviderAdapter } from '../../kernel/index.js';
import openaiCompatible from '../../providers/openai-compatible/index.js';
import { MockUpstream, readFixture, vendorError } from '../support/mock-upstream.js';
import { shape } from '../support/harness.js';
import { drain, providerContract, rejectsWith, testCall, testModel, textOf } from './contract.js';

const test = suite(`openai-compatible adapter (${shape})`);
const key = 'sk-canary-3f9a1c7e5b';
const timeouts = { connectMs: 1000, firstByteMs: 1500, idleMs: 400 };
const model = testModel('mock-model');
let mock: MockUpstream;
const made: ProviderAdapter[] = [];

function adapter(address = mock.url, apiKey: string | null = key, t = timeouts): ProviderAdapter {
  const a = openaiCompatible.create(apiKey ? { name: 'local', address, apiKey, timeouts: t } : { name: 'local', address, timeouts: t });
  made.push(a);
  return a;
}

/** A port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((done) => s.close(() => done()));
  return port;
}

test.before.each(async () => {
  mock = await new MockUpstream({ apiKey: key }).start();
});
test.after.each(async () => {
  await Promise.all(made.splice(0).map((a) => a.close()));
  await mock.stop();
});

providerContract(test, () => ({
  adapter: () => adapter(),
  model,
  reply: (content, usage) => mock.enqueue({ reply: { content, usage } }),
  stream: (chunks, usage) => mock.enqueue({ chunks, usage }),
  failBefore: (kind) =>
    mock.enqueue({ error: vendorError(kind === 'auth' ? 'openai-invalid-api-key' : kind === 'context' ? 'vllm-context-length' : 'openai-overloaded') }),
  breakAfter: (chunks, n) => mock.enqueue({ chunks, breakAfter: n }),
}));

test('whole reply: POST {address}/chat/completions with the key; vendor extras dropped', async () => {
  const recorded = readFixture('openai-text.json');
  mock.enqueue({ raw: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(recorded) });
  const reply = await adapter().complete(testCall(model));
  assert.is(mock.requests[0]?.path, '/v1/chat/completions');
  assert.is(mock.requests[0]?.headers.authorization, `Bearer ${key}`);
  assert.is(reply.id, 'chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU');
  assert.is(reply.model, 'gpt-4.1-nano-2025-04-14');
  assert.match(reply.choices[0]?.message.content ?? '', /^\*\*Holiday Name:\*\* Galaxy Day/);
  assert.equal(reply.usage, { prompt_tokens: 16, completion_tokens: 363, total_tokens: 379, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
  assert.is('service_tier' in reply, false);
  assert.is('annotations' in (reply.choices[0]?.message ?? {}), false);
});

test('stream: each chunk is yielded before the upstream sends the next one', async () => {
  mock.enqueue({ chunks: ['a', 'b', 'c'], gapMs: 250 });
  const stream = await adapter(mock.url, key, { ...timeouts, idleMs: 2000 }).stream(testCall(model, { stream: true }));
  const at: number[] = [];
  const seen: string[] = [];
  for await (const c of stream) {
    at.push(Date.now());
    seen.push(c.choices[0]?.delta.content ?? '');
  }
  assert.equal(seen.slice(0, 3), ['a', 'b', 'c']);
  // Chunk b left the mock 250 ms after chunk a; a arriving ≥200 ms before b proves no buffering.
  assert.ok(at[1]! - at[0]! >= 200, `gap a→b ${at[1]! - at[0]!} ms`);
  assert.ok(at[2]! - at[1]! >= 200, `gap b→c ${at[2]! - at[1]!} ms`);
});

test('stream: a recorded OpenAI stream split at odd byte boundaries parses the same', async () => {
  const wire = readFixture('openai-text.chunks.txt');
  mock.enqueue({
    raw: async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < wire.length; i += 7) {
        res.write(wire.slice(i, i + 7));
        if (i % 70 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      res.end();
    },
  });
  const { chunks, text, error } = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is(error, undefined);
  assert.is(text, '**Holiday Name:** Harmony Day');
  assert.is(chunks[0]?.choices[0]?.delta.role, 'assistant');
  assert.is(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
  assert.equal(chunks.at(-1)?.choices, []);
  assert.is(chunks.at(-1)?.usage?.total_tokens, 316);
  assert.is('obfuscation' in chunks[1]!, false);
});

test('stream interrupted: reset, malformed data in a row, error event, idle, EOF without a finish reason', async () => {
  const cases: Array<[string, Parameters<MockUpstream['enqueue']>[0], string]> = [
    ['reset', { chunks: ['a', 'b', 'c'], breakAfter: 2 }, 'ab'],
    ['eof', { raw: (_q, res) => res.writeHead(200).end(readFixture('openai-text.chunks.txt').split('\n\n').slice(0, 3).join('\n\n') + '\n\n') }, '**Holiday'],
    ['idle', { chunks: ['a', 'b'], gapMs: 1200 }, 'a'],
    ['error_event', { raw: (_q, res) => res.writeHead(200).end(readFixture('openai-midstream-error.chunks.txt')) }, '**Holiday Name'],
    // One unparsable event is skipped (the stream then ends without a finish reason: eof); three in a row break it.
    ['eof', { raw: (_q, res) => res.writeHead(200).end(`${readFixture('openai-text.chunks.txt').split('\n\n')[1]}\n\ndata: {"id":\n\n`) }, '**'],
    ['malformed', { raw: (_q, res) => res.writeHead(200).end(`${readFixture('openai-text.chunks.txt').split('\n\n')[1]}\n\n${'data: {"id":\n\n'.repeat(3)}`) }, '**'],
  ];
  for (const [reason, behaviour, before] of cases) {
    mock.enqueue(behaviour);
    const { text, error } = await drain(await adapter().stream(testCall(model, { stream: true })));
    assert.is(text, before, reason);
    assert.ok(isGatewayError(error), reason);
    assert.is((error as { code: string }).code, 'stream_interrupted', reason);
    assert.is((error as unknown as { reason: string }).reason, reason);
    assert.equal((error as { details: unknown }).details, { provider: 'local' });
  }
});

test('stream interrupted after the usage chunk carries that usage on the error', async () => {
  mock.enqueue({
    raw: (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n');
      res.write('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    },
  });
  const { error } = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is((error as { code: string }).code, 'stream_interrupted');
  assert.equal((error as { usage: unknown }).usage, { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
});

test('before the first chunk: cut, error line, slow headers, hang, refused connection are ordinary errors', async () => {
  mock.enqueue({ chunks: ['a'], breakAfter: 0 });
  await rejectsWith(adapter().stream(testCall(model, { stream: true })), 'upstream_unavailable');
  mock.enqueue({ raw: (_q, res) => res.writeHead(200).end(readFixture('llamacpp-error-line.chunks.txt')) });
  await rejectsWith(adapter().stream(testCall(model, { stream: true })), 'context_length_exceeded');
  mock.enqueue({ delayMs: 2500 });
  const started = Date.now();
  await rejectsWith(adapter().stream(testCall(model, { stream: true })), 'upstream_unavailable');
  assert.ok(Date.now() - started < 2300, 'firstByteMs bounds the wait for headers');
  mock.enqueue({ hang: true });
  const slow = await rejectsWith(adapter().complete(testCall(model)), 'upstream_unavailable');
  assert.is(slow.message, 'Provider local did not answer in time.');
  const refused = await rejectsWith(adapter(`http://127.0.0.1:${await closedPort()}/v1`).complete(testCall(model)), 'upstream_unavailable');
  assert.equal(refused.details, { provider: 'local' });
  assert.is(refused.message, 'Provider local could not be reached.');
});

test('client abort propagates: the upstream sees the connection close (stream, complete, early break)', async () => {
  mock.enqueue({ chunks: ['a', 'b', 'c'], gapMs: 300 });
  const ac = new AbortController();
  const stream = await adapter(mock.url, key, { ...timeouts, idleMs: 2000 }).stream(testCall(model, { stream: true }, ac.signal));
  const it = stream[Symbol.asyncIterator]();
  assert.is((await it.next()).value?.choices[0]?.delta.content, 'a');
  ac.abort(new Error('client left'));
  const err = await it.next().then(() => undefined, (e: unknown) => e);
  assert.is((err as Error).message, 'client left');
  assert.is(await mock.requests[0]!.settled, 'aborted');

  mock.enqueue({ delayMs: 1000 });
  const ac2 = new AbortController();
  const pending = adapter().complete(testCall(model, {}, ac2.signal));
  setTimeout(() => ac2.abort(new Error('gone')), 100);
  assert.is(((await pending.catch((e: unknown) => e)) as Error).message, 'gone');
  assert.is(await mock.requests[1]!.settled, 'aborted');

  mock.enqueue({ chunks: ['a', 'b', 'c'], gapMs: 300 });
  for await (const c of await adapter().stream(testCall(model, { stream: true }))) if (c) break;
  assert.is(await mock.requests[2]!.settled, 'aborted');
});

test('keep-alive: one adapter reuses its connections across calls', async () => {
  const a = adapter();
  for (let i = 0; i < 3; i++) {
    await a.complete(testCall(model));
    await drain(await a.stream(testCall(model, { stream: true })));
  }
  assert.is(mock.requests.length, 6);
  // undici may open a second socket while the first is being released; never one per call.
  assert.ok(mock.connectionsOpened <= 2, `${mock.connectionsOpened} connections for 6 calls`);
});

test('check(): connected on any answer, key_refused on 401/403, could_not_connect when nothing answers', async () => {
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'connected');
  assert.is(mock.requests[0]?.path, '/v1/models');
  assert.is(await adapter(mock.url, 'sk-wrong').check(AbortSignal.timeout(2000)), 'key_refused');
  mock.enqueue({ error: { status: 403, body: { error: { message: 'forbidden' } } } }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'key_refused');
  mock.enqueue({ error: vendorError('openai-server-error') }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'connected');
  mock.enqueue({ hang: true }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(200)), 'could_not_connect');
  assert.is(await adapter(`http://127.0.0.1:${await closedPort()}/v1`).check(AbortSignal.timeout(2000)), 'could_not_connect');
  assert.is(await adapter('not a url').check(AbortSignal.timeout(2000)), 'could_not_connect');
  await rejectsWith(adapter('not a url').complete(testCall(model)), 'upstream_unavailable');
});

test('a server without a key gets no Authorization header', async () => {
  const open = await new MockUpstream().start();
  try {
    await adapter(open.url, null).complete(testCall(model));
    assert.is(open.requests[0]?.headers.authorization, undefined);
  } finally {
    await open.stop();
  }
});

test.run();
