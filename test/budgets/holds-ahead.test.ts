import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReserveLine, Tracked } from '../../kernel/index.js';
import { createBacking } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { counterKey, decodeTrack, encodeTrack, holdsSet } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { startReplica, type ChildReplica } from '../support/child-replica.js';
import { apiError, budgetPlugins, cacheOf, charged, client, newKey, personId, provision, startInstance, total, type Instance, type StartOptions } from './support.js';

const test = suite('budgets: holds reserved ahead (scale-out shape) — taken without a cache call, given back unused');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Who reserved each hold through the cache: the request path (its request id) or the pool ('' ). */
function watchReserves(svc: Instance): string[] {
  const cache = cacheOf(svc);
  const reserve = cache.reserve.bind(cache);
  const owners: string[] = [];
  cache.reserve = (lines: ReserveLine[], track?: Tracked) => {
    if (track?.key === holdsSet && track.replaces === undefined) owners.push(decodeTrack(track.member)!.r);
    return reserve(lines, track);
  };
  return owners;
}

/** A service on a fresh backing with the mock's `priced` model, a new key and an instance cap; `body` gets them, cleanup follows. */
async function withCapped(
  o: { shape: 'embedded' | 'scale-out'; start?: StartOptions; output?: string; capMicroUsd?: number },
  body: (svc: Instance, key: string, mock: MockUpstream) => Promise<void>,
): Promise<void> {
  const backing = await createBacking(o.shape);
  const mock = await new MockUpstream().start();
  const svc = await startInstance(backing, o.start);
  try {
    await provision(svc.admin, mock, { priced: { input: '1.00', output: o.output ?? '2.00' } });
    const key = await newKey(svc.admin, await svc.admin.workspace());
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: o.capMicroUsd ?? 1_000_000_000, period: 'month' });
    await body(svc, key.value, mock);
  } finally {
    await svc.stop();
    await mock.stop();
    await backing.drop();
  }
}

test('a key sending steadily takes holds reserved ahead, makes no cache call before going upstream, and what it did not use goes back', () =>
  withCapped({ shape: 'scale-out', start: { rateLimit: { requests: 100_000, windowSeconds: 86_400 } } }, async (svc, key) => {
    const me = await personId(svc.admin);
    const owners = watchReserves(svc);
    const c = client(svc, key);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 }).withResponse();
    // A day's window: a window that ends during the test takes its counter with it (the check below is then skipped).
    const window = () => Math.floor(Date.now() / 86_400_000);
    const windows = new Set([window()]);

    for (let i = 0; i < 30; i++) assert.is((await ask()).response.status, 200);
    const ownBefore = owners.filter((r) => r !== '').length;
    assert.ok(ownBefore >= 8 && ownBefore < 30, `the first requests reserved on their own path (${ownBefore})`);
    assert.ok(owners.some((r) => r === ''), 'holds were reserved ahead');
    const ahead = (await cacheOf(svc).members(holdsSet)).map((m) => decodeTrack(m)!).filter((h) => h.r === '');
    assert.ok(ahead.length > 0, 'unused holds reserved ahead are in the set of live holds');
    for (let i = 0; i < 20; i++) assert.is((await ask()).response.status, 200);
    windows.add(window());
    const ownAfter = owners.filter((r) => r !== '').length - ownBefore;
    assert.ok(ownAfter <= 2, `${ownAfter} of 20 requests reserved their hold on their own path`);

    // Idle: what was reserved ahead and not used goes back; counters equal what was charged.
    await sleep(3500);
    await svc.flush();
    const spent = await charged(svc);
    assert.ok(spent > 0);
    const month = counterKey(`instance:*:month:${periodKey('month', Date.now())}`);
    assert.is(Number(await cacheOf(svc).get(month)), spent, 'the cap counter holds exactly the charges');
    assert.equal(await cacheOf(svc).members(holdsSet), [], 'no hold left in the set');
    windows.add(window());
    if (windows.size === 1) {
      const started = Number((await cacheOf(svc).get(`rl:${me}:${window()}`)) ?? 0);
      assert.is(started, 50, 'the rate window counts the 50 requests started, no slot taken ahead');
    }
    const rows = await svc.sql<{ state: string; amount_micro_usd: string | number; request_id: string }>('select state, amount_micro_usd, request_id from budget_holds');
    assert.is(rows.length, 50);
    assert.ok(rows.every((r) => r.state === 'settled' && r.request_id !== ''), 'every request settled its own hold record');
    // A hold reserved ahead is a power of two at least the request's own.
    const powersOfTwo = rows.filter((r) => Number.isInteger(Math.log2(Number(r.amount_micro_usd)))).length;
    assert.ok(powersOfTwo >= 50 - owners.filter((r) => r !== '').length, `${powersOfTwo} holds of a power-of-two amount`);
  }));

