import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import openrouter from '../../providers/openrouter/index.js';
import { openrouterError } from '../../providers/openrouter/errors.js';
import { shape } from '../support/harness.js';
import { vendorErrorFixture, vendorFailure, vendorFixture, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { drain, testCall, testModel } from './contract.js';
import { collect, expectModelNotFound, pixel, refused, vendorAdapterSuite, vendorE2E, vendorKey, weatherTool } from './vendor-suite.js';

const unit = suite(`openrouter vendor adapter (${shape})`);
const h = vendorAdapterSuite(unit, { factory: openrouter, authError: 'openrouter-no-auth', contextError: { vendor: 'deepseek', name: 'deepseek-context-length' } });
const ctx = { provider: 'openrouter', upstreamModel: 'openai/gpt-5.4-nano', secrets: [] };
const m = testModel('openai/gpt-5.4-nano', 'openrouter');

unit('whole reply: the recorded body starting with whitespace lines parses', async () => {
  const body = vendorFixture('openrouter', 'openrouter-text.json');
  assert.match(body, /^\s*\n/);
  h.mock().enqueue(vendorReply('openrouter', 'openrouter-text.json'));
  const reply = await h.adapter().complete(testCall(m));
  assert.is(reply.choices[0]?.message.content, 'Oi! 😊');
  assert.is(reply.usage?.total_tokens, 26);
});

unit('stream: comment lines skipped, the repeated finish chunk becomes a usage-only chunk', async () => {
  h.mock().enqueue(vendorStream('openrouter', 'openrouter-text.chunks.txt'));
  const { chunks, text, error } = await drain(await h.adapter().stream(testCall(m, { stream: true })));
  assert.is(error, undefined);
  assert.is(text, 'Olá! 😊');
  assert.is(chunks.filter((c) => c.choices.some((x) => x.finish_reason)).length, 1);
  const last = chunks.at(-1)!;
  assert.equal(last.choices, []);
  assert.equal([last.usage?.prompt_tokens, last.usage?.completion_tokens], [19, 7]);
});

unit('stream: finish_reason "error" mid-stream (HTTP 200) is stream_interrupted; before any chunk, upstream_unavailable', async () => {
  h.mock().enqueue(vendorStream('openrouter', 'openrouter-midstream-error.chunks.txt'));
  const mid = await drain(await h.adapter().stream(testCall(m, { stream: true })));
  assert.is(mid.text, 'Olá');
  assert.is((mid.error as { code?: string }).code, 'stream_interrupted');
  // The variant without a top-level error object (only finish_reason), as the first event.
  const bare = '{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]}';
  h.mock().enqueue({ raw: (_q, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`: OPENROUTER PROCESSING\n\ndata: ${bare}\n\ndata: [DONE]\n\n`) });
  try {
    await h.adapter().stream(testCall(m, { stream: true }));
    assert.unreachable('must reject');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'upstream_unavailable');
  }
});

unit('errors: metadata.raw never repeated; 401 → provider_auth_failed, 402 → provider_billing, 429 → rate limited, moderation 403 → content_filter', () => {
  const as = (name: string) => {
    const f = vendorErrorFixture('openrouter', name);
    return openrouterError(f.status, {}, JSON.stringify(f.body), ctx);
  };
  assert.is(as('openrouter-no-auth').code, 'provider_auth_failed');
  assert.is(as('openrouter-insufficient-credits').code, 'provider_billing');
  const rate = as('openrouter-provider-rate-limit');
  assert.is(rate.code, 'upstream_unavailable');
  assert.is((rate.details as { rate_limited?: boolean }).rate_limited, true);
  assert.not.match(rate.message, /rate-limited upstream/);
  const rejected = as('openrouter-provider-error');
  assert.is(rejected.code, 'provider_rejected_request');
  assert.not.match(rejected.message, /at most 1 image/);
  const moderated = openrouterError(403, {}, { error: { message: 'Input was flagged', code: 403, metadata: { reasons: ['violence'], flagged_input: '…' } } }, ctx);
  assert.is(moderated.code, 'content_filter');
});

