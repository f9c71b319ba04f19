import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { startReplica, type ChildReplica } from '../support/child-replica.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { counterKey, decodeTrack, holdsSet } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { budgetPlugins, cacheOf, charged, client, newKey, provision, startInstance, total, type Instance } from './support.js';

/**
 * A reaper that dies half-way (kill -9 while it waits for the database to say which expired holds
 * were settled) must not take the holds with it: they stay in the cache's set until a reaper has
 * given them back, so the counter never keeps an abandoned hold's amount for the rest of the period.
 */
const test = suite('budgets: a reaper killed mid-reap loses no hold');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const budgets = { holdExpirySeconds: 1, reaperIntervalMs: 200 };

test('an abandoned hold survives the death of the replica reaping it, then is given back exactly once', async () => {
  if (shape !== 'scale-out') return; // embedded: the cache lives and dies with its only process
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  mock.defaultBehaviour = { reply: { content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 100 } } };
  const db = new URL(backing.databaseUrl!);
  const proxy = new TcpProxy(Number(db.port || 5432), db.hostname);
  await proxy.start();
  db.host = `127.0.0.1:${proxy.port}`;
  const children: ChildReplica[] = [];
  let check: Instance | undefined;
  try {
    const setup = await startInstance(backing);
    await provision(setup.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    await setup.admin.ok('POST', '/budget-caps', { amount_micro_usd: 1_000_000, period: 'month' });
    const key = (await newKey(setup.admin, await setup.admin.workspace())).value;
    await setup.stop();

    // Replica A serves two replies, then dies with a stream running: its hold is abandoned.
    const a = await startReplica(backing, { plugins: budgetPlugins(budgets) });
    children.push(a);
    for (let i = 0; i < 2; i++) await client(a, key).chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 });
    mock.enqueue({ chunks: ['a ', 'b ', 'c'], gapMs: 5_000, usage: { prompt_tokens: 5, completion_tokens: 100 } });
    const s = await client(a, key).chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'stream' }], max_tokens: 100, stream: true });
    await s[Symbol.asyncIterator]().next();
    await sleep(300); // the replies' commits and counter moves are done
    await a.kill9();

    // Replica B reaches PostgreSQL through a proxy that goes silent: its reaper finds the expired
    // hold and waits for the database; it is killed while it waits.
    const b = await startReplica({ ...backing, databaseUrl: db.toString() }, { plugins: budgetPlugins(budgets), database: { timeoutMs: 60_000 } });
    children.push(b);
    proxy.hang();
    await sleep(budgets.holdExpirySeconds * 1000 + 1000);
    assert.ok(proxy.heldBytes > 0, 'replica B did ask the database');
    await b.kill9();
    proxy.heal();

    // A replica that reaps only when told to: the hold is still in the set, and is given back once.
    check = await startInstance(backing, { budgets: { ...budgets, reaperIntervalMs: 3_600_000 } });
    const left = (await cacheOf(check).members(holdsSet)).map((m) => decodeTrack(m));
    assert.is(left.length, 1, 'the hold B was reaping is still tracked');
    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    const before = Number(await cacheOf(check).get(counterKey(month)));
    assert.is(before, (await total(check, month)) + left[0]!.a, 'counter == running total + the abandoned hold');
    assert.is(await check.reap(), 1);
    assert.is(await check.reap(), 0);
    await check.flush();
    const spent = await charged(check);
    assert.is(spent, 2 * (5 * 2 + 100 * 8), 'the two replies, nothing for the abandoned stream');
    assert.is(await total(check, month), spent);
    assert.is(Number(await cacheOf(check).get(counterKey(month))), spent, 'counter == running total: the hold was given back once');
    assert.equal(await cacheOf(check).members(holdsSet), []);
    const rows = await check.sql<{ state: string }>(`select state from budget_holds where id = ?`, [left[0]!.i]);
    assert.equal(rows.map((r) => r.state), ['abandoned']);
  } finally {
    for (const child of children) await child.kill9();
    await check?.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
