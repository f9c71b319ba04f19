import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, redisUrl, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { counterKey } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, cacheOf, charged, client, newKey, provision, startInstance, total } from './support.js';

/**
 * Fail closed (issue #5): with Redis cut mid-run, model requests get 503 budget_unavailable and
 * nothing reaches the provider; a reply in flight is settled once Redis is back, and requests are
 * served again on their own. Runs in both shapes: the embedded shape uses Redis for this test too.
 */
const test = suite('budgets: fail closed when the cache is away');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('Redis cut: 503 budget_unavailable, never served unmetered; recovers by itself', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const proxy = new TcpProxy(Number(new URL(redisUrl).port || 6379), new URL(redisUrl).hostname);
  await proxy.start();
  const svc = await startInstance(backing, { cache: { url: `redis://127.0.0.1:${proxy.port}`, prefix: backing.redisPrefix } });
  let cut = false;
  try {
    await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' }, free: { input: '0', output: '0' } });
    const ws = await svc.admin.workspace();
    const key = await newKey(svc.admin, ws);
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 10_000_000, period: 'month' });
    const c = client(svc, key.value);
    const ask = (model: string) => c.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 });
    assert.is((await ask('mock:priced').withResponse()).response.status, 200);

    // A streamed reply in flight while Redis goes away: it finishes; its settle lands later.
    mock.enqueue({ chunks: ['one ', 'two ', 'three ', 'four'], gapMs: 150 });
    const inFlight = (async () => {
      const stream = await c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'stream' }], max_tokens: 50, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    })();
    await sleep(100);
    await proxy.cut();
    cut = true;
    const before = mock.requests.length;
    for (const model of ['mock:priced', 'mock:free']) {
      const e = await ask(model).then(
        () => ({ status: 200, code: 'served without metering' }),
        (err: unknown) => apiError(err),
      );
      assert.is(e.status, 503);
      assert.is(e.code, 'budget_unavailable');
    }
    assert.is(mock.requests.length, before, 'nothing reached the provider');
    assert.is(await inFlight, 'one two three four');
    await sleep(300);
    await proxy.restore();
    cut = false;

    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await ask('mock:priced').then((r) => (r ? 200 : 0), (err) => apiError(err).status);
      if (status !== 200) await sleep(100);
    }
    assert.is(status, 200, 'served again once Redis is back');

    // The in-flight reply's settle was retried: the shared counter equals the settled total again.
    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    let counter = -1;
    for (let i = 0; i < 60; i++) {
      await svc.flush();
      counter = Number(await cacheOf(svc).get(counterKey(month)));
      if (counter === (await total(svc, month))) break;
      await sleep(100);
    }
    assert.is(counter, await charged(svc));
    assert.is(await total(svc, month), await charged(svc));
  } finally {
    if (cut) await proxy.restore();
    await svc.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
});

test('database unreachable (scale-out): 503 budget_unavailable until it answers again', async () => {
  if (shape !== 'scale-out') return; // the embedded database is a file in this process: it cannot go away alone
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const db = new URL(backing.databaseUrl!);
  const proxy = new TcpProxy(Number(db.port || 5432), db.hostname);
  await proxy.start();
  db.host = `127.0.0.1:${proxy.port}`;
  const svc = await startInstance({ ...backing, databaseUrl: db.toString() }, { budgets: { totalsRefreshMs: 100 } });
  let cut = false;
  try {
    await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    const c = client(svc, (await newKey(svc.admin, await svc.admin.workspace())).value);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }).then(() => 200, (err: unknown) => apiError(err));
    assert.is(await ask(), 200);
    await proxy.cut();
    cut = true;
    await sleep(1500);
    const before = mock.requests.length;
    const e = await ask();
    assert.equal(typeof e === 'number' ? e : [e.status, e.code], [503, 'budget_unavailable']);
    assert.is(mock.requests.length, before);
    await proxy.restore();
    cut = false;
    let status: unknown = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleep(100);
      status = await ask();
    }
    assert.is(status, 200);
  } finally {
    if (cut) await proxy.restore();
    await svc.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
