import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { geminiError as mapError } from '../../providers/google/errors.js';
import { geminiError } from '../support/mock-gemini.js';
import { shape } from '../support/harness.js';

const test = suite(`google error mapping (${shape})`);
const ctx = { provider: 'google', upstreamModel: 'gemini-9-flash', secrets: ['AIza-secret'] };

const rows: Array<[string, string, number, Record<string, unknown> | undefined]> = [
  ['google-rate-limit', 'upstream_unavailable', 502, { provider: 'google', rate_limited: true, retry_after_seconds: 35 }],
  ['google-api-key-invalid', 'provider_auth_failed', 502, { provider: 'google' }],
  ['google-permission-denied', 'provider_auth_failed', 502, { provider: 'google' }],
  ['google-context-length', 'context_length_exceeded', 400, undefined],
  ['google-model-not-found', 'provider_model_not_found', 502, { provider: 'google', model: 'gemini-9-flash' }],
  ['google-overloaded', 'upstream_unavailable', 502, { provider: 'google' }],
  ['google-missing-thought-signature', 'provider_rejected_request', 400, undefined],
];

for (const [name, code, status, details] of rows) {
  test(`${name} → ${code}`, () => {
    const f = geminiError(name);
    const e = mapError(f.status, f.headers ?? {}, JSON.stringify(f.body), ctx);
    assert.is(e.code, code);
    assert.is(e.status, status);
    assert.equal(e.details, details);
  });
}

test('the 429 wait: RetryInfo first, then "Please retry in …" in the message, at least 1', () => {
  const body = (message: string, details: unknown[] = []) => ({ error: { code: 429, message, status: 'RESOURCE_EXHAUSTED', details } });
  assert.is(mapError(429, {}, body('Please retry in 45.57s.'), ctx).details?.retry_after_seconds, 46);
  assert.is(mapError(429, {}, body('quota', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.2s' }]), ctx).details?.retry_after_seconds, 1);
  assert.is(mapError(429, {}, body('quota'), ctx).details?.retry_after_seconds, 1);
});

test('billing refusals, a missing signature explained, vendor text scrubbed of the key', () => {
  const billing = mapError(400, {}, { error: { code: 400, message: 'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.', status: 'FAILED_PRECONDITION' } }, ctx);
  assert.is(billing.code, 'provider_billing');
  const sig = mapError(400, {}, geminiError('google-missing-thought-signature').body, ctx);
  assert.match(sig.message, /tool_call id it returned, unchanged/);
  const odd = mapError(400, {}, { error: { code: 400, message: 'Invalid value AIza-secret', status: 'INVALID_ARGUMENT' } }, ctx);
  assert.is(odd.code, 'provider_rejected_request');
  assert.not.match(odd.message, /AIza-secret/);
  assert.is(mapError(500, {}, '<html>oops</html>', ctx).code, 'upstream_unavailable');
});

test.run();
