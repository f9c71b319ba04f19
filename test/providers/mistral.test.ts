import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isGatewayError } from '../../kernel/index.js';
import mistral from '../../providers/mistral/index.js';
import { mistralError } from '../../providers/mistral/errors.js';
import { mistralToolCallId, toMistralRequest } from '../../providers/mistral/transform.js';
import { shape } from '../support/harness.js';
import { usageOnFinishStream, vendorErrorFixture, vendorFailure, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { drain, testCall, testModel } from './contract.js';
import { assertUsageChunk, collect, expectModelNotFound, pixel, refused, vendorAdapterSuite, vendorE2E, weatherTool } from './vendor-suite.js';

const unit = suite(`mistral vendor adapter (${shape})`);
const h = vendorAdapterSuite(unit, { factory: mistral, authError: 'mistral-unauthorized', contextError: { vendor: 'deepseek', name: 'deepseek-context-length' }, stream: usageOnFinishStream });
const ctx = { provider: 'mistral', upstreamModel: 'mistral-small-latest', secrets: [] };

unit('request: no stream_options, max_tokens kept, no name except on tool results, tool-call ids of 9 letters and digits', () => {
  const body = toMistralRequest(
    testCall(testModel('mistral-small-latest', 'mistral'), {
      stream: true,
      messages: [
        { role: 'user', content: 'weather?', name: 'ann' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_00_lCIkdHRa7AKmCG3TlxXz1061', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
        { role: 'tool', content: 'sunny', tool_call_id: 'call_00_lCIkdHRa7AKmCG3TlxXz1061', name: 'weather' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      ],
    }),
  );
  assert.is('stream_options' in body, false);
  assert.is('max_completion_tokens' in body, false);
  assert.is(body.max_tokens, 256);
  const [user, call, result, own] = body.messages as Array<Record<string, any>>;
  assert.is('name' in user!, false);
  const mapped = call!.tool_calls[0].id as string;
  assert.match(mapped, /^[A-Za-z0-9]{9}$/);
  assert.is(result!.tool_call_id, mapped);
  assert.is(result!.name, 'weather');
  assert.is(own!.tool_calls[0].id, 'gSIMJiOkT');
  assert.is(mistralToolCallId('call_00_lCIkdHRa7AKmCG3TlxXz1061'), mapped);
});

unit('stream: the recorded tool call without index and type gets both; usage on the finish chunk is kept', async () => {
  h.mock().enqueue(vendorStream('mistral', 'mistral-tool-call.chunks.txt'));
  const { chunks, error } = await drain(await h.adapter().stream(testCall(testModel('mistral-small-latest', 'mistral'), { stream: true })));
  assert.is(error, undefined);
  const call = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])[0];
  assert.equal(call, { index: 0, id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } });
  assert.equal(chunks.at(-1)?.usage, { prompt_tokens: 124, completion_tokens: 22, total_tokens: 146 });
  assert.is(h.mock().requests.at(-1)!.body.stream_options, undefined);
});

unit('errors: 422 extra_forbidden (object and JSON-string detail) → provider_rejected_request naming the field; 401 → provider_auth_failed', () => {
  for (const [name, param] of [['mistral-extra-forbidden', 'stream_options.include_usage'], ['mistral-max-completion-tokens', 'max_completion_tokens'], ['mistral-extra-forbidden-string', 'frequency_penalty']] as const) {
    const f = vendorErrorFixture('mistral', name);
    const e = mistralError(f.status, {}, JSON.stringify(f.body), ctx);
    assert.ok(isGatewayError(e));
    assert.is(e.code, 'provider_rejected_request', name);
    assert.is(e.param, param, name);
    assert.match(e.message, 'Extra inputs are not permitted');
  }
  const f = vendorErrorFixture('mistral', 'mistral-unauthorized');
  assert.is(mistralError(f.status, {}, JSON.stringify(f.body), ctx).code, 'provider_auth_failed');
});
unit.run();

const { test: e2e, w: world } = vendorE2E('mistral', `mistral built-in end to end (${shape})`);
const model = 'mistral:mistral-large-2512';

e2e('stream: the recorded text stream through svc; the usage Mistral puts on its finish chunk comes as the separate usage chunk the client asked for', async () => {
  world().mock.enqueue(vendorStream('mistral', 'mistral-text.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, max_tokens: 50 });
  const { chunks, text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.is(text, 'Hello, world! This is a test response.');
  assertUsageChunk(chunks, { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 });
  assert.is(world().mock.requests.at(-1)!.body.stream_options, undefined);
});

e2e('a reasoning reply (content as thinking and text chunks) keeps its text, whole and streamed; the thinking is not content', async () => {
  world().mock.enqueue(vendorReply('mistral', 'mistral-reasoning.json'));
  const reply = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], max_tokens: 100 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.choices[0]?.message.content, '2 + 2 = 4');
  assert.equal(reply.usage, { prompt_tokens: 10, completion_tokens: 46, total_tokens: 56 });
  world().mock.enqueue(vendorStream('mistral', 'mistral-reasoning.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], stream: true, max_tokens: 100 });
  const { chunks, text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.is(text, '2 + 2 = 4');
  assert.is(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason, 'stop');
});

e2e('whole reply with tools and an image; the tool history sent back uses 9-character ids', async () => {
  world().mock.enqueue({ reply: { content: null, tool_calls: [{ id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location":"Paris"}' } }] } });
  const reply = await world().client.chat.completions.create({
    model, max_tokens: 100, tools: [weatherTool],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather where this was taken?' }, { type: 'image_url', image_url: { url: pixel } }] }],
  });
  assert.is(reply.choices[0]?.finish_reason, 'tool_calls');
  assert.is(reply.choices[0]?.message.tool_calls?.[0]?.id, 'gSIMJiOkT');
  assert.equal(world().mock.requests.at(-1)!.body.messages[0].content[1], { type: 'image_url', image_url: { url: pixel } });
  world().mock.enqueue({ reply: { content: 'Sunny.' } });
  await world().client.chat.completions.create({
    model, max_tokens: 100, tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_from_another_vendor_1', type: 'function', function: { name: 'weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_from_another_vendor_1', content: 'sunny' },
    ],
  });
  const sent = world().mock.requests.at(-1)!.body.messages;
  assert.match(sent[1].tool_calls[0].id, /^[A-Za-z0-9]{9}$/);
  assert.is(sent[2].tool_call_id, sent[1].tool_calls[0].id);
});

e2e('errors: 422 extra_forbidden → 400 provider_rejected_request; 401 → 502 provider_auth_failed', async () => {
  const ask = () => world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('mistral', 'mistral-extra-forbidden'));
  const e = await refused(ask(), 400, 'provider_rejected_request');
  assert.is(e.param, 'stream_options.include_usage');
  world().mock.enqueue(vendorFailure('mistral', 'mistral-unauthorized'));
  await refused(ask(), 502, 'provider_auth_failed');
});

e2e('a model id Mistral does not know (400 invalid_model) → 502 provider_model_not_found naming the provider and the id, whole and streamed', async () => {
  await expectModelNotFound(world(), 'mistral-invalid-model', model);
});

e2e('a stream cut mid-way ends with an error event after the chunks that arrived', async () => {
  world().mock.enqueue(vendorStream('mistral', 'mistral-text.chunks.txt', { cutAfter: 3 }));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { text, error } = await collect(stream);
  assert.is(text, 'Hello, ');
  assert.ok(error);
  assert.match(String((error as Error).message), /broke off/);
});

e2e.run();
