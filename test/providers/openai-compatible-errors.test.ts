import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorTable, type ErrorCode, type ProviderAdapter } from '../../kernel/index.js';
import openaiCompatible from '../../providers/openai-compatible/index.js';
import { durationSeconds, retryAfterSeconds } from '../../providers/openai-compatible/errors.js';
import { MockUpstream, vendorError, type ErrorFixture } from '../support/mock-upstream.js';
import { shape } from '../support/harness.js';
import { rejectsWith, testCall, testModel } from './contract.js';

const test = suite(`openai-compatible error mapping (${shape})`);
const key = 'sk-canary-77d1e0a9c4';
const model = testModel('llama3:8b');
let mock: MockUpstream;
let adapter: ProviderAdapter;

test.before(async () => {
  mock = await new MockUpstream({ apiKey: key }).start();
  adapter = openaiCompatible.create({ name: 'local', address: mock.url, apiKey: key, timeouts: { connectMs: 1000, firstByteMs: 2000, idleMs: 1000 } });
});
test.after(async () => {
  await adapter.close();
  await mock.stop();
});

type Svc = Record<string, string | number | boolean | null> | undefined;
const provider = { provider: 'local' };
const unknownModel = { provider: 'local', model: 'llama3:8b' };

/** Recorded vendor body → spec code and `svc` detail fields. */
const table: Array<[fixture: string, code: ErrorCode, svc: Svc, param?: string | null]> = [
  ['openai-context-length', 'context_length_exceeded', undefined, 'messages'],
  ['openai-unsupported-parameter', 'provider_rejected_request', undefined, 'max_tokens'],
  ['openai-invalid-api-key', 'provider_auth_failed', provider],
  ['openai-rate-limit', 'upstream_unavailable', { provider: 'local', rate_limited: true, retry_after_seconds: 10 }],
  ['openai-insufficient-quota', 'provider_billing', provider],
  ['openai-model-not-found', 'provider_model_not_found', unknownModel],
  ['openai-content-filter', 'content_filter', undefined],
  ['openai-server-error', 'upstream_unavailable', provider],
  ['openai-overloaded', 'upstream_unavailable', provider],
  ['openai-invalid-url', 'upstream_unavailable', provider],
  ['vllm-context-length', 'context_length_exceeded', undefined, 'messages'],
  ['vllm-context-length-v1', 'context_length_exceeded', undefined, 'messages'],
  ['vllm-model-not-found', 'provider_model_not_found', unknownModel],
  ['vllm-tool-choice', 'provider_rejected_request', undefined, null],
  ['llamacpp-context-size', 'context_length_exceeded', undefined, 'messages'],
  ['llamacpp-context-size-500', 'context_length_exceeded', undefined, 'messages'],
  ['llamacpp-loading-model', 'upstream_unavailable', provider],
  ['ollama-model-not-found', 'provider_model_not_found', unknownModel],
  ['ollama-native-model-not-found', 'provider_model_not_found', unknownModel],
  ['ollama-context', 'context_length_exceeded', undefined, 'messages'],
  ['openrouter-insufficient-credits', 'provider_billing', provider],
];

async function both(e: ErrorFixture, code: ErrorCode): Promise<Array<Awaited<ReturnType<typeof rejectsWith>>>> {
  mock.enqueue({ error: e });
  const whole = await rejectsWith(adapter.complete(testCall(model)), code);
  mock.enqueue({ error: e });
  const streamed = await rejectsWith(adapter.stream(testCall(model, { stream: true })), code);
  return [whole, streamed];
}

for (const [fixture, code, svc, param] of table) {
  test(`${fixture} (${vendorError(fixture).status}) → ${code}`, async () => {
    for (const err of await both(vendorError(fixture), code)) {
      assert.is(err.status, errorTable[code].status);
      assert.equal(err.details, svc);
      if (param !== undefined) assert.is(err.param, param);
      assert.not.match(err.message, String(mock.port));
      assert.not.match(err.message, key);
      assert.match(err.message, /provider local/i);
    }
  });
}

test('bare statuses without a known body: 401/403 auth, 402 billing (never a 402), 422 rejected, 5xx unavailable', async () => {
  const cases: Array<[number, string, ErrorCode]> = [
    [401, 'Unauthorized', 'provider_auth_failed'],
    [403, '<html>Forbidden</html>', 'provider_auth_failed'],
    [402, 'Payment Required', 'provider_billing'],
    [422, '{"detail":[{"loc":["body","messages"],"msg":"field required"}]}', 'provider_rejected_request'],
    [400, 'bad request', 'provider_rejected_request'],
    [502, '<html>Bad Gateway</html>', 'upstream_unavailable'],
    [429, '{"error":{"message":"Too many requests"}}', 'upstream_unavailable'],
  ];
  for (const [status, body, code] of cases) {
    const [err] = await both({ status, body }, code);
    assert.is(err!.status, errorTable[code].status, `${status}`);
  }
});

test('429 retry_after_seconds: retry-after-ms, Retry-After seconds and date, x-ratelimit-reset, message hint, default 1', async () => {
  const body = { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } };
  const cases: Array<[Record<string, string>, number]> = [
    [{ 'retry-after-ms': '1500' }, 2],
    [{ 'retry-after': '7' }, 7],
    [{ 'x-ratelimit-reset': '30' }, 30],
    [{}, 1],
  ];
  for (const [headers, seconds] of cases) {
    const [err] = await both({ status: 429, headers, body }, 'upstream_unavailable');
    assert.equal(err!.details, { provider: 'local', rate_limited: true, retry_after_seconds: seconds }, JSON.stringify(headers));
  }
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.is(retryAfterSeconds({ 'retry-after': 'Wed, 01 Jan 2025 00:00:12 GMT' }, '', now), 12);
  assert.is(retryAfterSeconds({ 'x-ratelimit-reset-requests': '1m30.5s' }), 91);
  assert.is(retryAfterSeconds({}, 'Please try again in 16.062s. Visit …'), 17);
  assert.is(retryAfterSeconds({}, 'Please try again in 174ms.'), 1);
  assert.is(durationSeconds('6m0s'), 360);
  assert.is(durationSeconds('20ms'), 0.02);
  assert.is(durationSeconds('soon'), undefined);
});

test('vendor text that echoes the address or key is scrubbed before it reaches a message', async () => {
  const body = { error: { message: `bad option sent to ${mock.url} with ${key}`, type: 'invalid_request_error', param: 'top_p' } };
  const [err] = await both({ status: 400, body }, 'provider_rejected_request');
  assert.is(err!.message, 'Provider local refused the request: bad option sent to [redacted] with [redacted]');
  assert.is(err!.param, 'top_p');
});

test('an error answered with HTTP 200 (LM Studio style) is still an error', async () => {
  mock.enqueue({ raw: (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":"Unexpected endpoint or method. (POST /v1/chat/completions)"}') });
  await rejectsWith(adapter.complete(testCall(model)), 'upstream_unavailable');
  mock.enqueue({ raw: (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('not json') });
  await rejectsWith(adapter.complete(testCall(model)), 'upstream_unavailable');
});

test.run();
