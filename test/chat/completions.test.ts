import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { assertSchema } from '../support/openapi.js';
import { startChatWorld, modelName, upstreamId, type ChatWorld } from './setup.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { StoreToken } from '../../kernel/index.js';

const test = suite(`chat completions (${shape})`);
let w: ChatWorld;

test.before(async () => {
  w = await startChatWorld();
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

test('whole reply: body, headers and wire schema; model name is the service one', async () => {
  w.mock.enqueue({ reply: { content: 'Hi there', usage: { prompt_tokens: 12, completion_tokens: 3 } } });
  const { data, response } = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Hi there');
  assert.is(data.model, modelName);
  assert.equal(data.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
  assert.is(response.headers.get('x-svc-model'), modelName);
  assert.is(response.headers.get('x-svc-routing-rule'), 'explicit');
  assert.match(response.headers.get('x-svc-request-id') ?? '', /^req_/);
  assertSchema('CreateChatCompletionResponse', data);
});

test('forwarded body: upstream id, model output limit as max_tokens, unknown fields dropped, upstream key sent', async () => {
  await w.client.chat.completions.create({
    model: modelName,
    messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hello' }],
    temperature: 0.2,
    stop: ['END'],
    // @ts-expect-error unknown fields are ignored and not forwarded
    frobnicate: { deep: true },
    user: 'someone',
  });
  const sent = w.mock.requests[0]!;
  assert.is(sent.path, '/v1/chat/completions');
  assert.is(sent.headers.authorization, 'Bearer sk-upstream-canary-7f3a');
  assert.is(sent.body.model, upstreamId);
  assert.is(sent.body.max_tokens, 4096);
  assert.is(sent.body.temperature, 0.2);
  assert.equal(sent.body.stop, ['END']);
  assert.is(sent.body.frobnicate, undefined);
  assert.is(sent.body.user, undefined);
  assert.is(sent.body.stream_options, undefined);
});

test('max_completion_tokens is honoured and sent as the limit', async () => {
  await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 77 });
  assert.is(w.mock.requests[0]!.body.max_tokens, 77);
});

test('stream without usage: chunks validate, [DONE] ends it, no usage chunk reaches the client', async () => {
  w.mock.enqueue({ chunks: ['Hel', 'lo', ' world'], usage: { prompt_tokens: 5, completion_tokens: 3 } });
  const { data: stream, response } = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }], stream: true }).withResponse();
  assert.is(response.headers.get('x-svc-model'), modelName);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
  let text = '';
  let sawUsage = false;
  for await (const chunk of stream) {
    assertSchema('CreateChatCompletionStreamResponse', chunk);
    assert.is(chunk.model, modelName);
    if (chunk.usage) sawUsage = true;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  assert.is(text, 'Hello world');
  assert.not.ok(sawUsage);
  assert.equal(w.mock.requests[0]!.body.stream_options, { include_usage: true });
});

test('stream with include_usage: the usage chunk comes last, before [DONE]', async () => {
  w.mock.enqueue({ chunks: ['a', 'b'], usage: { prompt_tokens: 9, completion_tokens: 2 } });
  const res = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: modelName, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }),
  });
  const events = (await res.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  assert.is(events.at(-1), '[DONE]');
  const usageChunk = JSON.parse(events.at(-2)!) as { choices: unknown[]; usage: { prompt_tokens: number; completion_tokens: number } };
  assert.equal(usageChunk.choices, []);
  assert.is(usageChunk.usage.prompt_tokens, 9);
  assert.is(usageChunk.usage.completion_tokens, 2);
  for (const e of events.slice(0, -1)) assertSchema('CreateChatCompletionStreamResponse', JSON.parse(e));
});

test('tools: tool_calls are returned to the client to run, and tool results are forwarded', async () => {
  const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
  w.mock.enqueue({ reply: { content: null, tool_calls: [call], finish_reason: 'tool_calls' } });
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const first = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Weather?' }], tools, tool_choice: 'auto' });
  assertSchema('CreateChatCompletionResponse', first);
  assert.equal(first.choices[0]!.message.tool_calls, [call]);
  assert.is(first.choices[0]!.finish_reason, 'tool_calls');
  assert.equal(w.mock.requests[0]!.body.tools, tools);
  assert.is(w.mock.requests[0]!.body.tool_choice, 'auto');
  await w.client.chat.completions.create({
    model: modelName,
    tools,
    messages: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }],
  });
  const msgs = w.mock.requests[1]!.body.messages as Array<{ role: string; tool_call_id?: string }>;
  assert.equal(msgs.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.is(msgs[2]!.tool_call_id, 'call_1');
});

test('usage record and spans are written behind the response, with no prompt text', async () => {
  w.mock.enqueue({ reply: { content: 'secret-reply-canary', usage: { prompt_tokens: 1000, completion_tokens: 100 } } });
  const { response } = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'secret-prompt-canary' }] }).withResponse();
  const id = response.headers.get('x-svc-request-id')!;
  await w.svc.service.get(TracingFlushToken)();
  const store = w.svc.service.get(StoreToken);
  const rows = await store.execute<Record<string, unknown>>('select * from usage_records where id = ?', [id]);
  assert.is(rows.length, 1);
  const r = rows[0]!;
  assert.is(r.model, modelName);
  assert.is(r.provider, 'local');
  assert.is(r.workspace_id, w.workspaceId);
  assert.is(Number(r.prompt_tokens), 1000);
  assert.is(Number(r.completion_tokens), 100);
  // 1000 × $2.50/M + 100 × $10/M = 2500 + 1000 micro-USD
  assert.is(Number(r.cost_micro_usd), 3500);
  assert.is(Number(r.status), 200);
  const spans = await store.execute<Record<string, unknown>>('select name, attributes from spans where trace_id = ? order by parent_span_id desc', [id]);
  // The request's span, and one child span for its one upstream attempt.
  assert.equal(spans.map((s) => s.name).sort(), ['chat.completions', 'upstream.attempt']);
  spans.sort((a, b) => (a.name === 'chat.completions' ? -1 : b.name === 'chat.completions' ? 1 : 0));
  const attributes = JSON.parse(spans[0]!.attributes as string) as Record<string, unknown>;
  assert.is(attributes['svc.model'], modelName);
  assert.is(attributes['svc.cost_micro_usd'], 3500);
  const phases = attributes['svc.phases_us'] as Record<string, [number, number]>;
  for (const p of ['authenticate', 'validate', 'select', 'capabilities', 'admit', 'hold', 'dispatch']) assert.ok(phases[p], `phase ${p} timed`);
  const dump = JSON.stringify(spans) + w.svc.logs.text;
  assert.not.match(dump, /secret-prompt-canary|secret-reply-canary|sk-upstream-canary/);
});

test('GET /v1/models: auto first, then priced models of configured providers, list format', async () => {
  const list = await w.client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.is(ids[0], 'auto');
  assert.ok(ids.includes(modelName));
  const entry = list.data.find((m) => m.id === modelName) as unknown as { object: string; owned_by: string; created: number; svc: Record<string, unknown> };
  assert.is(entry.object, 'model');
  assert.is(entry.owned_by, 'local');
  assert.ok(entry.created > 0);
  assert.equal(entry.svc.capabilities, { images: true, pdf: true, tools: true });
  assert.equal(entry.svc.prices, { input_micro_usd_per_mtok: 2_500_000, output_micro_usd_per_mtok: 10_000_000 });
});

test.run();
