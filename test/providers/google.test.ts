import { suite } from 'uvu';
import { toGeminiRequest } from '../../providers/google/request.js';
import * as assert from 'uvu/assert';
import type { ServerResponse } from 'node:http';
import { isGatewayError, type ChatCompletionChunk, type ChatMessage, type ProviderAdapter } from '../../kernel/index.js';
import google from '../../providers/google/index.js';
import { fromGeminiReply } from '../../providers/google/reply.js';
import { geminiJsonSchema } from '../../providers/google/schema.js';
import { MockGemini, geminiError, geminiFixture } from '../support/mock-gemini.js';
import { assertSchema } from '../support/openapi.js';
import { shape } from '../support/harness.js';
import { drain, providerContract, stoppedReplyHistory, rejectsWith, testCall, testModel } from './contract.js';

const test = suite(`google adapter (${shape})`);
const key = 'AIza-canary-5c2e9f';
const timeouts = { connectMs: 1000, firstByteMs: 1500, idleMs: 400 };
const model = testModel('gemini-2.5-flash', 'google');
let mock: MockGemini;
const made: ProviderAdapter[] = [];

function adapter(address = mock.url, apiKey = key, t = timeouts): ProviderAdapter {
  const a = google.create({ name: 'google', address, apiKey, timeouts: t });
  made.push(a);
  return a;
}
const schemaChecked = (chunks: ChatCompletionChunk[]) => chunks.forEach((c) => assertSchema('CreateChatCompletionStreamResponse', c));
const raw = (wire: string) => ({ raw: (_q: unknown, res: ServerResponse) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(wire) });
const stream = () => adapter().stream(testCall(model, { stream: true }));

test.before.each(async () => {
  mock = await new MockGemini({ apiKey: key }).start();
});
test.after.each(async () => {
  await Promise.all(made.splice(0).map((a) => a.close()));
  await mock.stop();
});

providerContract(test, () => ({
  adapter: () => adapter(),
  model,
  reply: (content, u) => mock.enqueue({ text: [content], usage: { prompt: u.prompt_tokens, candidates: u.completion_tokens } }),
  stream: (pieces, u) => mock.enqueue({ text: pieces, usage: { prompt: u.prompt_tokens, candidates: u.completion_tokens } }),
  failBefore: (kind) => mock.enqueue({ error: geminiError(kind === 'auth' ? 'google-api-key-invalid' : kind === 'context' ? 'google-context-length' : 'google-overloaded') }),
  breakAfter: (pieces, n) => mock.enqueue({ text: pieces, breakAfter: n }),
}));

test('request: key header, model in the path, systemInstruction, inlineData, generationConfig, tool schemas whole', async () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'developer', content: 'Use metric units.' },
    { role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } }, { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] },
  ];
  const parameters = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false, properties: { city: { type: 'string', default: 'Oslo' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] }, n: { const: 3 } }, required: ['city', 'ghost'] };
  await drain(await adapter().stream(testCall(model, { stream: true, messages, temperature: 0.3, top_p: 0.8, stop: 'END', tools: [{ type: 'function', function: { name: 'weather', description: 'Weather', parameters } }, { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }], tool_choice: 'none' })));
  const r = mock.requests[0]!;
  assert.is(r.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  assert.is(r.headers['x-goog-api-key'], key);
  assert.not.match(r.path + JSON.stringify(r.body), key);
  assert.equal(r.body, {
    contents: [{ role: 'user', parts: [{ text: 'Look:' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }] }],
    systemInstruction: { parts: [{ text: 'Be brief.\n\nUse metric units.' }] },
    tools: [{ functionDeclarations: [
      { name: 'weather', description: 'Weather', parametersJsonSchema: parameters },
      { name: 'now' },
    ] }],
    toolConfig: { functionCallingConfig: { mode: 'NONE' } },
    generationConfig: { maxOutputTokens: 256, temperature: 0.3, topP: 0.8, stopSequences: ['END'] },
  });
  assert.is(geminiJsonSchema(undefined), undefined);
});

