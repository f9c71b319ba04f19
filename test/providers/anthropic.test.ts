import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isGatewayError, type ChatCompletionChunk, type ChatMessage, type ProviderAdapter } from '../../kernel/index.js';
import anthropic from '../../providers/anthropic/index.js';
import { toAnthropicRequest } from '../../providers/anthropic/request.js';
import { fromAnthropicReply } from '../../providers/anthropic/reply.js';
import { anthropicVersion } from '../../providers/anthropic/adapter.js';
import { MockAnthropic, anthropicError, anthropicFixture } from '../support/mock-anthropic.js';
import { assertSchema } from '../support/openapi.js';
import { shape } from '../support/harness.js';
import { drain, providerContract, stoppedReplyHistory, rejectsWith, testCall, testModel, textOf } from './contract.js';

const test = suite(`anthropic adapter (${shape})`);
const key = 'sk-ant-canary-7d1e4b';
const timeouts = { connectMs: 1000, firstByteMs: 1500, idleMs: 400 };
const model = testModel('claude-sonnet-4-5-20250929', 'anthropic');
let mock: MockAnthropic;
const made: ProviderAdapter[] = [];

function adapter(address = mock.url, apiKey = key, t = timeouts): ProviderAdapter {
  const a = anthropic.create({ name: 'anthropic', address, apiKey, timeouts: t });
  made.push(a);
  return a;
}

const schemaChecked = (chunks: ChatCompletionChunk[]) => chunks.forEach((c) => assertSchema('CreateChatCompletionStreamResponse', c));
const raw = (wire: string) => ({ raw: (_q: unknown, res: import('node:http').ServerResponse) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(wire) });

test.before.each(async () => {
  mock = await new MockAnthropic({ apiKey: key }).start();
});
test.after.each(async () => {
  await Promise.all(made.splice(0).map((a) => a.close()));
  await mock.stop();
});

providerContract(test, () => ({
  adapter: () => adapter(),
  model,
  reply: (content, u) => mock.enqueue({ text: [content], usage: { input: u.prompt_tokens, output: u.completion_tokens } }),
  stream: (pieces, u) => mock.enqueue({ text: pieces, usage: { input: u.prompt_tokens, output: u.completion_tokens } }),
  failBefore: (kind) => mock.enqueue({ error: anthropicError(kind === 'auth' ? 'anthropic-invalid-key' : kind === 'context' ? 'anthropic-prompt-too-long' : 'anthropic-overloaded') }),
  breakAfter: (pieces, n) => mock.enqueue({ text: pieces, breakAfter: n }),
}));

const history: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'developer', content: 'Answer in English.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What is in these?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ],
  },
  { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
  { role: 'tool', content: '42', tool_call_id: 'toolu_01A' },
];

test('request: pinned version and x-api-key; system+developer as system; native image, PDF, tool_use and tool_result blocks', async () => {
  const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Find', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
  await adapter().complete(testCall(model, { messages: history, temperature: 1.7, top_p: 0.5, stop: ['END', '  '], tools, tool_choice: 'auto' }));
  const r = mock.requests[0]!;
  assert.is(r.path, '/v1/messages');
  assert.is(r.headers['x-api-key'], key);
  assert.is(r.headers['anthropic-version'], anthropicVersion);
  assert.is(r.headers.authorization, undefined);
  assert.equal(r.body, {
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 256,
    system: 'Be brief.\n\nAnswer in English.',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: '42' }] },
    ],
    temperature: 1,
    stop_sequences: ['END'],
    tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, description: 'Find' }],
    tool_choice: { type: 'auto' },
  });
  assert.equal(toAnthropicRequest(testCall(model, { top_p: 0.5, tool_choice: 'none', tools }), true).top_p, 0.5);
  assert.equal(toAnthropicRequest(testCall(model, { tool_choice: 'none', tools }), true).tool_choice, { type: 'none' });
  assert.is(toAnthropicRequest(testCall(model), true).stream, true);
});

