import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { anthropicError as mapError } from '../../providers/anthropic/errors.js';
import { anthropicError } from '../support/mock-anthropic.js';
import { shape } from '../support/harness.js';

const test = suite(`anthropic error mapping (${shape})`);
const ctx = { provider: 'anthropic', upstreamModel: 'claude-3-opus-20240229', secrets: ['sk-ant-secret'] };

const rows: Array<[string, string, number, Record<string, unknown> | undefined]> = [
  ['anthropic-overloaded', 'upstream_unavailable', 502, { provider: 'anthropic' }],
  ['anthropic-rate-limit', 'upstream_unavailable', 502, { provider: 'anthropic', rate_limited: true, retry_after_seconds: 60 }],
  ['anthropic-prompt-too-long', 'context_length_exceeded', 400, undefined],
  ['anthropic-credit-balance', 'provider_billing', 502, { provider: 'anthropic' }],
  ['anthropic-invalid-key', 'provider_auth_failed', 502, { provider: 'anthropic' }],
  ['anthropic-model-not-found', 'provider_model_not_found', 502, { provider: 'anthropic', model: 'claude-3-opus-20240229' }],
  ['anthropic-temperature-deprecated', 'provider_rejected_request', 400, undefined],
];

for (const [name, code, status, details] of rows) {
  test(`${name} → ${code}`, () => {
    const f = anthropicError(name);
    const e = mapError(f.status, f.headers ?? {}, JSON.stringify(f.body), ctx);
    assert.is(e.code, code);
    assert.is(e.status, status);
    assert.equal(e.details, details);
    assert.not.match(e.message, /sk-ant-secret/);
  });
}

test('context overflow names the messages param; vendor text is scrubbed of the key', () => {
  const e = mapError(400, {}, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 9 tokens > 8 maximum (key sk-ant-secret)' } }, ctx);
  assert.is(e.param, 'messages');
  assert.match(e.message, /\[redacted\]/);
});

test('a 429 without retry-after reads the wait from the message, else 1', () => {
  const body = { type: 'error', error: { type: 'rate_limit_error', message: 'Please try again in 12s.' } };
  assert.is(mapError(429, {}, body, ctx).details?.retry_after_seconds, 12);
  assert.is(mapError(429, {}, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, ctx).details?.retry_after_seconds, 1);
  assert.is(mapError(500, {}, 'upstream connect error', ctx).code, 'upstream_unavailable');
});

test.run();
