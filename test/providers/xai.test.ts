import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import xai from '../../providers/xai/index.js';
import { xaiCheckRefused, xaiError } from '../../providers/xai/errors.js';
import { shape } from '../support/harness.js';
import { vendorErrorFixture, vendorFailure, vendorReply, vendorStream } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { drain, testCall, testModel } from './contract.js';
import { collect, pixel, refused, vendorAdapterSuite, vendorE2E, weatherTool } from './vendor-suite.js';

const unit = suite(`xai vendor adapter (${shape})`);
const h = vendorAdapterSuite(unit, { factory: xai, authError: 'xai-invalid-api-key', contextError: { vendor: 'deepseek', name: 'deepseek-context-length' } });
const ctx = { provider: 'xai', upstreamModel: 'grok-4-fast', secrets: [] };
const m = testModel('grok-4-fast', 'xai');

unit('whole reply: reasoning tokens (outside completion_tokens at xAI) are added to completion_tokens', async () => {
  h.mock().enqueue(vendorReply('xai', 'xai-text.json'));
  const reply = await h.adapter().complete(testCall(m));
  assert.is(reply.choices[0]?.message.content, 'Olá!');
  assert.equal(reply.usage, { prompt_tokens: 165, completion_tokens: 127, total_tokens: 292, prompt_tokens_details: { cached_tokens: 156 }, completion_tokens_details: { reasoning_tokens: 125 } });
});

unit('stream: the usage chunk gets the same fix; a usage that already includes reasoning is left alone', async () => {
  h.mock().enqueue(vendorStream('xai', 'xai-text.chunks.txt'));
  const { chunks, error } = await drain(await h.adapter().stream(testCall(m, { stream: true })));
  assert.is(error, undefined);
  assert.equal(chunks.at(-1)?.usage?.completion_tokens, 131);
  assert.equal(chunks.at(-1)?.usage?.total_tokens, 296);
  h.mock().enqueue({ reply: { content: 'x', usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } } });
  const plain = await h.adapter().complete(testCall(m));
  assert.is(plain.usage?.completion_tokens, 20);
});

unit('errors: the 400 {code, error} for a wrong key is provider_auth_failed, and key_refused for the check; 429 with a bare string body is a rate limit', () => {
  const bad = vendorErrorFixture('xai', 'xai-invalid-api-key');
  assert.is(xaiError(bad.status, {}, JSON.stringify(bad.body), ctx).code, 'provider_auth_failed');
  assert.is(xaiCheckRefused(400, JSON.stringify(bad.body)), true);
  assert.is(xaiCheckRefused(400, '{"error":"some other argument"}'), false);
  const rate = vendorErrorFixture('xai', 'xai-rate-limit');
  const r = xaiError(rate.status, {}, rate.body, ctx);
  assert.is(r.code, 'upstream_unavailable');
  assert.is((r.details as { rate_limited?: boolean }).rate_limited, true);
});

unit('check: a wrong key at GET /models (400 from xAI) is key_refused', async () => {
  h.mock().enqueue(vendorFailure('xai', 'xai-invalid-api-key'), 'models');
  assert.is(await h.adapter().check(AbortSignal.timeout(5000)), 'key_refused');
});
unit.run();

const { test: e2e, w: world } = vendorE2E('xai', `xai built-in end to end (${shape})`);
const model = 'xai:grok-2-vision';

e2e('whole reply: the recorded body through svc, completion counts reasoning', async () => {
  world().mock.enqueue(vendorReply('xai', 'xai-text.json'));
  const reply = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi in Portuguese' }], max_tokens: 300 });
  assertSchema('CreateChatCompletionResponse', reply);
  assert.is(reply.usage?.completion_tokens, 127);
});

e2e('stream with tools and an image: the recorded tool-call stream, then usage', async () => {
  world().mock.enqueue(vendorStream('xai', 'xai-tool.chunks.txt'));
  const stream = await world().client.chat.completions.create({
    model, tools: [weatherTool], stream: true, stream_options: { include_usage: true }, max_tokens: 300,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Florence?' }, { type: 'image_url', image_url: { url: pixel } }] }],
  });
  const { chunks, error } = await collect(stream);
  assert.is(error, undefined);
  const call = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])[0];
  assert.is(call?.function?.name, 'weather');
  assert.is(chunks.at(-1)?.usage?.completion_tokens, 26 + 235);
  assert.equal(world().mock.requests.at(-1)!.body.messages[0].content[1], { type: 'image_url', image_url: { url: pixel } });
});

e2e('errors: a wrong key (400 at xAI) → 502 provider_auth_failed; 429 → 502 upstream_unavailable', async () => {
  const ask = () => world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
  world().mock.enqueue(vendorFailure('xai', 'xai-invalid-api-key'));
  await refused(ask(), 502, 'provider_auth_failed');
  world().mock.enqueue(vendorFailure('xai', 'xai-rate-limit'));
  await refused(ask(), 502, 'upstream_unavailable');
});

e2e('a stream cut mid-way ends with an error event', async () => {
  world().mock.enqueue(vendorStream('xai', 'xai-text.chunks.txt', { cutAfter: 2 }));
  const stream = await world().client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 });
  const { chunks, error } = await collect(stream);
  assert.ok(chunks.length >= 1);
  assert.match(String((error as Error | undefined)?.message), /broke off/);
});

e2e.run();
