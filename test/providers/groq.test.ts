import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import groq from '../../providers/groq/index.js';
import { groqError } from '../../providers/groq/errors.js';
import { shape } from '../support/harness.js';
import { vendorErrorFixture, vendorFailure, vendorFixture, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { drain, testCall, testModel } from './contract.js';
import { assertUsageChunk, collect, pixel, refused, vendorAdapterSuite, vendorE2E, weatherTool } from './vendor-suite.js';

const unit = suite(`groq vendor adapter (${shape})`);
const h = vendorAdapterSuite(unit, { factory: groq, authError: 'groq-invalid-api-key', contextError: { vendor: 'deepseek', name: 'deepseek-context-length' } });
const ctx = { provider: 'groq', upstreamModel: 'llama-3.3-70b-versatile', secrets: [] };

unit('stream: the recorded stream with x_groq; usage read from x_groq.usage when the standard field is missing', async () => {
  h.mock().enqueue(vendorStream('groq', 'groq-text.chunks.txt'));
  const { chunks, text, error } = await drain(await h.adapter().stream(testCall(testModel('moonshotai/kimi-k2-instruct-0905', 'groq'), { stream: true })));
  assert.is(error, undefined);
  assert.is(text, 'Olá!');
  assert.equal(chunks.at(-1)?.usage, { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
  // The same stream as older Groq deployments sent it: usage only inside x_groq.
  const older = vendorFixture('groq', 'groq-text.chunks.txt')
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)) as Record<string, any>)
    .filter((j) => j.choices.length > 0)
    .map((j) => {
      delete j.usage;
      return `data: ${JSON.stringify(j)}\n\n`;
    });
  assert.ok(older.some((e) => e.includes('"x_groq":{"id"') && e.includes('"usage"')));
  h.mock().enqueue({ raw: (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${older.join('')}data: [DONE]\n\n`) });
  const old = await drain(await h.adapter().stream(testCall(testModel('moonshotai/kimi-k2-instruct-0905', 'groq'), { stream: true })));
  assert.is(old.error, undefined);
  assert.equal(old.chunks.find((c) => c.usage)?.usage, { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
});

unit('errors: 413 rate_limit_exceeded is upstream_unavailable without rate_limited; 429 waits as the message says', () => {
  const big = vendorErrorFixture('groq', 'groq-request-too-large');
  const e = groqError(big.status, {}, JSON.stringify(big.body), ctx);
  assert.is(e.code, 'upstream_unavailable');
  assert.equal(e.details, { provider: 'groq' });
  const rate = vendorErrorFixture('groq', 'groq-rate-limit');
  const r = groqError(rate.status, {}, JSON.stringify(rate.body), ctx);
  assert.is(r.code, 'upstream_unavailable');
  assert.equal(r.details, { provider: 'groq', rate_limited: true, retry_after_seconds: 7 });
});
unit.run();

const { test: e2e, w: world } = vendorE2E('groq', `groq built-in end to end (${shape})`);
const model = 'groq:meta-llama/llama-4-scout-17b-16e-instruct';

e2e('whole reply: the recorded Groq body through svc (x_groq and timing fields dropped)', async () => {
  world().mock.enqueue(vendorReply('groq', 'groq-text.json'));
  const reply = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi in Portuguese' }], max_tokens: 100 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.model, model);
  assert.is('x_groq' in reply, false);
  assert.is(world().mock.requests.at(-1)!.body.model, 'meta-llama/llama-4-scout-17b-16e-instruct');
});

e2e('stream: usage is reported once, in the usage chunk (Groq also puts it on its finish chunk, inside and outside x_groq)', async () => {
  world().mock.enqueue(vendorStream('groq', 'groq-text.chunks.txt'));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi in Portuguese' }], stream: true, stream_options: { include_usage: true }, max_tokens: 50 });
  const { chunks, text, error } = await collect(stream);
  assert.is(error, undefined);
  assert.is(text, 'Olá!');
  assertUsageChunk(chunks, { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
});

e2e('stream with tools and an image: the recorded tool-call stream, then usage', async () => {
  world().mock.enqueue(vendorStream('groq', 'groq-tool.chunks.txt'));
  const stream = await world().client.chat.completions.create({
    model, tools: [weatherTool], stream: true, stream_options: { include_usage: true }, max_tokens: 200,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Florence?' }, { type: 'image_url', image_url: { url: pixel } }] }],
  });
  const { chunks, error } = await collect(stream);
  assert.is(error, undefined);
  assert.ok(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).some((t) => t.function?.name === 'weather'));
  assert.ok(chunks.at(-1)?.usage);
  assert.equal(world().mock.requests.at(-1)!.body.messages[0].content[1], { type: 'image_url', image_url: { url: pixel } });
});

e2e('errors: 413 → 502 upstream_unavailable; 429 → 502 upstream_unavailable with rate_limited and the wait', async () => {
  const ask = () => world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('groq', 'groq-request-too-large'));
  const big = await refused(ask(), 502, 'upstream_unavailable');
  assert.equal((big.error as { svc?: unknown }).svc, { provider: 'groq' });
  world().mock.enqueue(vendorFailure('groq', 'groq-rate-limit'));
  const rate = await refused(ask(), 502, 'upstream_unavailable');
  assert.equal((rate.error as { svc?: unknown }).svc, { provider: 'groq', rate_limited: true, retry_after_seconds: 7 });
});

e2e('a stream cut mid-way ends with an error event', async () => {
  world().mock.enqueue(vendorStream('groq', 'groq-text.chunks.txt', { cutAfter: 3 }));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { text, error } = await collect(stream);
  assert.is(text, 'Olá');
  assert.match(String((error as Error | undefined)?.message), /broke off/);
});

e2e.run();