test('a hold reserved ahead is never taken once a quarter of the hold expiry old: the pool gives it back and starts over', () =>
  // Expiry 1 s: a hold reserved ahead is taken only while under 250 ms old.
  withCapped({ shape: 'scale-out', start: { budgets: { holdExpirySeconds: 1, reaperIntervalMs: 100 } } }, async (svc, key) => {
    const owners = watchReserves(svc);
    const c = client(svc, key);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 });
    for (let i = 0; i < 20; i++) await ask();
    assert.ok(owners.includes(''), 'holds were reserved ahead');
    await sleep(400);
    const before = owners.length;
    await ask();
    assert.ok(owners.slice(before).some((r) => r !== ''), 'the request after the pause reserved its own hold');
    await sleep(300);
    await svc.flush();
    const month = counterKey(`instance:*:month:${periodKey('month', Date.now())}`);
    assert.is(Number(await cacheOf(svc).get(month)), await charged(svc), 'the old holds went back: the counter holds the charges');
  }));

test('near a cap nothing is reserved ahead: refusals are exactly those of holds reserved one by one', () =>
  // Room for 30 holds of 100 output tokens at $100/M (10,000 each, plus the input's): well under 64.
  withCapped({ shape: 'scale-out', output: '100.00', capMicroUsd: 330_000 }, async (svc, key, mock) => {
    const owners = watchReserves(svc);
    const c = client(svc, key);
    let served = 0;
    let refused = 0;
    for (let i = 0; i < 45; i++) {
      mock.enqueue({ reply: { content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 100 } } });
      await c.chat.completions
        .create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 })
        .then(() => served++, (err: unknown) => {
          const e = apiError(err);
          assert.is(e.status, 402);
          assert.is(e.code, 'budget_exceeded');
          refused++;
        });
    }
    assert.not.ok(owners.some((r) => r === ''), 'no hold reserved ahead so near the cap');
    assert.ok(served >= 30 && refused > 0, `served ${served}, refused ${refused}`);
    await svc.flush();
    assert.ok((await charged(svc)) <= 330_000, 'never over the cap');
  }));

test('a hold reserved ahead that its replica left behind is given back by any reaper and recorded as nothing', async () => {
  const backing = await createBacking('scale-out');
  const svc = await startInstance(backing, { budgets: { holdExpirySeconds: 1, reaperIntervalMs: 100 } });
  try {
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 100_000, period: 'month' });
    const me = await personId(svc.admin);
    const ws = await svc.admin.workspace();
    const total = `instance:*:month:${periodKey('month', Date.now())}`;
    const now = Date.now();
    const member = encodeTrack({ i: 'left-ahead', a: 4096, k: [[total, 'month']], r: '', w: ws, p: me, y: null, m: '', t: now });
    const line = { key: counterKey(total), amount: 4096, limit: 100_000, seed: 0 };
    assert.ok((await cacheOf(svc).reserve([line], { key: holdsSet, member, score: now + 500 })).ok);
    for (let i = 0; i < 50 && (await cacheOf(svc).members(holdsSet)).length > 0; i++) await sleep(100);
    assert.equal(await cacheOf(svc).members(holdsSet), []);
    assert.is(Number(await cacheOf(svc).get(counterKey(total))), 0, 'its room is back');
    await svc.flush();
    assert.equal(await svc.sql('select id from budget_holds'), [], 'no record: it was no request\'s');
  } finally {
    await svc.stop();
    await backing.drop();
  }
});

