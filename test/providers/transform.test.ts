import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChatMessage, ChatRequest, ProviderAdapter } from '../../kernel/index.js';
import openaiCompatible from '../../providers/openai-compatible/index.js';
import { fromVendorReply, readStreamData, toVendorRequest } from '../../providers/openai-compatible/transform.js';
import { MockUpstream, readFixture } from '../support/mock-upstream.js';
import { assertSchema } from '../support/openapi.js';
import { shape } from '../support/harness.js';
import { drain, testCall, testModel } from './contract.js';

const test = suite(`openai-compatible request and reply transforms (${shape})`);
const model = testModel('Qwen/Qwen2.5-7B-Instruct:q4');

/** A request carrying fields the client may send but the provider must never see. */
function noisyRequest(stream: boolean): ChatRequest & { maxTokens: number } {
  const messages = [
    { role: 'system', content: 'Be brief.', secret_field: 'x' },
    { role: 'user', content: [{ type: 'text', text: 'What is this?', cache_control: {} }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' }, extra: 1 }] },
    { role: 'tool', content: '42', tool_call_id: 'call_1' },
  ] as unknown as ChatMessage[];
  return { model: 'local:x', messages, stream, includeUsage: false, maxTokens: 300, temperature: 0, user: 'u-1', seed: 3, logit_bias: {} } as unknown as ChatRequest & { maxTokens: number };
}

const expectedMessages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }] },
  { role: 'tool', content: '42', tool_call_id: 'call_1' },
];

test('request body: provider model id, known fields only, max_tokens always, options only when set', () => {
  assert.equal(toVendorRequest({ model, request: noisyRequest(false) }), {
    model: 'Qwen/Qwen2.5-7B-Instruct:q4',
    messages: expectedMessages,
    max_tokens: 300,
    temperature: 0,
    stream: false,
  });
});

test('request body for a stream always asks for usage, even when the client did not', () => {
  const body = toVendorRequest({ model, request: { ...noisyRequest(true), top_p: 0.9, stop: ['\n\n'], tool_choice: 'auto', tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] } });
  assert.equal(body, {
    model: 'Qwen/Qwen2.5-7B-Instruct:q4',
    messages: expectedMessages,
    max_tokens: 300,
    temperature: 0,
    top_p: 0.9,
    stop: ['\n\n'],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    tool_choice: 'auto',
    stream: true,
    stream_options: { include_usage: true },
  });
});

test('the adapter sends exactly that body (whole and stream) to the wire', async () => {
  const mock = await new MockUpstream().start();
  const adapter: ProviderAdapter = openaiCompatible.create({ name: 'local', address: mock.url, timeouts: { connectMs: 1000, firstByteMs: 2000, idleMs: 1000 } });
  try {
    await adapter.complete({ ...testCall(model), request: noisyRequest(true) }); // complete() never streams
    await drain(await adapter.stream({ ...testCall(model), request: noisyRequest(false) }));
    assert.equal(mock.requests[0]?.body, toVendorRequest({ model, request: noisyRequest(false) }));
    assert.equal(mock.requests[1]?.body, toVendorRequest({ model, request: noisyRequest(true) }));
    assert.is(mock.requests[1]?.headers.accept, 'text/event-stream');
    assert.is(mock.requests[1]?.headers['content-type'], 'application/json');
  } finally {
    await adapter.close();
    await mock.stop();
  }
});

test('whole reply: tool calls kept, object arguments stringified, unknown finish reasons become stop', () => {
  const reply = fromVendorReply({
    id: 'r1',
    created: 5,
    model: 'm',
    choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }, finish_reason: 'eos' }],
    usage: { prompt_tokens: 3, completion_tokens: 2 },
    timings: { predicted_ms: 1 },
  });
  assert.equal(reply, {
    id: 'r1',
    object: 'chat.completion',
    created: 5,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
  assert.is(fromVendorReply({ error: { message: 'x' } }), undefined);
});

