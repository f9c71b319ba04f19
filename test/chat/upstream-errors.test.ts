import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { readFixture, vendorError } from '../support/mock-upstream.js';
import { startChatWorld, modelName, upstreamId, type ChatWorld } from './setup.js';
import { checkRawError, expectSdk, hello, post, type Expected, type SdkError } from './support.js';

/**
 * Errors of the provider, end to end: recorded vendor replies (OpenAI, vLLM, llama.cpp server,
 * Ollama, OpenRouter) served by the mock upstream, mapped to the spec's codes and `svc` details,
 * whole and streamed (before the first chunk a stream's error is an ordinary JSON error).
 */
const test = suite(`chat errors: upstream mapping (${shape})`);
let w: ChatWorld;
const upstreamKey = 'sk-upstream-canary-7f3a';
/** Every error body seen, checked at the end for the provider's key and address. */
const seen: string[] = [];

/** One attempt per request: this suite checks how each answer maps (retries: upstream-faults tests). */
const once = { 'chat-api': { config: { upstream: { retries: 0 } } } };

test.before(async () => {
  w = await startChatWorld({ plugins: once });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

/** Serves `fixture` to a whole request and to a stream, expecting the same refusal from both. */
async function mapsTo(fixture: string, x: Expected): Promise<SdkError> {
  w.mock.enqueue({ error: vendorError(fixture) });
  const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), x);
  seen.push(JSON.stringify(e.error));
  w.mock.enqueue({ error: vendorError(fixture) });
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  seen.push(JSON.stringify(await checkRawError(res, x)));
  return e;
}

const local = { provider: 'local' };

test('context_length_exceeded: OpenAI, vLLM (legacy and v1), llama.cpp (400 and 500), Ollama', async () => {
  for (const f of ['openai-context-length', 'vllm-context-length', 'vllm-context-length-v1', 'llamacpp-context-size', 'llamacpp-context-size-500', 'ollama-context']) {
    await mapsTo(f, { status: 400, code: 'context_length_exceeded', param: 'messages' });
  }
});

test('content_filter: the provider safety system refused', async () => {
  await mapsTo('openai-content-filter', { status: 400, code: 'content_filter' });
});

test('provider_rejected_request: an option the model does not take', async () => {
  const e = await mapsTo('openai-unsupported-parameter', { status: 400, code: 'provider_rejected_request', param: 'max_tokens' });
  assert.match(e.message, /local/);
  await mapsTo('vllm-tool-choice', { status: 400, code: 'provider_rejected_request' });
});

test('provider_auth_failed: the upstream refused the key (recorded 401, and a real wrong key)', async () => {
  await mapsTo('openai-invalid-api-key', { status: 502, code: 'provider_auth_failed', svc: local });
  const patched = await w.admin.call('PATCH', '/providers/local', { api_key: 'sk-wrong-key-0000' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  try {
    const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 502, code: 'provider_auth_failed', svc: local });
    assert.not.match(JSON.stringify(e.error), /sk-wrong-key|sk-PMafP/);
  } finally {
    await w.admin.ok('PATCH', '/providers/local', { api_key: upstreamKey });
  }
});

test('provider_billing: insufficient quota (429) and credits (402) are 502, never 402', async () => {
  for (const f of ['openai-insufficient-quota', 'openrouter-insufficient-credits']) {
    const e = await mapsTo(f, { status: 502, code: 'provider_billing', svc: local });
    assert.is.not(e.status, 402);
  }
});

test('provider_model_not_found: names the provider and the upstream model id', async () => {
  for (const f of ['openai-model-not-found', 'vllm-model-not-found', 'ollama-model-not-found', 'ollama-native-model-not-found']) {
    await mapsTo(f, { status: 502, code: 'provider_model_not_found', svc: { provider: 'local', model: upstreamId } });
  }
});

test('upstream_unavailable: 5xx answers name the provider', async () => {
  for (const f of ['openai-server-error', 'openai-overloaded', 'llamacpp-loading-model']) {
    await mapsTo(f, { status: 502, code: 'upstream_unavailable', svc: local });
  }
});

