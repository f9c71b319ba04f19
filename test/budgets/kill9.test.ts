import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { startReplica, type ChildReplica } from '../support/child-replica.js';
import { counterKey, holdsSet } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, budgetPlugins, cacheOf, charged, client, newKey, provision, startInstance, total, type Instance } from './support.js';

/**
 * Issue 9 item 2: kill -9 loses no charged spend. Replicas run as child processes and are killed
 * with SIGKILL right after their requests finish, a moment later, and with streams still running;
 * then another replica starts (embedded: on the same SQLite folder). Usage records, running
 * totals and the cache counters must agree, and no cap is exceeded.
 */
const test = suite('budgets: kill -9 of a replica loses no charged spend');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CAP = 30_000;
const budgets = { holdExpirySeconds: 1, reaperIntervalMs: 200 };

/** Whole replies, concurrently; the request ids of those served. */
async function replies(r: ChildReplica, key: string, n: number): Promise<string[]> {
  const c = client(r, key);
  const res = await Promise.all(
    Array.from({ length: n }, () =>
      c.chat.completions
        .create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 })
        .withResponse()
        .then(({ response }) => response.headers.get('x-svc-request-id'), (err: unknown) => (apiError(err).status === 402 ? null : Promise.reject(err))),
    ),
  );
  return res.filter((id): id is string => id !== null);
}

test('killed after requests, a moment later, and mid-stream: records, totals and counters agree; the cap holds', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  mock.defaultBehaviour = { reply: { content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 100 } } };
  const children: ChildReplica[] = [];
  let check: Instance | undefined;
  try {
    // Provision with an in-process instance, then leave the backing to the child replicas.
    const setup = await startInstance(backing);
    await provision(setup.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    await setup.admin.ok('POST', '/budget-caps', { amount_micro_usd: CAP, period: 'month' });
    const key = (await newKey(setup.admin, await setup.admin.workspace())).value;
    await setup.stop();
    // The default write intervals (1 s), as in production: the old write-behind lost what was not yet written.
    const config = { plugins: budgetPlugins({ ...budgets, flushIntervalMs: 1000 }, {}, { flushIntervalMs: 1000 }) };

    // 1. SIGKILL the moment the last reply arrived.
    let r = await startReplica(backing, config);
    children.push(r);
    await replies(r, key, 12);
    await r.kill9();

    // 2. SIGKILL 300 ms after the replies: every served request must have been recorded.
    r = await startReplica(backing, config);
    children.push(r);
    const served = await replies(r, key, 12);
    await sleep(300);
    await r.kill9();

    // 3. SIGKILL with streams running: their holds are abandoned (reaped), nothing charged twice.
    r = await startReplica(backing, config);
    children.push(r);
    const c = client(r, key);
    for (let i = 0; i < 6; i++) mock.enqueue({ chunks: ['a ', 'b ', 'c ', 'd ', 'e ', 'f'], gapMs: 400, usage: { prompt_tokens: 5, completion_tokens: 100 } });
    const streams = Array.from({ length: 6 }, async () => {
      const s = await c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'stream' }], max_tokens: 100, stream: true });
      await s[Symbol.asyncIterator]().next(); // the first chunk arrived; the stream stays open
    });
    await Promise.all(streams);
    await r.kill9();

    // Another replica (in process, to read its cache) reaps what the dead ones left.
    await sleep(budgets.holdExpirySeconds * 1000 + 300);
    check = await startInstance(backing, { budgets });
    for (let i = 0; i < 20 && (await check.reap()) > 0; i++);
    assert.is(await check.reap(), 0);
    if (shape === 'scale-out') assert.equal(await cacheOf(check).expired(holdsSet, Infinity, 10), [], 'no hold left behind');

    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    const spent = await charged(check);
    const totalNow = await total(check, month);
    assert.ok(spent > 0);
    assert.is(totalNow, spent, 'running total == sum of usage records');
    for (const id of served) {
      const rows = await check.sql('select id from usage_records where id = ? and cost_micro_usd > 0', [id]);
      assert.is(rows.length, 1, `served request ${id} was recorded and charged`);
    }
    // A served request's trace is committed with its usage record: every record kept has its span.
    const orphans = await check.sql("select u.id from usage_records u where u.cost_micro_usd > 0 and not exists (select 1 from spans s where s.trace_id = u.id and s.name = 'chat.completions')", []);
    assert.equal(orphans, [], 'no usage record without its request span');
    if (shape === 'scale-out') assert.is(Number(await cacheOf(check).get(counterKey(month))), totalNow, 'counter == running total');
    assert.ok(totalNow <= CAP, 'the cap was not exceeded');

    // The counter as the request path sees it: a hold larger than the room left is refused with that room.
    const e = await client(check, key)
      .chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4000 })
      .then(() => null, (err: unknown) => apiError(err));
    assert.equal([e?.status, e?.svc?.remaining_micro_usd], [402, CAP - totalNow]);
  } finally {
    for (const child of children) await child.kill9();
    await check?.stop();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
