import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type OpenAI from 'openai';
import { MockGemini, geminiError, geminiFixture } from '../support/mock-gemini.js';
import { assertSchema } from '../support/openapi.js';
import { shape } from '../support/harness.js';
import { expectSdk, waitUsageRecord } from '../chat/support.js';
import { nativeWorld, pdfUrl, pngUrl, readStream, type NativeWorld } from './native-e2e.js';

const test = suite(`google end to end through svc (${shape})`);
const key = 'AIza-e2e-9d3a7f';
const model = 'google:gemini-2.5-flash';
const mock = new MockGemini({ apiKey: key });
let n: NativeWorld;
const hello: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello.' }];
const parameters = { type: 'object', additionalProperties: false, properties: { city: { type: 'string' } }, required: ['city'] };
const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', parameters } }, { type: 'function', function: { name: 'clock', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } }];
const sent = () => mock.requests.filter((r) => r.method === 'POST').at(-1)!;

test.before(async () => {
  await mock.start();
  n = await nativeWorld('google', mock.url, key);
});
test.after(async () => {
  await n.stop();
  await mock.stop();
});
test.before.each(() => mock.reset());

test('whole reply: generateContent with the key header and the output limit; thinking counted as output', async () => {
  mock.enqueue({ text: ['Hello there.'], usage: { prompt: 9, candidates: 3, thoughts: 40 } });
  const reply = await n.client.chat.completions.create({ model, messages: [{ role: 'developer', content: 'Be brief.' }, ...hello], top_p: 0.9, stop: ['END'] });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.model, model);
  assert.is(reply.choices[0]?.message.content, 'Hello there.');
  assert.equal(reply.usage, { prompt_tokens: 9, completion_tokens: 43, total_tokens: 52, completion_tokens_details: { reasoning_tokens: 40 } });
  const r = sent();
  assert.is(r.path, '/v1beta/models/gemini-2.5-flash:generateContent');
  assert.is(r.headers['x-goog-api-key'], key);
  assert.equal(r.body, {
    contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }],
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    generationConfig: { maxOutputTokens: 65535, topP: 0.9, stopSequences: ['END'] },
  });
});

test('stream (no end marker): chunks, finish, usage chunk; a recorded Gemini 3 stream passes through', async () => {
  mock.enqueue({ text: ['One', ' two', ' three'], usage: { prompt: 11, candidates: 7 } });
  const s = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true, stream_options: { include_usage: true } }));
  assert.is(s.error, undefined);
  assert.equal([s.text, s.finish], ['One two three', 'stop']);
  assert.equal(s.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  assert.is(sent().path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  mock.enqueue({ raw: (_q, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(geminiFixture('google-text.chunks.txt')) });
  const recorded = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true }));
  assert.equal([recorded.text, recorded.finish, recorded.error], ['There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y', 'stop', undefined]);
});

test('strict tool schemas reach Gemini whole as parametersJsonSchema (additionalProperties, const, $defs kept); no-argument tools send none', async () => {
  const strict = {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] }, when: { $ref: '#/$defs/day' }, v: { const: 2 } },
    required: ['city', 'unit', 'when', 'v'],
    additionalProperties: false,
    $defs: { day: { type: 'string', format: 'date' } },
  };
  const strictTools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'weather', description: 'Weather', parameters: strict, strict: true } },
    { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {}, additionalProperties: false } } },
  ];
  for (const stream of [false, true]) {
    mock.enqueue({ calls: [{ name: 'weather', args: { city: 'Oslo', unit: 'c', when: '2026-11-22', v: 2 } }] });
    const s = stream
      ? await readStream(await n.client.chat.completions.create({ model, messages: hello, tools: strictTools, stream: true }))
      : undefined;
    const whole = stream ? undefined : await n.client.chat.completions.create({ model, messages: hello, tools: strictTools });
    assert.is(s?.error, undefined);
    assert.is(stream ? s!.finish : whole!.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(sent().body.tools, [{ functionDeclarations: [{ name: 'weather', description: 'Weather', parametersJsonSchema: strict }, { name: 'now' }] }]);
  }
});