test('whole reply: one already in the normalized shape is used as parsed; any difference gets the copy, with the same result', () => {
  const normal = () => ({
    model: 'm',
    id: 'r2',
    object: 'chat.completion',
    created: 7,
    choices: [
      { index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }, logprobs: null, finish_reason: 'tool_calls' },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    system_fingerprint: 'fp',
  });
  const parsed = normal();
  assert.is(fromVendorReply(parsed), parsed, 'used as parsed');
  // Each of these differs from the normalized shape in one place: a copy is made, and it is what the
  // normalization gives (the extra member dropped, the missing one filled, the value fixed).
  const variants: Array<[string, (r: ReturnType<typeof normal>) => void]> = [
    ['an extra member', (r) => Object.assign(r, { service_tier: 'default' })],
    ['a null fingerprint', (r) => Object.assign(r, { system_fingerprint: null })],
    ['no refusal', (r) => delete (r.choices[0]!.message as { refusal?: unknown }).refusal],
    ['no logprobs', (r) => delete (r.choices[0] as { logprobs?: unknown }).logprobs],
    ['an unknown finish reason', (r) => Object.assign(r.choices[0]!, { finish_reason: 'eos' })],
    ['a zero total', (r) => Object.assign(r.usage, { total_tokens: 0 })],
    ['usage details', (r) => Object.assign(r.usage, { prompt_tokens_details: { cached_tokens: 1, audio_tokens: 0 } })],
    ['object arguments', (r) => Object.assign(r.choices[1]!.message.tool_calls![0]!.function, { arguments: { a: 1 } })],
    ['an empty tool call list', (r) => Object.assign(r.choices[1]!.message, { tool_calls: [] })],
    ['an annotation list', (r) => Object.assign(r.choices[0]!.message, { annotations: [] })],
  ];
  for (const [what, change] of variants) {
    const r = normal();
    change(r);
    const copy = fromVendorReply(r);
    assert.is.not(copy, r, what);
    assertSchema('CreateChatCompletionResponse', copy);
    // The copy of the copy is the copy itself: it is in the normalized shape.
    assert.is(fromVendorReply(copy), copy, what);
  }
});

test('stream data: [DONE], chunks, error events (both vLLM shapes), malformed', () => {
  assert.equal(readStreamData(' [DONE] '), { kind: 'done' });
  const chunk = readStreamData(readFixture('openai-text.chunks.txt').split('\n\n')[0]!.slice(6));
  assert.is(chunk.kind, 'chunk');
  assert.equal(chunk.kind === 'chunk' && chunk.chunk.choices[0]?.delta, { role: 'assistant', content: '' });
  assert.is(readStreamData('{"error":{"message":"boom","type":"server_error"}}').kind, 'error');
  assert.is(readStreamData('{"object":"error","message":"boom","type":"BadRequestError","code":400}').kind, 'error');
  assert.is(readStreamData('{"id":').kind, 'malformed');
  assert.is(readStreamData('"text"').kind, 'malformed');
  assert.is(readStreamData('{"hello":1}').kind, 'malformed');
});

test('stream tool-call deltas keep their index, id and argument pieces', () => {
  const item = readStreamData('{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_9","type":"function","function":{"name":"f","arguments":"{\\"a\\""}}]},"finish_reason":null}]}');
  assert.equal(item.kind === 'chunk' && item.chunk.choices[0]?.delta.tool_calls, [{ index: 1, id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a"' } }]);
});

test('recorded replies and chunks come out valid against the wire schema', () => {
  assertSchema('CreateChatCompletionResponse', fromVendorReply(JSON.parse(readFixture('openai-text.json'))));
  // A llama.cpp / Ollama style reply: no refusal, no system_fingerprint, extra timing fields.
  assertSchema('CreateChatCompletionResponse', fromVendorReply({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], timings: {} }));
  for (const frame of readFixture('openai-text.chunks.txt').split('\n\n').filter((f) => f.startsWith('data: {'))) {
    const item = readStreamData(frame.slice(6));
    assert.is(item.kind, 'chunk');
    if (item.kind === 'chunk') assertSchema('CreateChatCompletionStreamResponse', item.chunk);
  }
});

test.run();
