import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GatewayError } from '../../kernel/index.js';
import { Cooldown } from '../../plugins/chat-api/cooldown.js';
import { backoffMs, isTransient, pause, requestedWaitMs } from '../../plugins/chat-api/retry-policy.js';

/** The pure parts of the attempt loop: cool-down states, backoff bounds, retry hints. */
const test = suite('chat: retry policy and cool-down');

test('cool-down: three transient failures cool a model; one probe at a time after it; success restores it', () => {
  let now = 1000;
  const c = new Cooldown(3, 500, () => now);
  c.failed('m');
  c.failed('m');
  assert.is(c.admit('m'), 'use');
  c.failed('m');
  assert.is(c.admit('m'), 'skip');
  now += 500;
  assert.is(c.admit('m'), 'probe');
  assert.is(c.admit('m'), 'skip', 'a single probe');
  c.failed('m');
  assert.is(c.admit('m'), 'skip', 'a failed probe cools it again');
  now += 500;
  assert.is(c.admit('m'), 'probe');
  c.released('m');
  assert.is(c.admit('m'), 'probe', 'a probe that told nothing lets the next request probe');
  c.succeeded('m');
  assert.is(c.admit('m'), 'use');
  assert.not.ok(c.cooling('m'));
});

test('backoff: full jitter within base·2^(n-1), capped', () => {
  const cfg = { backoffMs: 100, maxBackoffMs: 350 };
  assert.is(backoffMs(1, cfg, () => 1), 100);
  assert.is(backoffMs(2, cfg, () => 1), 200);
  assert.is(backoffMs(3, cfg, () => 1), 350);
  assert.is(backoffMs(3, cfg, () => 0), 0);
});

test('retry hints: the adapter decides; without hints upstream_unavailable is transient', () => {
  const plain = new GatewayError('upstream_unavailable', 'x', { details: { provider: 'p', retry_after_seconds: 7 } });
  assert.ok(isTransient(plain));
  assert.is(requestedWaitMs(plain), 7000);
  const hinted = Object.assign(new GatewayError('upstream_unavailable', 'x'), { transient: false, retryAfterMs: 1500 });
  assert.not.ok(isTransient(hinted));
  assert.is(requestedWaitMs(hinted), 1500);
  assert.not.ok(isTransient(new GatewayError('content_filter', 'x')));
});

test('pause ends early when the signal aborts', async () => {
  const ac = new AbortController();
  const started = performance.now();
  setTimeout(() => ac.abort(), 20);
  await pause(5000, ac.signal);
  assert.ok(performance.now() - started < 2000);
});

test.run();
