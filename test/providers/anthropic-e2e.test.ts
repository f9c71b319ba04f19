import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type OpenAI from 'openai';
import { MockAnthropic, anthropicError } from '../support/mock-anthropic.js';
import { assertSchema } from '../support/openapi.js';
import { shape } from '../support/harness.js';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { expectSdk, waitUsageRecord } from '../chat/support.js';
import { nativeWorld, pdfUrl, pngUrl, readStream, type NativeWorld } from './native-e2e.js';

const test = suite(`anthropic end to end through svc (${shape})`);
const key = 'sk-ant-e2e-4b8c1d';
const model = 'anthropic:claude-sonnet-4-5-20250929';
const mock = new MockAnthropic({ apiKey: key });
let n: NativeWorld;
const hello: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello.' }];
const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', description: 'Weather now', parameters } }];
const sent = () => mock.requests.filter((r) => r.path === '/v1/messages').at(-1)!;

test.before(async () => {
  await mock.start();
  n = await nativeWorld('anthropic', mock.url, key);
});
test.after(async () => {
  await n.stop();
  await mock.stop();
});
test.before.each(() => mock.reset());

test('whole reply: native Messages request with the key and the model output limit; usage with cache counted as input', async () => {
  mock.enqueue({ text: ['Hello there.'], usage: { input: 20, output: 4, cacheRead: 100, cacheCreation: 10 } });
  const reply = await n.client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, ...hello], temperature: 0.5 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.model, model);
  assert.is(reply.choices[0]?.message.content, 'Hello there.');
  assert.is(reply.choices[0]?.finish_reason, 'stop');
  assert.equal(reply.usage, { prompt_tokens: 130, completion_tokens: 4, total_tokens: 134, prompt_tokens_details: { cached_tokens: 100 } });
  const r = sent();
  assert.is(r.headers['x-api-key'], key);
  assert.is(r.headers['anthropic-version'], '2023-06-01');
  assert.equal(r.body, { model: 'claude-sonnet-4-5-20250929', max_tokens: 64000, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }], temperature: 0.5 });
});

test('stream with include_usage: chunks in order, finish, then the usage chunk and [DONE]', async () => {
  mock.enqueue({ text: ['One', ' two', ' three'], usage: { input: 11, output: 7 } });
  const s = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true, stream_options: { include_usage: true } }));
  assert.is(s.error, undefined);
  assert.is(s.text, 'One two three');
  assert.is(s.finish, 'stop');
  assert.equal(s.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  assert.is(sent().body.stream, true);
});

test('a full tool round trip: tool_use → tool_calls with its id, the result goes back as tool_result with that id (whole and streamed)', async () => {
  mock.enqueue({ text: ['Checking.'], tools: [{ id: 'toolu_01Weather', name: 'weather', input: { city: 'Oslo' } }] });
  const first = await n.client.chat.completions.create({ model, messages: hello, tools, tool_choice: 'auto' });
  assertSchema('CreateChatCompletionResponse', first);
  assert.is(first.choices[0]?.finish_reason, 'tool_calls');
  const call = first.choices[0]!.message.tool_calls![0]!;
  assert.equal([call.id, call.type === 'function' && call.function.name, call.type === 'function' && call.function.arguments], ['toolu_01Weather', 'weather', '{"city":"Oslo"}']);
  assert.equal(sent().body.tools, [{ name: 'weather', input_schema: parameters, description: 'Weather now' }]);
  assert.equal(sent().body.tool_choice, { type: 'auto' });

  mock.enqueue({ text: ['It is 3 °C in Oslo.'] });
  const history: OpenAI.Chat.ChatCompletionMessageParam[] = [...hello, first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '{"celsius":3}' }];
  const second = await n.client.chat.completions.create({ model, messages: history, tools });
  assert.is(second.choices[0]?.message.content, 'It is 3 °C in Oslo.');
  assert.equal(sent().body.messages.slice(1), [
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_01Weather', name: 'weather', input: { city: 'Oslo' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Weather', content: '{"celsius":3}' }] },
  ]);

  mock.enqueue({ tools: [{ id: 'toolu_02', name: 'weather', input: { city: 'Bergen' } }] });
  const s = await readStream(await n.client.chat.completions.create({ model, messages: hello, tools, stream: true }));
  assert.equal(s.calls, [{ id: 'toolu_02', name: 'weather', arguments: '{"city":"Bergen"}' }]);
  assert.is(s.finish, 'tool_calls');
});