test('tool round trip: made-up ids and thought signatures in the id; results go back as functionResponse by name, parallel ones together', async () => {
  mock.enqueue({ calls: [{ name: 'weather', args: { city: 'Oslo' }, signature: 'SIG_A' }, { name: 'time', args: { tz: 'CET' } }] });
  const reply = await adapter().complete(testCall(model));
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.choices[0]?.finish_reason, 'tool_calls');
  const calls = reply.choices[0]!.message.tool_calls!;
  assert.match(calls[0]!.id, /^call_svc[\w-]+~SIG_A$/);
  assert.match(calls[1]!.id, /^call_svc[\w-]+$/);
  assert.is(new Set(calls.map((c) => c.id)).size, 2);
  const history: ChatMessage[] = [
    { role: 'user', content: 'Weather and time in Oslo?' },
    { role: 'assistant', content: null, tool_calls: calls },
    { role: 'tool', tool_call_id: calls[0]!.id, content: '{"temp":3}' },
    { role: 'tool', tool_call_id: calls[1]!.id, content: '14:05' },
  ];
  await adapter().complete(testCall(model, { messages: history }));
  assert.equal(mock.requests[1]!.body.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'SIG_A' }, { functionCall: { name: 'time', args: { tz: 'CET' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { temp: 3 } } }, { functionResponse: { name: 'time', response: { content: '14:05' } } }] },
  ]);
  mock.enqueue({ calls: [{ id: 'fc_9', name: 'weather', args: {} }] });
  const withId = (await adapter().complete(testCall(model))).choices[0]!.message.tool_calls![0]!;
  assert.is(withId.id, 'fc_9', "Gemini's own id is kept");
  await adapter().complete(testCall(model, { messages: [{ role: 'assistant', content: null, tool_calls: [withId] }, { role: 'tool', tool_call_id: 'fc_9', content: 'x' }] }));
  assert.equal(mock.requests[3]!.body.contents[1].parts[0].functionResponse, { name: 'weather', response: { content: 'x' }, id: 'fc_9' });
});

