import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import deepseek from '../../providers/deepseek/index.js';
import { deepseekError } from '../../providers/deepseek/errors.js';
import { shape } from '../support/harness.js';
import { vendorErrorFixture, vendorFailure, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { drain, testCall, testModel } from './contract.js';
import { assertUsageChunk, collect, expectModelNotFound, pixel, refused, vendorAdapterSuite, vendorE2E, weatherTool } from './vendor-suite.js';

const unit = suite(`deepseek vendor adapter (${shape})`);
const h = vendorAdapterSuite(unit, { factory: deepseek, authError: 'deepseek-authentication-fails', contextError: { vendor: 'deepseek', name: 'deepseek-context-length' } });
const ctx = { provider: 'deepseek', upstreamModel: 'deepseek-chat', secrets: [] };
const m = testModel('deepseek-chat', 'deepseek');

unit('whole reply: reasoning_content dropped, tool call kept, cache hits as cached_tokens, reasoning inside completion', async () => {
  h.mock().enqueue(vendorReply('deepseek', 'deepseek-tool-call.json'));
  const reply = await h.adapter().complete(testCall(m));
  assertSchema('CreateChatCompletionResponse', { ...reply, model: 'x' });
  assert.is('reasoning_content' in reply.choices[0]!.message, false);
  assert.is(reply.choices[0]?.message.tool_calls?.[0]?.id, 'call_00_lCIkdHRa7AKmCG3TlxXz1061');
  assert.equal(reply.usage, { prompt_tokens: 374, completion_tokens: 60, total_tokens: 434, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 16 } });
  const hit = JSON.parse(JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, prompt_cache_hit_tokens: 8, prompt_cache_miss_tokens: 2 } }));
  h.mock().enqueue({ raw: (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'deepseek-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: hit.usage })) });
  const cached = await h.adapter().complete(testCall(m));
  assert.equal(cached.usage?.prompt_tokens_details, { cached_tokens: 8 });
});

unit('stream: reasoning deltas carry no text; content and the usage chunk come through', async () => {
  h.mock().enqueue(vendorStream('deepseek', 'deepseek-reasoning.chunks.txt'));
  const { chunks, text, error } = await drain(await h.adapter().stream(testCall(m, { stream: true })));
  assert.is(error, undefined);
  assert.is(text, 'strawberry');
  assert.ok(chunks.every((c) => !('reasoning_content' in (c.choices[0]?.delta ?? {}))));
  assert.equal(chunks.at(-1)?.usage, { prompt_tokens: 97, completion_tokens: 106, total_tokens: 203, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 88 } });
});

unit('errors: 402 Insufficient Balance → provider_billing; overflow known by its message → context_length_exceeded; other 400 → provider_rejected_request', () => {
  const cases = [['deepseek-insufficient-balance', 'provider_billing'], ['deepseek-context-length', 'context_length_exceeded'], ['deepseek-max-tokens', 'provider_rejected_request'], ['deepseek-authentication-fails', 'provider_auth_failed']] as const;
  for (const [name, code] of cases) {
    const f = vendorErrorFixture('deepseek', name);
    assert.is(deepseekError(f.status, {}, JSON.stringify(f.body), ctx).code, code, name);
  }
});
unit.run();

const { test: e2e, w: world } = vendorE2E('deepseek', `deepseek built-in end to end (${shape})`);
const model = 'deepseek:deepseek-chat';

e2e('whole reply: the recorded body through svc, schema-valid', async () => {
  world().mock.enqueue(vendorReply('deepseek', 'deepseek-text.json'));
  const reply = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Invent a holiday' }], max_tokens: 200 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.match(reply.choices[0]?.message.content ?? '', /Lumina Tide/);
  assert.is(reply.usage?.total_tokens, 115);
});

e2e('stream with tools: reasoning stream through svc; the usage DeepSeek puts on its finish chunk comes as a separate usage chunk; tools reach DeepSeek', async () => {
  world().mock.enqueue(vendorStream('deepseek', 'deepseek-reasoning.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, tools: [weatherTool], messages: [{ role: 'user', content: 'Count the r in strawberry' }], stream: true, stream_options: { include_usage: true }, max_tokens: 200 });
  const { chunks, text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.is(text, 'strawberry');
  assertUsageChunk(chunks, { prompt_tokens: 97, completion_tokens: 106, total_tokens: 203, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 88 } });
  assert.equal(world().mock.requests.at(-1)!.body.tools, [weatherTool]);
  world().mock.enqueue(vendorStream('deepseek', 'deepseek-reasoning.chunks.txt'));
  const quiet = await collect(await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Count' }], stream: true, max_tokens: 200 }));
  assert.is(quiet.chunks.filter((c) => c.usage).length, 0, 'no usage without include_usage');
});

e2e('an image to DeepSeek (no image input in the catalogue) is refused before sending: 422 unsupported_input', async () => {
  const before = world().mock.requests.length;
  await refused(
    world().client.chat.completions.create({ model, max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'what?' }, { type: 'image_url', image_url: { url: pixel } }] }] }),
    422, 'unsupported_input',
  );
  assert.is(world().mock.requests.length, before);
});

e2e('errors: 402 → 502 provider_billing; overflow → 400 context_length_exceeded', async () => {
  const ask = () => world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('deepseek', 'deepseek-insufficient-balance'));
  await refused(ask(), 502, 'provider_billing');
  world().mock.enqueue(vendorFailure('deepseek', 'deepseek-context-length'));
  await refused(ask(), 400, 'context_length_exceeded');
});

e2e('a model id DeepSeek does not know (400 "Model Not Exist") → 502 provider_model_not_found naming the provider and the id, whole and streamed', async () => {
  await expectModelNotFound(world(), 'deepseek-model-not-exist', model);
});

e2e('a stream cut mid-way ends with an error event', async () => {
  world().mock.enqueue(vendorStream('deepseek', 'deepseek-reasoning.chunks.txt', { cutAfter: 5 }));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { text, error } = await collect(stream);
  assert.is(text, 'straw');
  assert.match(String((error as Error | undefined)?.message), /broke off/);
});

e2e.run();