test('a model that refuses temperature gets the request once more without it', async () => {
  mock.enqueue({ error: anthropicError('anthropic-temperature-deprecated') });
  mock.enqueue({ text: ['OK'] });
  const reply = await adapter().complete(testCall(model, { temperature: 0.2 }));
  assert.is(reply.choices[0]?.message.content, 'OK');
  assert.is(mock.requests[0]!.body.temperature, 0.2);
  assert.is('temperature' in mock.requests[1]!.body, false);
  mock.enqueue({ error: anthropicError('anthropic-temperature-deprecated') });
  mock.enqueue({ error: anthropicError('anthropic-temperature-deprecated') });
  await rejectsWith(adapter().stream(testCall(model, { stream: true, temperature: 0.2 })), 'provider_rejected_request');
  assert.is(mock.requests.length, 4, 'only one more try');
});

test('recorded whole replies: text with cache-aware usage, refusal as content_filter; schema-valid', () => {
  const text = fromAnthropicReply(JSON.parse(anthropicFixture('anthropic-text.json')))!;
  assertSchema('CreateChatCompletionResponse', text);
  assert.is(text.choices[0]?.message.content, 'Hello!');
  assert.is(text.choices[0]?.finish_reason, 'stop');
  assert.equal(text.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  const refusal = fromAnthropicReply(JSON.parse(anthropicFixture('anthropic-refusal.json')))!;
  assertSchema('CreateChatCompletionResponse', refusal);
  assert.is(refusal.choices[0]?.finish_reason, 'content_filter');
  const cached = fromAnthropicReply({ ...JSON.parse(anthropicFixture('anthropic-text.json')), usage: { input_tokens: 4, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 7 } })!;
  assert.equal(cached.usage, { prompt_tokens: 124, completion_tokens: 7, total_tokens: 131, prompt_tokens_details: { cached_tokens: 100 } });
});

test('recorded text stream: chunks in order, role first, finish then usage (running output total, not added)', async () => {
  mock.enqueue(raw(anthropicFixture('anthropic-text.chunks.txt')));
  const { chunks, text, error } = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is(error, undefined);
  schemaChecked(chunks);
  assert.is(text, "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
  assert.is(chunks[0]?.choices[0]?.delta.role, 'assistant');
  assert.is(chunks[0]?.id, 'msg_01QC4g3HwBThD4BaNtBckFDJ');
  assert.is(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
  assert.equal(chunks.at(-1)?.usage, { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 });
});

test('recorded tool stream: tool_use becomes one tool call with its id, name and streamed arguments; finish tool_calls', async () => {
  mock.enqueue(raw(anthropicFixture('anthropic-tool.chunks.txt')));
  const { chunks, error } = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is(error, undefined);
  schemaChecked(chunks);
  const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  assert.equal(calls[0], { index: 0, id: 'toolu_01Cr31vcGoeeRgi3Eo5Ds8qN', type: 'function', function: { name: 'website_update', arguments: '' } });
  const args = JSON.parse(calls.map((c) => c.function?.arguments ?? '').join('')) as { website_path: string; tasks: unknown[] };
  assert.is(args.website_path, '/home/user/pace-landing');
  assert.is(chunks.at(-2)?.choices[0]?.finish_reason, 'tool_calls');
  assert.is(chunks.at(-1)?.usage?.completion_tokens, 118);
});

test('whole reply with tool calls from the mock: ids kept, arguments as JSON text', async () => {
  mock.enqueue({ text: ['Let me look.'], tools: [{ id: 'toolu_X1', name: 'lookup', input: { q: 'a' } }, { id: 'toolu_X2', name: 'lookup', input: { q: 'b' } }] });
  const reply = await adapter().complete(testCall(model));
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.choices[0]?.finish_reason, 'tool_calls');
  assert.equal(reply.choices[0]?.message.tool_calls?.map((t) => [t.id, t.function.arguments]), [['toolu_X1', '{"q":"a"}'], ['toolu_X2', '{"q":"b"}']]);
});

test('stream rules: mid-stream error event, EOF before the finish, idle, one bad event skipped, three in a row interrupt', async () => {
  const wire = anthropicFixture('anthropic-text.chunks.txt').split('\n\n');
  const cases: Array<[string, Parameters<MockAnthropic['enqueue']>[0], string]> = [
    ['error_event', raw(anthropicFixture('anthropic-midstream-error.chunks.txt')), 'Hello! I'],
    ['eof', raw(wire.slice(0, 6).join('\n\n') + '\n\n'), "Hello! I'm doing well, thank you for asking"],
    ['idle', { text: ['a', 'b'], gapMs: 1200 }, 'a'],
    ['malformed', raw([...wire.slice(0, 5), 'event: content_block_delta\ndata: {"type":', 'data: {', 'data: [', ''].join('\n\n')), 'Hello! I'],
  ];
  for (const [reason, behaviour, before] of cases) {
    mock.enqueue(behaviour);
    const { text, error } = await drain(await adapter().stream(testCall(model, { stream: true })));
    assert.is(text, before, reason);
    assert.ok(isGatewayError(error), reason);
    assert.is((error as { code: string }).code, 'stream_interrupted', reason);
    assert.is((error as unknown as { reason: string }).reason, reason);
  }
  mock.enqueue(raw([...wire.slice(0, 5), 'data: {"type":', ...wire.slice(5)].join('\n\n')));
  const skipped = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is(skipped.error, undefined, 'a single unreadable event is skipped');
  // Finished (message_delta seen) but cut before message_stop: complete.
  mock.enqueue(raw(wire.slice(0, 11).join('\n\n') + '\n\n'));
  const noStop = await drain(await adapter().stream(testCall(model, { stream: true })));
  assert.is(noStop.error, undefined);
  assert.is(noStop.chunks.at(-1)?.usage?.completion_tokens, 30);
});

test('an error event before any content is an ordinary error (the dispatcher may retry)', async () => {
  const wire = anthropicFixture('anthropic-midstream-error.chunks.txt').split('\n\n');
  mock.enqueue(raw([wire[0], wire.at(-1)].join('\n\n')));
  const err = await rejectsWith(adapter().stream(testCall(model, { stream: true })), 'upstream_unavailable');
  assert.equal(err.details, { provider: 'anthropic' });
});

test('client abort reaches the upstream; check() uses GET /v1/models with the key', async () => {
  mock.enqueue({ text: ['a', 'b', 'c'], gapMs: 300 });
  const ac = new AbortController();
  const it = (await adapter(mock.url, key, { ...timeouts, idleMs: 2000 }).stream(testCall(model, { stream: true }, ac.signal)))[Symbol.asyncIterator]();
  assert.is((await it.next()).value?.choices[0]?.delta.content, 'a');
  ac.abort(new Error('client left'));
  assert.is(((await it.next().catch((e: unknown) => e)) as Error).message, 'client left');
  assert.is(await mock.requests[0]!.settled, 'aborted');
  assert.is(await adapter().check(AbortSignal.timeout(2000)), 'connected');
  assert.is(mock.requests[1]?.path, '/v1/models');
  assert.is(await adapter(mock.url, 'sk-ant-wrong').check(AbortSignal.timeout(2000)), 'key_refused');
  mock.enqueue({ hang: true }, 'models');
  assert.is(await adapter().check(AbortSignal.timeout(200)), 'could_not_connect');
  assert.is(await adapter('not a url').check(AbortSignal.timeout(2000)), 'could_not_connect');
  assert.is(textOf([]), '');
});

test('an assistant turn with neither text nor tool calls (a reply stopped for an approval) is left out', () => {
  const turns = (toAnthropicRequest(testCall(model, { messages: stoppedReplyHistory }), false)).messages as Array<{ role: string }>;
  assert.equal(turns.map((t) => t.role), ['user', 'assistant', 'user']);
});

test.run();