test('upstream_unavailable: a 429 for the provider rate limit carries rate_limited and retry_after_seconds', async () => {
  // x-ratelimit-reset-tokens: 9.816s is the later reset: 10 s, rounded up.
  await mapsTo('openai-rate-limit', { status: 502, code: 'upstream_unavailable', svc: { provider: 'local', rate_limited: true, retry_after_seconds: 10 } });
  w.mock.enqueue({ error: { status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } } } });
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), {
    status: 502,
    code: 'upstream_unavailable',
    svc: { provider: 'local', rate_limited: true, retry_after_seconds: 7 },
  });
});

test('upstream_unavailable: an answer that is not a reply, and a reply cut in half', async () => {
  w.mock.enqueue({ error: { status: 200, body: '<html>proxy login</html>' } });
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: local });
  w.mock.enqueue({ reply: { content: 'a fairly long reply that will be cut in half' }, breakAfter: 0 });
  await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: local });
});

test('a stream whose first event is an error is an ordinary JSON error with its real status', async () => {
  w.mock.enqueue({
    raw: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}\n\n');
    },
  });
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  await checkRawError(res, { status: 502, code: 'upstream_unavailable', svc: local });
});

test("llama.cpp's non-standard `error:` line before any chunk is mapped like its HTTP error", async () => {
  w.mock.enqueue({
    raw: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(readFixture('llamacpp-error-line.chunks.txt'));
    },
  });
  const res = await post(w, { model: modelName, messages: hello, stream: true });
  seen.push(JSON.stringify(await checkRawError(res, { status: 400, code: 'context_length_exceeded', param: 'messages' })));
});

test('vendor text repeated in a message never carries the provider key or address', async () => {
  const host = new URL(w.mock.url).host;
  const message = `Unsupported value for 'stop' at ${w.mock.url}/chat/completions (host ${host}, key ${upstreamKey})`;
  w.mock.enqueue({ error: { status: 400, body: { error: { message, type: 'invalid_request_error', param: 'stop', code: null } } } });
  const e = await expectSdk(w.client.chat.completions.create({ model: modelName, messages: hello }), { status: 400, code: 'provider_rejected_request', param: 'stop' });
  assert.match(e.message, /Unsupported value for 'stop'/);
  seen.push(JSON.stringify(e.error));
  const dump = seen.join('\n');
  assert.ok(seen.length > 30);
  assert.not.ok(dump.includes(upstreamKey), 'the upstream key leaked');
  assert.not.ok(dump.includes(host), 'the upstream address leaked');
  assert.not.ok(dump.includes(w.mock.url));
  assert.not.ok(w.svc.logs.text.includes(upstreamKey));
});

test('upstream_unavailable: a provider that never answers, with a short first-byte timeout', async () => {
  const h = await startChatWorld({ plugins: { ...once, providers: { config: { firstByteMs: 400, firstTokenMs: 400, totalMs: 400 } } } });
  try {
    for (const stream of [false, true]) {
      h.mock.enqueue({ hang: true });
      const started = performance.now();
      const e = await expectSdk(h.client.chat.completions.create({ model: modelName, messages: hello, stream }), { status: 502, code: 'upstream_unavailable', svc: local });
      const took = performance.now() - started;
      assert.ok(took >= 350 && took < 5000, `timed out after ${took} ms`);
      assert.match(e.message, /local/);
      assert.is(await h.mock.requests.at(-1)!.settled, 'aborted');
    }
    // Headers came, then nothing: the first chunk is bounded by the same timeout.
    h.mock.enqueue({ raw: (_req, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders() });
    await expectSdk(h.client.chat.completions.create({ model: modelName, messages: hello, stream: true }), { status: 502, code: 'upstream_unavailable', svc: local });
  } finally {
    await h.stop();
  }
});

test('upstream_unavailable: nothing listens at the provider address', async () => {
  const d = await startChatWorld();
  try {
    await d.mock.stop();
    await expectSdk(d.client.chat.completions.create({ model: modelName, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: local });
  } finally {
    await d.stop().catch(() => {});
  }
});

test.run();