test('recorded replies: text with thinking counted as output, a signed tool call, a blocked prompt as content_filter', () => {
  const text = fromGeminiReply(JSON.parse(geminiFixture('google-text.json')))!;
  assertSchema('CreateChatCompletionResponse', text);
  assert.match(text.choices[0]!.message.content!, /^There are \*\*3\*\* r's/);
  assert.equal(text.usage, { prompt_tokens: 9, completion_tokens: 272, total_tokens: 281, completion_tokens_details: { reasoning_tokens: 244 } });
  const tool = fromGeminiReply(JSON.parse(geminiFixture('google-tool-call.json')))!;
  assert.is(tool.choices[0]?.finish_reason, 'tool_calls');
  assert.match(tool.choices[0]!.message.tool_calls![0]!.id, /~EskgCsYgAb4\+9vtF7/);
  assert.is(tool.choices[0]!.message.tool_calls![0]!.function.arguments, '{"location":"San Francisco"}');
  const blocked = fromGeminiReply(JSON.parse(geminiFixture('google-prompt-blocked.json')))!;
  assertSchema('CreateChatCompletionResponse', blocked);
  assert.is(blocked.choices[0]?.finish_reason, 'content_filter');
  assert.equal(blocked.usage, { prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
});

test('recorded streams (CRLF framing, no end marker): text, then a signed tool call; finish and usage chunks last', async () => {
  mock.enqueue(raw(geminiFixture('google-text.chunks.txt')));
  const t = await drain(await stream());
  assert.is(t.error, undefined);
  schemaChecked(t.chunks);
  assert.is(t.text, 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
  assert.is(t.chunks[0]?.choices[0]?.delta.role, 'assistant');
  assert.is(t.chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
  assert.equal(t.chunks.at(-1)?.usage, { prompt_tokens: 9, completion_tokens: 208, total_tokens: 217, completion_tokens_details: { reasoning_tokens: 185 } });
  mock.enqueue(raw(geminiFixture('google-tool-call-gemini3.chunks.txt')));
  const c = await drain(await stream());
  schemaChecked(c.chunks);
  const call = c.chunks[0]!.choices[0]!.delta.tool_calls![0]!;
  assert.is(call.function?.name, 'weather');
  assert.match(call.id!, /^call_svc[\w-]+~EpEgCo4g/);
  assert.is(c.chunks.at(-2)?.choices[0]?.finish_reason, 'tool_calls');
  mock.enqueue({ blockReason: 'SAFETY' });
  const b = await drain(await stream());
  assert.is(b.chunks[0]?.choices[0]?.finish_reason, 'content_filter');
});

test('stream rules: EOF before a finishReason, idle, mid-stream error object, one bad event skipped, three in a row interrupt', async () => {
  const events = geminiFixture('google-text.chunks.txt').split('\r\n\r\n');
  const error = `data: ${JSON.stringify(geminiError('google-overloaded').body)}\r\n\r\n`;
  const cases: Array<[string, Parameters<MockGemini['enqueue']>[0], string]> = [
    ['eof', raw(events.slice(0, 2).join('\r\n\r\n') + '\r\n\r\n'), 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y'],
    ['idle', { text: ['a', 'b'], gapMs: 1200 }, 'a'],
    ['error_event', raw(events[0] + '\r\n\r\n' + error), 'There are **3**'],
    ['malformed', raw([events[0], 'data: {"candid', 'data: <html>', 'data: ]', ''].join('\r\n\r\n')), 'There are **3**'],
  ];
  for (const [reason, behaviour, before] of cases) {
    mock.enqueue(behaviour);
    const { text, error: err } = await drain(await stream());
    assert.is(text, before, reason);
    assert.ok(isGatewayError(err), reason);
    assert.is((err as { code: string }).code, 'stream_interrupted', reason);
    assert.is((err as unknown as { reason: string }).reason, reason);
  }
  mock.enqueue(raw([events[0], 'data: {"candid', events[1], events[2], ''].join('\r\n\r\n')));
  assert.is((await drain(await stream())).error, undefined, 'a single unreadable event is skipped');
  mock.enqueue(raw(error));
  await rejectsWith(stream(), 'upstream_unavailable');
});

test("an older model's 200 with finishReason MISSING_THOUGHT_SIGNATURE is the same clear refusal as the 400", async () => {
  mock.enqueue({ text: [], finishReason: 'MISSING_THOUGHT_SIGNATURE' });
  const whole = await rejectsWith(adapter().complete(testCall(model)), 'provider_rejected_request');
  assert.match(whole.message, /tool_call id it returned, unchanged/);
  mock.enqueue({ text: [], finishReason: 'MISSING_THOUGHT_SIGNATURE' });
  await rejectsWith(stream(), 'provider_rejected_request');
});

test('check(): GET /v1beta/models; the 400 API_KEY_INVALID is key_refused; abort reaches the upstream', async () => {
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'connected');
  assert.is(mock.requests[0]?.path, '/v1beta/models');
  assert.is(await adapter(mock.url, 'AIza-wrong').check(AbortSignal.timeout(2000)), 'key_refused');
  mock.enqueue({ error: geminiError('google-permission-denied') }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'key_refused');
  mock.enqueue({ error: geminiError('google-overloaded') }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'connected');
  mock.enqueue({ delayMs: 1000 });
  const ac = new AbortController();
  const pending = adapter().complete(testCall(model, {}, ac.signal));
  setTimeout(() => ac.abort(new Error('gone')), 100);
  assert.is(((await pending.catch((e: unknown) => e)) as Error).message, 'gone');
  assert.is(await mock.requests.at(-1)!.settled, 'aborted');
});

test('an assistant turn with neither text nor tool calls (a reply stopped for an approval) is left out', () => {
  const turns = (toGeminiRequest(testCall(model, { messages: stoppedReplyHistory }))).contents as Array<{ role: string }>;
  assert.equal(turns.map((t) => t.role), ['user', 'model', 'user']);
});

test.run();
