import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { counterKey } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, cacheOf, charged, client, eventually, newKey, provision, startInstance, total, type Instance } from './support.js';

/**
 * Issue 9 item 2, last part: re-seeding a counter the cache lost never produces less than what was
 * charged. The replica that re-seeds knows nothing of the other's charges (its totals refresh is
 * ten minutes away), and another request's hold is in flight while the counter is gone; the seed
 * must come from the database and the live holds, so counter, running total and usage records
 * agree afterwards and the room left is the real one. Embedded: one instance, the same loss.
 */
const test = suite('budgets: a lost counter is re-seeded from fresh totals and live holds');

const CAP = 40_000;
const stale = { totalsRefreshMs: 600_000, flushIntervalMs: 50 };
const ask = { model: 'mock:priced', messages: [{ role: 'user' as const, content: 'hello there' }], max_tokens: 100 };

test('counter deleted mid-traffic: re-seeded to totals + holds, then counter == total == records', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  mock.defaultBehaviour = { reply: { content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 100 } } };
  const started: Instance[] = [];
  try {
    const a = await startInstance(backing, { budgets: stale });
    started.push(a);
    await provision(a.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    await a.admin.ok('POST', '/budget-caps', { amount_micro_usd: CAP, period: 'month' });
    const key = (await newKey(a.admin, await a.admin.workspace())).value;
    const b = shape === 'scale-out' ? await startInstance(backing, { budgets: stale }) : a;
    if (b !== a) started.push(b);
    const month = `instance:*:month:${periodKey('month', Date.now())}`;

    // The other replica charges ten replies (a knows none of them: no refresh until minutes from now).
    for (let i = 0; i < 10; i++) await client(b, key).chat.completions.create(ask);
    await eventually(b, async () => assert.is(await total(b, month), 8100));

    // A stream holds its amount while the cache loses the counter.
    mock.enqueue({ chunks: ['a ', 'b ', 'c ', 'd'], gapMs: 300, usage: { prompt_tokens: 5, completion_tokens: 100 } });
    const stream = await client(b, key).chat.completions.create({ ...ask, stream: true });
    const reading = stream[Symbol.asyncIterator]();
    await reading.next();
    await cacheOf(a).del(counterKey(month));

    // a's next request finds the counter missing and seeds it: 8,100 charged + the stream's hold.
    await client(a, key).chat.completions.create(ask);
    while (!(await reading.next()).done);

    await eventually(a, async () => {
      await b.flush();
      const spent = await charged(a);
      assert.is(spent, 8100 + 810 + 810, 'twelve replies of 810 µUSD');
      assert.is(await total(a, month), spent, 'running total == usage records');
      assert.is(Number(await cacheOf(a).get(counterKey(month))), spent, 'counter == running total (nothing in flight)');
    });

    // The request path sees the real room: a hold larger than it is refused, naming it.
    const e = await client(a, key)
      .chat.completions.create({ ...ask, max_tokens: 4000 })
      .then(() => null, (err: unknown) => apiError(err));
    assert.equal([e?.status, e?.code, e?.svc?.remaining_micro_usd], [402, 'budget_exceeded', CAP - 9720]);
  } finally {
    for (const i of started.reverse()) await i.stop();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
