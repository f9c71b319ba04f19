import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ServerResponse } from 'node:http';
import { rateLimited, vendorUnavailable, upstreamUnavailable, type GatewayError, type ProviderAdapter, type UpstreamCall, type UpstreamFailureHints } from '../../kernel/index.js';
import anthropic from '../../providers/anthropic/index.js';
import google from '../../providers/google/index.js';
import { MockAnthropic, anthropicFixture } from '../support/mock-anthropic.js';
import { MockGemini, geminiError } from '../support/mock-gemini.js';
import { geminiError as mapGemini } from '../../providers/google/errors.js';
import { shape } from '../support/harness.js';
import { drain, rejectsWith, testCall, testModel } from './contract.js';

/** What kernel/upstream's NativeAdapter does for every native vendor: deadlines, skipped-event reports, retry hints. */
const test = suite(`native adapter deadlines and hints (${shape})`);
const key = 'sk-ant-native-1';
const model = testModel('claude-sonnet-4-5-20250929', 'anthropic');
const ctx = { provider: 'p', secrets: [] };
let mock: MockAnthropic;
const made: ProviderAdapter[] = [];
const adapter = (t = { connectMs: 1000, firstByteMs: 400, idleMs: 400 }) => {
  const a = anthropic.create({ name: 'anthropic', address: mock.url, apiKey: key, timeouts: t });
  made.push(a);
  return a;
};
/** A call with the per-call options the dispatcher may set (a model's deadlines, the skipped-event counter). */
const withOptions = (call: UpstreamCall, options: Pick<UpstreamCall, 'deadlines' | 'onMalformed'>): UpstreamCall => ({ ...call, ...options });

test.before.each(async () => {
  mock = await new MockAnthropic({ apiKey: key }).start();
});
test.after.each(async () => {
  await Promise.all(made.splice(0).map((a) => a.close()));
  await mock.stop();
});

test('a whole reply is bounded by totalMs (default firstByteMs), and a call may extend it', async () => {
  mock.enqueue({ delayMs: 700 });
  await rejectsWith(adapter().complete(testCall(model)), 'upstream_unavailable');
  mock.enqueue({ delayMs: 700, text: ['late but fine'] });
  const reply = await adapter().complete(withOptions(testCall(model), { deadlines: { totalMs: 3000 } }));
  assert.is(reply.choices[0]?.message.content, 'late but fine');
});

test('the first chunk is bounded by firstTokenMs: pings do not extend it; after it, pings re-arm idleMs', async () => {
  const events = anthropicFixture('anthropic-text.chunks.txt').split('\n\n');
  const pinging = (gapMs: number, pings: number) => ({
    raw: async (_q: unknown, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`${events[0]}\n\n`);
      for (let i = 0; i < pings; i++) {
        await new Promise((r) => setTimeout(r, gapMs));
        if (res.destroyed) return;
        res.write('event: ping\ndata: {"type":"ping"}\n\n');
      }
      res.end(`${events.slice(1).join('\n\n')}`);
    },
  });
  mock.enqueue(pinging(150, 6));
  const slow = await rejectsWith(adapter().stream(testCall(model, { stream: true })), 'upstream_unavailable');
  assert.is(slow.message, 'Provider anthropic did not answer in time.');
  mock.enqueue(pinging(150, 6));
  const { error } = await drain(await adapter().stream(withOptions(testCall(model, { stream: true }), { deadlines: { firstTokenMs: 3000 } })));
  assert.is(error, undefined);
});

test('each skipped unreadable event is reported through call.onMalformed', async () => {
  const events = anthropicFixture('anthropic-text.chunks.txt').split('\n\n');
  mock.enqueue({ raw: (_q, res) => void res.writeHead(200).end([...events.slice(0, 5), 'data: {"type":', ...events.slice(5, 7), 'data: [', ...events.slice(7)].join('\n\n')) });
  let skipped = 0;
  const { error } = await drain(await adapter().stream(withOptions(testCall(model, { stream: true }), { onMalformed: () => skipped++ })));
  assert.is(error, undefined);
  assert.is(skipped, 2);
});

test('retry hints: transport failures and 5xx are transient, a 404 endpoint is not; a rate limit carries its wait and headers', async () => {
  assert.is(upstreamUnavailable(ctx, 'reset').transient, true);
  assert.is(vendorUnavailable(ctx, 529).transient, true);
  assert.is(vendorUnavailable(ctx, 404).transient, false);
  const limited = rateLimited(ctx, 35);
  assert.equal([limited.transient, limited.retryAfterMs, limited.headers], [true, 35_000, { 'retry-after': '35', 'retry-after-ms': '35000' }]);
  const f = geminiError('google-rate-limit');
  const mapped = mapGemini(f.status, {}, f.body, ctx) as GatewayError & UpstreamFailureHints;
  assert.is(mapped.retryAfterMs, 35_000);
  assert.is(mapped.headers['retry-after'], '35');
  assert.is(mapGemini(409, {}, { error: { code: 409, message: 'aborted', status: 'ABORTED' } }, ctx).code, 'upstream_unavailable');
});

test('the Gemini adapter shares the same rules (a stream is bounded by firstTokenMs)', async () => {
  const gem = await new MockGemini().start();
  try {
    gem.enqueue({ raw: async (_q, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders() });
    const a = google.create({ name: 'google', address: gem.url, timeouts: { connectMs: 1000, firstByteMs: 300, idleMs: 300 } });
    made.push(a);
    await rejectsWith(a.stream(testCall(testModel('gemini-2.5-flash', 'google'), { stream: true })), 'upstream_unavailable');
  } finally {
    await gem.stop();
  }
});

test.run();