unit('check: GET {address}/key with the key (the public /models cannot tell a refused key)', async () => {
  assert.is(await h.adapter().check(AbortSignal.timeout(5000)), 'connected');
  const seen = h.mock().requests.at(-1)!;
  assert.equal([seen.method, seen.path, seen.headers.authorization], ['GET', '/v1/key', `Bearer ${vendorKey}`]);
  const wrong = openrouter.create({ name: 'openrouter', address: h.mock().url, apiKey: 'sk-or-wrong', timeouts: { connectMs: 1000, firstByteMs: 2000, idleMs: 500 } });
  assert.is(await wrong.check(AbortSignal.timeout(5000)), 'key_refused');
  await wrong.close();
});
unit.run();

const { test: e2e, w: world } = vendorE2E('openrouter', `openrouter built-in end to end (${shape})`);
const model = 'openrouter:anthropic/claude-3.5-sonnet';

e2e('whole reply: the recorded body through svc; the model id keeps its slash', async () => {
  world().mock.enqueue(vendorReply('openrouter', 'openrouter-text.json'));
  const reply = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi in Portuguese' }], max_tokens: 100 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.model, model);
  assert.is(world().mock.requests.at(-1)!.body.model, 'anthropic/claude-3.5-sonnet');
});

e2e('stream: one finish_reason for the client, then the usage chunk it asked for', async () => {
  world().mock.enqueue(vendorStream('openrouter', 'openrouter-text.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, max_tokens: 100 });
  const { chunks, text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.is(text, 'Olá! 😊');
  assert.is(chunks.filter((c) => c.choices.some((x) => x.finish_reason)).length, 1);
  assert.is(chunks.at(-1)?.usage?.total_tokens, 26);
});

e2e('stream with tools and an image: the recorded tool-call stream arrives as tool_calls', async () => {
  world().mock.enqueue(vendorStream('openrouter', 'openrouter-tool.chunks.txt'));
  const stream = await world().client.chat.completions.create({
    model, tools: [weatherTool], stream: true, max_tokens: 200,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Florence?' }, { type: 'image_url', image_url: { url: pixel } }] }],
  });
  const { chunks, error } = await collect(stream);
  assert.is(error, undefined);
  assert.ok(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).some((t) => t.function?.name === 'weather'));
  assert.equal(world().mock.requests.at(-1)!.body.messages[0].content[1], { type: 'image_url', image_url: { url: pixel } });
});

e2e('errors: 402 → 502 provider_billing; 401 → 502 provider_auth_failed; a mid-stream error in a 200 → error event', async () => {
  const ask = () => world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('openrouter', 'openrouter-insufficient-credits'));
  await refused(ask(), 502, 'provider_billing');
  world().mock.enqueue(vendorFailure('openrouter', 'openrouter-no-auth'));
  await refused(ask(), 502, 'provider_auth_failed');
  world().mock.enqueue(vendorStream('openrouter', 'openrouter-midstream-error.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { text, error } = await collect(stream);
  assert.is(text, 'Olá');
  assert.match(String((error as Error | undefined)?.message), /broke off/);
});

e2e('a model id OpenRouter does not know (400 "… is not a valid model ID") → 502 provider_model_not_found naming the provider and the id, whole and streamed', async () => {
  await expectModelNotFound(world(), 'openrouter-invalid-model', model);
});

e2e('a stream cut mid-way ends with an error event', async () => {
  world().mock.enqueue(vendorStream('openrouter', 'openrouter-text.chunks.txt', { cutAfter: 3 }));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { text, error } = await collect(stream);
  assert.is(text, 'Olá!');
  assert.match(String((error as Error | undefined)?.message), /broke off/);
});

e2e.run();
