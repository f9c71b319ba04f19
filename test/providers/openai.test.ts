import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import openai from '../../providers/openai/index.js';
import { toOpenAIRequest } from '../../providers/openai/transform.js';
import { shape } from '../support/harness.js';
import { vendorFailure, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { Behaviour } from '../support/mock-upstream.js';
import { assertSchema } from '../support/openapi.js';
import { waitUsageRecord } from '../chat/support.js';
import { testCall, testModel } from './contract.js';
import { collect, pixel, refused, vendorAdapterSuite, vendorE2E, weatherTool } from './vendor-suite.js';

const unit = suite(`openai vendor adapter (${shape})`);
vendorAdapterSuite(unit, { factory: openai, authError: 'openai-invalid-api-key', contextError: { vendor: 'openai', name: 'openai-context-length' } });

unit('built-in: name openai at https://api.openai.com/v1', () => {
  assert.equal(openai.builtIn, { name: 'openai', address: 'https://api.openai.com/v1' });
});

unit('request: max_completion_tokens instead of max_tokens (reasoning models refuse the old field)', () => {
  const body = toOpenAIRequest(testCall(testModel('o4-mini', 'openai'), { stream: true, temperature: 0.2 }));
  assert.is(body.max_completion_tokens, 256);
  assert.is('max_tokens' in body, false);
  assert.equal(body.stream_options, { include_usage: true });
  assert.is(body.temperature, 0.2);
});
unit.run();

const { test: e2e, w: world } = vendorE2E('openai', `openai built-in end to end (${shape})`);

e2e('whole reply: the recorded gpt-4o body through svc, schema-valid, usage kept', async () => {
  world().mock.enqueue(vendorReply('openai', 'openai-text.json'));
  const reply = await world().client.chat.completions.create({ model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'Say hi in Portuguese' }], max_tokens: 100 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.model, 'openai:gpt-4o');
  assert.ok(reply.choices[0]?.message.content);
  assert.ok(reply.usage && reply.usage.total_tokens === reply.usage.prompt_tokens + reply.usage.completion_tokens);
  const sent = world().mock.requests.at(-1)!;
  assert.is(sent.body.model, 'gpt-4o');
  assert.is(sent.body.max_completion_tokens, 100);
  assert.is(sent.headers.authorization, 'Bearer sk-vendor-canary-5d1e');
});

e2e('stream with tools: the recorded tool-call stream arrives as tool_calls, then usage', async () => {
  world().mock.enqueue(vendorStream('openai', 'openai-tool.chunks.txt'));
  const stream = await world().client.chat.completions.create({
    model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'Weather in Florence?' }], tools: [weatherTool], stream: true, stream_options: { include_usage: true }, max_tokens: 200,
  });
  const { chunks, error } = await collect(stream);
  assert.is(error, undefined);
  const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  assert.ok(calls.some((t) => t.function?.name === 'weather'));
  assert.is(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0]?.finish_reason, 'tool_calls');
  assert.ok(chunks.at(-1)?.usage);
  assert.equal(world().mock.requests.at(-1)!.body.tools, [weatherTool]);
});

e2e('image: the data URL reaches OpenAI as an image_url part', async () => {
  world().mock.enqueue(vendorStream('openai', 'openai-text.chunks.txt'));
  const stream = await world().client.chat.completions.create({
    model: 'openai:gpt-4o', stream: true, max_tokens: 50,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: pixel } }] }],
  });
  const { text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.ok(text.length > 0);
  assert.equal(world().mock.requests.at(-1)!.body.messages[0].content[1], { type: 'image_url', image_url: { url: pixel } });
});

e2e('errors: quota is provider_billing (502), a refused key provider_auth_failed (502), context_length_exceeded (400)', async () => {
  const ask = () => world().client.chat.completions.create({ model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('openai', 'openai-insufficient-quota'));
  await refused(ask(), 502, 'provider_billing');
  world().mock.enqueue(vendorFailure('openai', 'openai-invalid-api-key'));
  await refused(ask(), 502, 'provider_auth_failed');
  world().mock.enqueue(vendorFailure('openai', 'openai-context-length'));
  await refused(ask(), 400, 'context_length_exceeded');
});

e2e('a stream cut mid-way ends with a stream_interrupted error event', async () => {
  world().mock.enqueue(vendorStream('openai', 'openai-text.chunks.txt', { cutAfter: 2 }));
  const stream = await world().client.chat.completions.create({ model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { chunks, error } = await collect(stream);
  assert.ok(chunks.length >= 1);
  assert.ok(error, 'the stream must fail');
  assert.match(String((error as Error).message), /broke off/);
});

e2e('a stream that breaks off is charged on the usage reported as it went: prompt always, output when the report covered it, else the tokenizer', async () => {
  const head = { id: 'chatcmpl-usage-as-it-goes', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
  const usage = (completion: number) => ({ prompt_tokens: 321, completion_tokens: completion, total_tokens: 321 + completion });
  const chunk = (content: string, u?: object) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content }, finish_reason: null }], ...(u ? { usage: u } : {}) })}\n\n`;
  const cutAfter = (frames: string[]): Behaviour => ({
    raw: (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const f of frames) res.write(f);
      setTimeout(() => res.socket?.destroy(), 20);
    },
  });
  const charged = async (frames: string[]) => {
    world().mock.enqueue(cutAfter(frames));
    const { data, response } = await world().client.chat.completions.create({ model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 }).withResponse();
    assert.ok((await collect(data)).error, 'the stream must fail');
    const row = await waitUsageRecord(world(), response.headers.get('x-svc-request-id')!);
    return [Number(row.prompt_tokens), Number(row.completion_tokens)];
  };
  // Usage on every chunk (a server reporting as it goes, e.g. vLLM's continuous_usage_stats).
  assert.equal(await charged([chunk('alpha ', usage(7)), chunk('beta ', usage(9))]), [321, 9]);
  // Text after the last report: its prompt count still holds; the output is counted by the tokenizer.
  assert.equal(await charged([chunk('alpha ', usage(7)), chunk('beta gamma ')]), [321, countTokens('alpha beta gamma ')]);
});

e2e.run();
