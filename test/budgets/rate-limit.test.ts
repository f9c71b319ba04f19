import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { apiError, budgetPlugins, client, newKey, provision, startInstance } from './support.js';

/**
 * THE RATE-LIMIT TEST (issue #5): several keys of one person in two workspaces, through two
 * instances sharing the cache (one in the embedded shape), a burst far over the allowance: exactly
 * the allowance reaches the provider, the rest get 429 with Retry-After, retry-after-ms and
 * svc.retry_after_seconds. Free and priced models share the allowance.
 */
const test = suite('rate-limit: one allowance per person, across keys, workspaces and replicas');

const allowance = 20;
const windowSeconds = 10;

/** A fixed window: start the burst well inside one, so it cannot straddle two. */
async function awayFromWindowEdge(seconds = windowSeconds): Promise<void> {
  const into = Date.now() % (seconds * 1000);
  if (into > seconds * 1000 - 5000) await new Promise((r) => setTimeout(r, seconds * 1000 - into + 50));
}

test('a burst of 120: exactly the allowance is started, the rest get 429 with correct retry headers', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const opts = { rateLimit: { requests: allowance, windowSeconds } };
  const a = await startInstance(backing, opts);
  const b = shape === 'scale-out' ? await startInstance(backing, opts) : a;
  try {
    await provision(a.admin, mock, { priced: { input: '1.00', output: '2.00' }, free: { input: '0', output: '0' } });
    const ws1 = await a.admin.workspace();
    const ws2 = await a.admin.workspace();
    const keys = [await newKey(a.admin, ws1), await newKey(a.admin, ws1), await newKey(a.admin, ws2)];
    const clients = [a, b].flatMap((inst) => keys.map((k) => client(inst, k.value)));
    // budgets' hold hook runs first and takes the rate line into its single reservation.
    assert.equal(a.service.pipeline.describe().hold, ['budgets', 'rate-limit']);
    assert.equal(a.service.pipeline.describe().admit, ['rate-limit']);
    await awayFromWindowEdge();
    const sentBefore = mock.requests.length;
    const results = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const c = clients[i % clients.length]!;
        try {
          const r = await c.chat.completions.create({ model: i % 2 ? 'mock:free' : 'mock:priced', messages: [{ role: 'user', content: `hi ${i}` }], max_tokens: 20 }).withResponse();
          return { status: r.response.status };
        } catch (err) {
          const e = apiError(err);
          return { status: e.status, code: e.code, svc: e.svc, retryAfter: e.headers.get('retry-after'), retryAfterMs: e.headers.get('retry-after-ms') };
        }
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    assert.is(ok.length, allowance);
    assert.is(limited.length, 120 - allowance);
    assert.is(mock.requests.length - sentBefore, allowance, 'only the allowance reached the provider');
    for (const r of limited) {
      assert.is(r.code, 'rate_limited');
      const seconds = Number(r.retryAfter);
      const ms = Number(r.retryAfterMs);
      assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= windowSeconds, `Retry-After ${r.retryAfter}`);
      assert.ok(Number.isInteger(ms) && ms >= 1 && ms <= windowSeconds * 1000, `retry-after-ms ${r.retryAfterMs}`);
      assert.is(seconds, Math.ceil(ms / 1000));
      assert.equal(r.svc, { retry_after_seconds: seconds });
    }
    // After the window the person may start requests again.
    const wait = Math.max(...limited.map((r) => Number(r.retryAfterMs)));
    await new Promise((r) => setTimeout(r, wait + 50));
    const again = await clients[1]!.chat.completions.create({ model: 'mock:free', messages: [{ role: 'user', content: 'again' }], max_tokens: 20 }).withResponse();
    assert.is(again.response.status, 200);
  } finally {
    if (b !== a) await b.stop();
    await a.stop();
    await mock.stop();
    await backing.drop();
  }
});

test('the 429 body has type rate_limit_error and the request id', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const a = await startInstance(backing, { rateLimit: { requests: 1, windowSeconds: 60 } });
  try {
    await provision(a.admin, mock, { free: { input: '0', output: '0' } });
    const key = await newKey(a.admin, await a.admin.workspace());
    await awayFromWindowEdge(60);
    const body = JSON.stringify({ model: 'mock:free', messages: [{ role: 'user', content: 'hi' }] });
    const headers = { authorization: `Bearer ${key.value}`, 'content-type': 'application/json' };
    assert.is((await fetch(`${a.url}/v1/chat/completions`, { method: 'POST', headers, body })).status, 200);
    const res = await fetch(`${a.url}/v1/chat/completions`, { method: 'POST', headers, body });
    assert.is(res.status, 429);
    assert.ok(res.headers.get('x-svc-request-id'));
    const err = ((await res.json()) as { error: Record<string, unknown> }).error;
    assert.is(err.type, 'rate_limit_error');
    assert.is(err.code, 'rate_limited');
    assert.is(err.param, null);
    assert.is((err.svc as { retry_after_seconds: number }).retry_after_seconds, Number(res.headers.get('retry-after')));
  } finally {
    await a.stop();
    await mock.stop();
    await backing.drop();
  }
});

test('with budgets disabled the rate limit reserves its own line in the hold phase', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const plugins = budgetPlugins({}, { requests: 2, windowSeconds: 60 });
  plugins.budgets = { enabled: false };
  const a = await startInstance(backing, { plugins });
  try {
    assert.equal(a.service.pipeline.describe().hold, ['rate-limit']);
    await provision(a.admin, mock, { priced: { input: '1.00', output: '2.00' } });
    const c = client(a, (await newKey(a.admin, await a.admin.workspace())).value);
    await awayFromWindowEdge(60);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    await ask();
    await ask();
    const e = await ask().then(() => assert.unreachable('over the allowance'), apiError);
    assert.is(e!.status, 429);
    assert.is(e!.svc!.retry_after_seconds, Number(e!.headers.get('retry-after')));
  } finally {
    await a.stop();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