test('a full parallel tool round trip: made-up ids with the thought signature, results back as functionResponse by name, together', async () => {
  mock.enqueue({ calls: [{ name: 'weather', args: { city: 'Oslo' }, signature: 'SIG_first' }, { name: 'clock', args: { tz: 'CET' } }] });
  const first = await n.client.chat.completions.create({ model, messages: hello, tools, tool_choice: 'auto' });
  assertSchema('CreateChatCompletionResponse', first);
  assert.is(first.choices[0]?.finish_reason, 'tool_calls');
  const calls = first.choices[0]!.message.tool_calls!;
  assert.equal(sent().body.tools, [{ functionDeclarations: [{ name: 'weather', parametersJsonSchema: parameters }, { name: 'clock', parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } } } }] }]);
  assert.equal(sent().body.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });

  mock.enqueue({ text: ['3 °C at 14:05.'] });
  const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
    ...hello,
    first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam,
    { role: 'tool', tool_call_id: calls[1]!.id, content: '14:05' },
    { role: 'tool', tool_call_id: calls[0]!.id, content: '{"celsius":3}' },
  ];
  const second = await n.client.chat.completions.create({ model, messages: history, tools });
  assert.is(second.choices[0]?.message.content, '3 °C at 14:05.');
  assert.equal(sent().body.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'SIG_first' }, { functionCall: { name: 'clock', args: { tz: 'CET' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'clock', response: { content: '14:05' } } }, { functionResponse: { name: 'weather', response: { celsius: 3 } } }] },
  ]);

  mock.enqueue({ calls: [{ name: 'weather', args: { city: 'Bergen' } }] });
  const s = await readStream(await n.client.chat.completions.create({ model, messages: hello, tools, stream: true }));
  assert.is(s.finish, 'tool_calls');
  assert.equal(s.calls.map((c) => [c.name, c.arguments]), [['weather', '{"city":"Bergen"}']]);
  assert.match(s.calls[0]!.id, /^call_svc/);
});

test('an image and a PDF reach Gemini as inlineData parts, a text file as its text', async () => {
  const notes = { type: 'file' as const, file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from('Meeting at noon.').toString('base64')}` } };
  await n.client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe both.' }, { type: 'image_url', image_url: { url: pngUrl() } }, { type: 'file', file: { filename: 'one.pdf', file_data: pdfUrl() } }, notes] }],
  });
  const parts = sent().body.contents[0].parts;
  assert.match(parts.at(-1).text, /notes\.txt[\s\S]*Meeting at noon\./);
  assert.equal(parts.slice(0, 3), [
    { text: 'Describe both.' },
    { inlineData: { mimeType: 'image/png', data: pngUrl().split(',')[1] } },
    { inlineData: { mimeType: 'application/pdf', data: pdfUrl().split(',')[1] } },
  ]);
});

test('vendor errors and blocks: API_KEY_INVALID 400, PERMISSION_DENIED, context overflow, RESOURCE_EXHAUSTED with RetryInfo, blocked prompt as content_filter', async () => {
  mock.enqueue({ error: geminiError('google-api-key-invalid') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 502, code: 'provider_auth_failed', svc: { provider: 'google' } });
  mock.enqueue({ error: geminiError('google-permission-denied') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello, stream: true }), { status: 502, code: 'provider_auth_failed', svc: { provider: 'google' } });
  mock.enqueue({ error: geminiError('google-context-length') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 400, code: 'context_length_exceeded', param: 'messages' });
  mock.enqueue({ error: geminiError('google-rate-limit') });
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: { provider: 'google', rate_limited: true, retry_after_seconds: 35 } });
  mock.enqueue({ blockReason: 'PROHIBITED_CONTENT', usage: { prompt: 9, candidates: 0 } });
  const blocked = await n.client.chat.completions.create({ model, messages: hello });
  assert.equal([blocked.choices[0]?.finish_reason, blocked.choices[0]?.message.content], ['content_filter', '']);
  mock.enqueue({ blockReason: 'SAFETY', usage: { prompt: 9, candidates: 0 } });
  const blockedStream = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true }));
  assert.equal([blockedStream.finish, blockedStream.error], ['content_filter', undefined]);
});

test('a stream cut before its finishReason ends with a stream_interrupted event', async () => {
  mock.enqueue({ text: ['alpha ', 'beta ', 'gamma'], breakAfter: 2 });
  const cut = await readStream(await n.client.chat.completions.create({ model, messages: hello, stream: true }));
  assert.is(cut.text, 'alpha beta ');
  assert.is(cut.error?.code, 'stream_interrupted');
  assert.equal((cut.error?.error as { svc?: unknown }).svc, { provider: 'google' });
});

test('a stream that breaks off is charged on the usage Gemini reported with its last event (running counts, thinking included)', async () => {
  // Three text events carry candidatesTokenCount 10, 20, 30 (cumulative); the cut comes after the second.
  mock.enqueue({ text: ['alpha ', 'beta ', 'gamma'], usage: { prompt: 777, candidates: 30, thoughts: 12 }, breakAfter: 2 });
  const { data, response } = await n.client.chat.completions.create({ model, messages: hello, stream: true }).withResponse();
  const cut = await readStream(data);
  assert.is(cut.error?.code, 'stream_interrupted');
  const row = await waitUsageRecord(n.w, response.headers.get('x-svc-request-id')!);
  assert.is(Number(row.prompt_tokens), 777);
  assert.is(Number(row.completion_tokens), 20 + 12);
});

test.run();