test('kill -9 of a replica holding holds reserved ahead: another replica gives them back, counters equal the charges', async () => {
  const backing = await createBacking('scale-out');
  const mock = await new MockUpstream().start();
  mock.defaultBehaviour = { reply: { content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 100 } } };
  const budgets = { holdExpirySeconds: 1, reaperIntervalMs: 200 };
  let child: ChildReplica | undefined;
  let check: Instance | undefined;
  try {
    const setup = await startInstance(backing);
    await provision(setup.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    await setup.admin.ok('POST', '/budget-caps', { amount_micro_usd: 1_000_000_000, period: 'month' });
    const key = (await newKey(setup.admin, await setup.admin.workspace())).value;
    await setup.stop();
    child = await startReplica(backing, { plugins: budgetPlugins(budgets) });
    const c = client(child, key);
    for (let i = 0; i < 40; i++) await c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 });
    check = await startInstance(backing, { budgets: { ...budgets, holdsAhead: 0 } });
    const left = (await cacheOf(check).members(holdsSet)).map((m) => decodeTrack(m)!);
    assert.ok(left.some((h) => h.r === ''), 'the replica holds holds reserved ahead when it is killed');
    await child.kill9();

    await sleep(budgets.holdExpirySeconds * 1000 + 300);
    for (let i = 0; i < 20 && (await check.reap()) > 0; i++);
    assert.equal(await cacheOf(check).members(holdsSet), [], 'no hold left behind');
    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    const spent = await charged(check);
    assert.ok(spent > 0);
    assert.is(await total(check, month), spent, 'running total == sum of usage records');
    assert.is(Number(await cacheOf(check).get(counterKey(month))), spent, 'counter == charges: every hold reserved ahead was given back');
    assert.equal(await check.sql("select id from budget_holds where state = 'abandoned'"), [], 'nothing recorded for holds that were no request\'s');
  } finally {
    await child?.kill9();
    await check?.stop();
    await mock.stop();
    await backing.drop();
  }
});

test('settles committed close together move their holds in one cache call, not one each', () =>
  withCapped({ shape: 'scale-out' }, async (svc, key) => {
    const cache = cacheOf(svc);
    const batches: number[] = [];
    const adjustEach = cache.adjustEach.bind(cache);
    // Holds moved per cache call: a call moves one hold, or several on the same counters at once.
    cache.adjustEach = (calls) => (batches.push(calls.reduce((n, c) => n + 1 + (c.untrack?.more?.length ?? 0), 0)), adjustEach(calls));
    const single: string[] = [];
    const adjust = cache.adjust.bind(cache);
    cache.adjust = (lines, untrack) => {
      if (untrack?.key === holdsSet) single.push(decodeTrack(untrack.member)!.r);
      return adjust(lines, untrack);
    };
    const c = client(svc, key);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 });
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 8 }, ask));
    // A hold taken from the pool keeps its member (empty request id) until its settle moves it:
    // the set cannot tell when every settle moved, the count of moves can.
    const moved = () => batches.reduce((a, b) => a + b, 0);
    for (let i = 0; i < 100 && moved() < 24; i++) await sleep(30);
    await sleep(100);
    const requestHolds = async () => (await cache.members(holdsSet)).map((m) => decodeTrack(m)!).filter((h) => h.r !== '');
    assert.equal(await requestHolds(), [], "every request's hold left the set");
    assert.is(moved(), 24, 'each settle moved once');
    assert.ok(batches.length < 24 && Math.max(...batches) > 1, `moves went together: ${batches.join(', ')}`);
    assert.equal(single.filter((r) => r !== ''), [], 'no settle moved its hold on its own');
    await svc.flush();
    const rows = await svc.sql<{ state: string }>("select state from budget_holds where request_id <> ''");
    assert.equal([...new Set(rows.map((r) => r.state))], ['settled']);
    assert.is(rows.length, 24);
  }));

test('the embedded shape reserves nothing ahead (its cache answers at once)', () =>
  withCapped({ shape: 'embedded' }, async (svc, key) => {
    const c = client(svc, key);
    for (let i = 0; i < 20; i++) await c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    // Every request settled its own hold: nothing is left in the set, reserved ahead or otherwise.
    await svc.flush();
    assert.equal(await cacheOf(svc).members(holdsSet), []);
    assert.is((await svc.sql('select id from budget_holds')).length, 20);
  }));

test.run();