test('a tool call with no arguments: `{}` whole and streamed (Anthropic streams one empty input_json_delta)', async () => {
  const now: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'now', description: 'The time', parameters: { type: 'object', properties: {} } } }];
  mock.enqueue({ tools: [{ id: 'toolu_03Now', name: 'now', input: {} }] });
  const whole = await n.client.chat.completions.create({ model, messages: hello, tools: now });
  const call = whole.choices[0]!.message.tool_calls![0]!;
  assert.is(call.type === 'function' && call.function.arguments, '{}');
  mock.enqueue({ tools: [{ id: 'toolu_04Now', name: 'now', input: {} }, { id: 'toolu_05W', name: 'weather', input: { city: 'Oslo' } }] });
  const s = await readStream(await n.client.chat.completions.create({ model, messages: hello, tools: [...now, ...tools], stream: true }));
  assert.is(s.error, undefined);
  assert.equal(s.calls, [{ id: 'toolu_04Now', name: 'now', arguments: '{}' }, { id: 'toolu_05W', name: 'weather', arguments: '{"city":"Oslo"}' }]);
  assert.equal(s.calls.map((c) => JSON.parse(c.arguments) as unknown), [{}, { city: 'Oslo' }]);
  assert.is(s.finish, 'tool_calls');
});

test('an image and a PDF reach Anthropic as native base64 image and document blocks, a text file as its text', async () => {
  const notes = { type: 'file' as const, file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from('Meeting at noon.').toString('base64')}` } };
  await n.client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe both.' }, { type: 'image_url', image_url: { url: pngUrl() } }, { type: 'file', file: { filename: 'one.pdf', file_data: pdfUrl() } }, notes] }],
  });
  const [text, image, document, file] = sent().body.messages[0].content;
  assert.is(file.type, 'text');
  assert.match(file.text, /notes\.txt[\s\S]*Meeting at noon\./);
  assert.equal(text, { type: 'text', text: 'Describe both.' });
  assert.equal(image, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngUrl().split(',')[1] } });
  assert.equal(document, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdfUrl().split(',')[1] } });
});

test('vendor errors become the spec codes: prompt too long, credit balance (a 400), rejected key, rate limit with retry-after, refusal', async () => {
  mock.enqueue({ error: anthropicError('anthropic-prompt-too-long') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 400, code: 'context_length_exceeded', param: 'messages' });
  mock.enqueue({ error: anthropicError('anthropic-credit-balance') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello, stream: true }), { status: 502, code: 'provider_billing', svc: { provider: 'anthropic' } });
  mock.enqueue({ error: anthropicError('anthropic-invalid-key') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 502, code: 'provider_auth_failed', svc: { provider: 'anthropic' } });
  mock.enqueue({ error: anthropicError('anthropic-rate-limit') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: { provider: 'anthropic', rate_limited: true, retry_after_seconds: 60 } });
  mock.enqueue({ text: [], stop: 'refusal', usage: { input: 18, output: 5 } });
  const refused = await n.client.chat.completions.create({ model, messages: hello });
  assert.is(refused.choices[0]?.finish_reason, 'content_filter');
});

test('a stream cut after its first chunks ends with a stream_interrupted event; an overload mid-stream too', async () => {
  mock.enqueue({ text: ['alpha ', 'beta ', 'gamma'], breakAfter: 2 });
  const cut = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true }));
  assert.is(cut.text, 'alpha beta ');
  assert.is(cut.error?.code, 'stream_interrupted');
  assert.equal((cut.error?.error as { svc?: unknown }).svc, { provider: 'anthropic' });
  mock.enqueue({
    raw: (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":5,"output_tokens":1}}}\n\n');
      res.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n');
      res.end('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    },
  });
  const overloaded = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true }));
  assert.is(overloaded.text, 'Hi');
  assert.is(overloaded.error?.code, 'stream_interrupted');
});

test('a stream that breaks off is charged on the input Anthropic reported in message_start (cache included), its output by the tokenizer', async () => {
  mock.enqueue({ text: ['alpha ', 'beta ', 'gamma'], usage: { input: 1234, output: 40, cacheRead: 300, cacheCreation: 6 }, breakAfter: 2 });
  const { data, response } = await n.client.chat.completions.create({ model, messages: hello, stream: true }).withResponse();
  const cut = await readStream(data);
  assert.is(cut.error?.code, 'stream_interrupted');
  const row = await waitUsageRecord(n.w, response.headers.get('x-svc-request-id')!);
  assert.is(Number(row.prompt_tokens), 1234 + 300 + 6);
  assert.is(Number(row.completion_tokens), countTokens('alpha beta '));
  assert.is(row.error_code, 'stream_interrupted');
});

test.run();
