import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CountersMissing, type CachePort } from '../../kernel/cache/port.js';

/**
 * The cache port's behaviour, run against every implementation and deployment (memory, one
 * Redis, a Redis Cluster, a Sentinel set): cache.test.ts and redis-topologies.test.ts.
 */

/** One implementation under test: `peer` is a second client over the same shared state. */
export interface Subject {
  name: string;
  open(): CachePort;
  peer(): CachePort;
}

let seq = 0;
/** Fresh keys per test, so no test sees another's state and nothing needs flushing between them. */
const key = (name: string): string => `${name}:${++seq}`;

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(10);
}

export function contract(s: Subject): void {
  const test = suite(`cache contract: ${s.name}`);
  const c = s.open();
  test.after(() => c.close());

  test('get, set, ttl and expiry', async () => {
    const [a, b] = [key('a'), key('b')];
    assert.is(await c.get(a), null);
    assert.is(await c.ttl(a), -2);
    await c.set(a, 'x', 200);
    await c.set(b, 'y');
    assert.is(await c.get(a), 'x');
    const t = await c.ttl(a);
    assert.ok(t > 0 && t <= 200, `ttl ${t}`);
    assert.is(await c.ttl(b), -1);
    await sleep(250);
    assert.is(await c.get(a), null);
    assert.is(await c.ttl(a), -2);
    await c.set(b, 'z', 5000);
    await c.set(b, 'w'); // a plain set drops the expiry
    assert.is(await c.ttl(b), -1);
    await c.del(a, b);
    assert.is(await c.get(b), null);
  });

  test('setIfAbsent', async () => {
    const a = key('nx');
    assert.is(await c.setIfAbsent(a, '1', 150), true);
    assert.is(await c.setIfAbsent(a, '2'), false);
    assert.is(await c.get(a), '1');
    await sleep(200);
    assert.is(await c.setIfAbsent(a, '3'), true);
    assert.is(await c.get(a), '3');
    assert.is(await c.ttl(a), -1);
  });

  test('incr sets the expiry only on creation', async () => {
    const [a, b] = [key('incr'), key('incr')];
    assert.is(await c.incr(a, 5, 300), 5);
    await sleep(50);
    assert.is(await c.incr(a, 2, 10_000), 7);
    const t = await c.ttl(a);
    assert.ok(t > 0 && t <= 260, `ttl ${t}`);
    await sleep(300);
    assert.is(await c.get(a), null);
    assert.is(await c.incr(b, -3), -3);
    assert.is(await c.ttl(b), -1);
    assert.is(await c.incr(b, 2 ** 40), 2 ** 40 - 3);
  });

  test('reserve is all-or-nothing across keys', async () => {
    const [a, b, d, set] = [key('r'), key('r'), key('r'), key('set')];
    await c.incr(a, 5);
    await c.incr(b, 1, 5000);
    const lines = [
      { key: a, amount: 3, limit: 10 },
      { key: b, amount: 3, limit: 3, ttlMs: 100 },
      { key: d, amount: 1, limit: null },
    ];
    const r = await c.reserve(lines, { key: set, member: 'm1', score: 1 });
    assert.is(r.ok, false);
    if (r.ok) return;
    assert.is(r.index, 1);
    assert.is(r.current, 1);
    assert.ok(r.ttlMs > 0 && r.ttlMs <= 5000, `ttl ${r.ttlMs}`);
    assert.equal([await c.get(a), await c.get(b), await c.get(d)], ['5', '1', null]);
    assert.equal(await c.expired(set, 10, 10), [], 'not tracked when refused');

    lines[1]!.limit = 4;
    assert.equal(await c.reserve(lines, { key: set, member: 'm2', score: 2 }), { ok: true, values: [8, 4, 1] });
    assert.equal(await c.expired(set, 10, 10), ['m2']);
    const absent = await c.reserve([{ key: key('r'), amount: 2, limit: 1 }]);
    assert.equal(absent, { ok: false, index: 0, current: 0, ttlMs: -2 });
  });

  test('reserve: no limit, big integers, expiry only on creation', async () => {
    const [a, b] = [key('big'), key('win')];
    assert.equal(await c.reserve([{ key: a, amount: 2 ** 40 + 7, limit: null }]), { ok: true, values: [2 ** 40 + 7] });
    assert.equal(await c.reserve([{ key: a, amount: 2 ** 41, limit: null }]), { ok: true, values: [3 * 2 ** 40 + 7] });
    assert.is(await c.get(a), String(3 * 2 ** 40 + 7));
    assert.is(await c.ttl(a), -1);
    await c.reserve([{ key: b, amount: 1, limit: 5, ttlMs: 100 }]);
    await c.reserve([{ key: b, amount: 1, limit: 5, ttlMs: 60_000 }]);
    const t = await c.ttl(b);
    assert.ok(t > 0 && t <= 100, `ttl ${t}`);
  });

  test('reserve seeds absent keys only, even when refused', async () => {
    const [a, b] = [key('seed'), key('seed')];
    const r = await c.reserve([{ key: a, amount: 30, limit: 120, seed: 100, ttlMs: 5000 }]);
    assert.equal({ ...r, ttlMs: 0 }, { ok: false, index: 0, current: 100, ttlMs: 0 });
    assert.is(await c.get(a), '100');
    const t = await c.ttl(a);
    assert.ok(t > 0 && t <= 5000, `seeded ttl ${t}`);
    await c.set(b, '10');
    assert.equal(await c.reserve([{ key: b, amount: 1, limit: 20, seed: 100 }]), { ok: true, values: [11] });
  });

  test('a counter named twice in one call: seeded once, its expiry set once, by the first line', async () => {
    const [a, b] = [key('twice'), key('twice')];
    assert.equal(await c.reserve([{ key: a, amount: 2, limit: null, ttlMs: 150 }, { key: a, amount: 3, limit: null, ttlMs: 60_000 }]), { ok: true, values: [2, 5] });
    const t = await c.ttl(a);
    assert.ok(t > 0 && t <= 150, `ttl ${t}`);
    assert.equal(await c.reserve([{ key: b, amount: 1, limit: 50, seed: 10, ttlMs: 5000 }, { key: b, amount: 1, limit: 50, seed: 99 }]), { ok: true, values: [11, 12] });
    const tb = await c.ttl(b);
    assert.ok(tb > 0 && tb <= 5000, `seeded ttl ${tb}`);
  });

  test('a member may hold any text: colons, newlines, characters of several bytes', async () => {
    const [a, set] = [key('text'), key('textset')];
    const member = '{"i":"x:1"}\n€😀:';
    assert.equal(await c.reserve([{ key: a, amount: 1, limit: 10 }], { key: set, member, score: 5 }), { ok: true, values: [1] });
    assert.equal(await c.members(set), [member]);
    assert.equal(await c.adjust([{ key: a, delta: -1 }], { key: set, member, required: true }), [0]);
    assert.equal(await c.members(set), []);
  });

  test('adjustEach: calls applied in order, each all or nothing on its own; applied, gone, or its own error', async () => {
    const [a, b, missing, set] = [key('each'), key('each'), key('each'), key('eachset')];
    await c.incr(a, 10);
    await c.reserve([{ key: b, amount: 1, limit: null }], { key: set, member: 'm1', score: 1 });
    const out = await c.adjustEach([
      { lines: [{ key: a, delta: -4 }, { key: b, delta: 2 }], untrack: { key: set, member: 'm1', required: true } },
      // The same member again: gone by now, so nothing moves.
      { lines: [{ key: a, delta: -100 }], untrack: { key: set, member: 'm1', required: true } },
      { lines: [{ key: a, delta: 1 }, { key: missing, delta: 5, mustExist: true }] },
      { lines: [{ key: a, delta: -1 }] },
    ]);
    assert.equal(out.slice(0, 2), [true, false]);
    assert.instance(out[2], CountersMissing);
    assert.equal((out[2] as CountersMissing).lines, [1]);
    assert.is(out[3], true, 'the call after a refused one still applies, after the ones before it');
    assert.equal([await c.get(a), await c.get(b), await c.get(missing), await c.members(set)], ['5', '3', null, []]);
    assert.equal(await c.adjustEach([]), []);
  });

  test('untrack with more members: all removed in the step; required, nothing changes unless every one is there', async () => {
    const [a, set] = [key('remall'), key('remallset')];
    await c.reserve([{ key: a, amount: 9, limit: null }], { key: set, member: 'h1', score: 1, more: ['h2', 'h3', 'h4:€'] });
    const out = await c.adjustEach([
      // h9 is not in the set: nothing of this call changes.
      { lines: [{ key: a, delta: -5 }], untrack: { key: set, member: 'h1', more: ['h9'], required: true } },
      { lines: [{ key: a, delta: -2 }], untrack: { key: set, member: 'h1', more: ['h2'], required: true } },
    ]);
    assert.equal(out, [false, true]);
    assert.equal([await c.get(a), (await c.members(set)).sort()], ['7', ['h3', 'h4:€']]);
    assert.equal(await c.adjust([{ key: a, delta: -1 }], { key: set, member: 'h3', more: ['h2'], required: true }), [], 'h2 is gone: nothing moved');
    assert.equal(await c.adjust([{ key: a, delta: -1 }], { key: set, member: 'h3', more: ['h2', 'h4:€'] }), [6], 'not required: whatever is there goes');
    assert.equal(await c.members(set), []);
  });

  test('mustExist: a missing counter changes nothing and is named; a seed or an existing counter goes through', async () => {
    const [a, b, set] = [key('must'), key('must'), key('set')];
    await c.set(a, '5');
    const miss = await c.reserve([{ key: a, amount: 1, limit: 100, mustExist: true }, { key: b, amount: 1, limit: 100, mustExist: true }], { key: set, member: 'h', score: 1 }).catch((e: unknown) => e);
    assert.instance(miss, CountersMissing);
    assert.equal((miss as CountersMissing).lines, [1]);
    assert.equal([await c.get(a), await c.get(b), await c.members(set)], ['5', null, []], 'nothing changed, nothing tracked');
    const moved = await c.adjust([{ key: b, delta: 2, mustExist: true }], { key: set, member: 'x' }).catch((e: unknown) => e);
    assert.equal((moved as CountersMissing).lines, [0]);
    assert.equal(await c.reserve([{ key: a, amount: 1, limit: 100, mustExist: true }, { key: b, amount: 1, limit: 100, seed: 40, mustExist: true }], { key: set, member: 'h', score: 1 }), { ok: true, values: [6, 41] });
    assert.equal(await c.adjust([{ key: b, delta: -1, mustExist: true }]), [40]);
    assert.equal(await c.members(set), ['h']);
  });

  test('adjust and untrack', async () => {
    const [a, b, d, set] = [key('adj'), key('adj'), key('adj'), key('set')];
    await c.reserve([{ key: a, amount: 10, limit: 100 }], { key: set, member: 'h1', score: 5 });
    await c.reserve([], { key: set, member: 'h2', score: 6 });
    const values = await c.adjust(
      [{ key: a, delta: -4 }, { key: b, delta: 3, seed: 50 }, { key: d, delta: 2, ttlMs: 100 }],
      { key: set, member: 'h1' },
    );
    assert.equal(values, [6, 53, 2]);
    const t = await c.ttl(d);
    assert.ok(t > 0 && t <= 100, `ttl ${t}`);
    assert.equal(await c.expired(set, 100, 10), ['h2']);
  });

  test('calls made in the same turn (Redis sends them as one script run): each all or nothing, each its own result', async () => {
    const [a, b, lost, set] = [key('turn'), key('turn'), key('turn'), key('set')];
    await c.reserve([{ key: a, amount: 10, limit: 100 }, { key: b, amount: 10, limit: 100, seed: 0 }], { key: set, member: 'h1', score: 5 });
    await c.reserve([{ key: a, amount: 20, limit: 100 }], { key: set, member: 'h2', score: 5 });
    await c.reserve([{ key: a, amount: 5, limit: 100 }], { key: set, member: 'h3', score: 5 });
    const settled = (p: Promise<unknown>) => p.catch((e: unknown) => e);
    const results = await Promise.all([
      // a settle: both counters move and the hold leaves the set
      settled(c.adjust([{ key: a, delta: -4, mustExist: true }, { key: b, delta: -4, mustExist: true }], { key: set, member: 'h1', required: true })),
      // its counter was lost: this call changes nothing (not even its hold), the others apply
      settled(c.adjust([{ key: a, delta: -1, mustExist: true }, { key: lost, delta: -20, mustExist: true }], { key: set, member: 'h2', required: true })),
      // already ended elsewhere: nothing moves
      settled(c.adjust([{ key: a, delta: -10, mustExist: true }], { key: set, member: 'gone', required: true })),
      // refused by its limit: nothing is reserved, nothing tracked
      settled(c.reserve([{ key: a, amount: 1, limit: 1000 }, { key: b, amount: 95, limit: 100 }], { key: set, member: 'h4', score: 5 })),
      settled(c.adjust([{ key: a, delta: -5, ttlMs: 1000 }], { key: set, member: 'h3' })),
      settled(c.reserve([{ key: a, amount: 4, limit: 30 }], { key: set, member: 'h5', score: 7 })),
      settled(c.adjust([{ key: lost, delta: 7, seed: 100, ttlMs: 5000 }])),
    ]);
    assert.equal(results[0], [31, 6]);
    assert.instance(results[1], CountersMissing);
    assert.equal((results[1] as CountersMissing).lines, [1]);
    assert.equal(results[2], []);
    assert.equal({ ...(results[3] as object), ttlMs: 0 }, { ok: false, index: 1, current: 6, ttlMs: 0 });
    assert.equal(results.slice(4), [[26], { ok: true, values: [30] }, [107]]);
    assert.equal([await c.get(a), await c.get(b), await c.get(lost)], ['30', '6', '107']);
    assert.equal((await c.members(set)).sort(), ['h2', 'h5']);
    const t = await c.ttl(lost);
    assert.ok(t > 0 && t <= 5000, `seeded ttl ${t}`);
  });

  test('reserve in place of a member: only while it is there; re-scoring never brings one back', async () => {
    const [a, set] = [key('grow'), key('set')];
    await c.reserve([{ key: a, amount: 10, limit: 100 }], { key: set, member: 'h1:10', score: 5 });
    // A hold that grows: the counter moves and the member is replaced in one step.
    assert.equal(await c.reserve([{ key: a, amount: 30, limit: 100 }], { key: set, member: 'h1:40', score: 7, replaces: 'h1:10' }), { ok: true, values: [40] });
    // Refused by its limit: the old member stays.
    const over = await c.reserve([{ key: a, amount: 61, limit: 100 }], { key: set, member: 'h1:101', score: 7, replaces: 'h1:40' });
    assert.equal({ ...over, ttlMs: 0 }, { ok: false, index: 0, current: 40, ttlMs: 0 });
    // Re-scoring in place (the keep-alive) moves only the score.
    assert.equal(await c.reserve([], { key: set, member: 'h1:40', score: 9, replaces: 'h1:40' }), { ok: true, values: [] });
    assert.equal(await c.expired(set, 8, 10), []);
    assert.equal(await c.expired(set, 9, 10), ['h1:40']);
    // Gone (settled or reaped elsewhere): nothing changes, nothing is seeded, nothing comes back.
    assert.equal(await c.adjust([], { key: set, member: 'h1:40', required: true }), []);
    const b = key('grow');
    assert.equal(await c.reserve([{ key: a, amount: 1, limit: 100 }, { key: b, amount: 1, limit: null, seed: 5 }], { key: set, member: 'h1:41', score: 9, replaces: 'h1:40' }), {
      ok: false, index: -1, current: 0, ttlMs: -2, gone: true,
    });
    assert.equal(await c.reserve([], { key: set, member: 'h1:40', score: 9, replaces: 'h1:40' }), { ok: false, index: -1, current: 0, ttlMs: -2, gone: true });
    assert.equal([await c.get(a), await c.get(b)], ['40', null]);
    assert.equal(await c.expired(set, 100, 10), []);
  });

  test('several members with one score in one reserve (holds reserved ahead): all recorded when it fits, none when refused', async () => {
    const [a, set] = [key('ahead'), key('set')];
    assert.equal(await c.reserve([{ key: a, amount: 30, limit: 100 }], { key: set, member: 'x1', score: 5, more: ['x2', 'x3'] }), { ok: true, values: [30] });
    assert.equal((await c.members(set)).sort(), ['x1', 'x2', 'x3']);
    assert.equal((await c.expired(set, 5, 10)).sort(), ['x1', 'x2', 'x3'], 'each with the score given');
    assert.equal(await c.expired(set, 4, 10), []);
    const over = await c.reserve([{ key: a, amount: 71, limit: 100 }], { key: set, member: 'y1', score: 6, more: ['y2'] });
    assert.equal({ ...over, ttlMs: 0 }, { ok: false, index: 0, current: 30, ttlMs: 0 });
    assert.equal((await c.members(set)).sort(), ['x1', 'x2', 'x3'], 'nothing recorded when refused');
    assert.equal(await c.adjust([{ key: a, delta: -10 }], { key: set, member: 'x2', required: true }), [20], 'each member ends on its own');
    assert.equal((await c.members(set)).sort(), ['x1', 'x3']);
  });

  test('expired: lowest scores first, up to the limit, left in place until removed by a required untrack', async () => {
    const set = key('peek');
    for (const [member, score] of [['a', 30], ['b', 10], ['c', 20], ['d', 40]] as const) {
      await c.reserve([], { key: set, member, score });
    }
    assert.equal(await c.expired(set, 30, 2), ['b', 'c']);
    assert.equal(await c.expired(set, 30, 10), ['b', 'c', 'a'], 'nothing was removed');
    assert.equal(await c.expired(set, 30, 0), []);
    assert.equal(await c.expired(set, -Infinity, 10), []);
    const counter = key('peek-counter');
    await c.incr(counter, 50);
    assert.equal(await c.adjust([{ key: counter, delta: -10 }], { key: set, member: 'b', required: true }), [40]);
    assert.equal(await c.adjust([{ key: counter, delta: -10 }], { key: set, member: 'b', required: true }), [], 'a second reaper of the same member changes nothing');
    assert.is(await c.get(counter), '40');
    assert.equal(await c.expired(set, Infinity, 10), ['c', 'a', 'd']);
    assert.equal(await c.expired(key('none'), Infinity, 10), []);
    await c.del(set); // a tracking set is a key like any other
    assert.equal(await c.expired(set, Infinity, 10), []);
  });

  test('publish and subscribe across clients, unsubscribe', async () => {
    const [p, ch] = [s.peer(), key('ch')];
    const [one, two]: string[][] = [[], []];
    const off1 = await p.subscribe(ch, (m) => one.push(m));
    const off2 = await p.subscribe(ch, (m) => two.push(m));
    await c.publish(ch, 'hello');
    await until(() => one.length > 0 && two.length > 0);
    assert.equal([one, two], [['hello'], ['hello']]);
    await off1();
    await c.publish(ch, 'again');
    await until(() => two.length > 1);
    await off2();
    await c.publish(ch, 'nobody');
    await sleep(50);
    assert.equal([one, two], [['hello'], ['hello', 'again']]);
    if (p !== c) await p.close();
  });

  test('200 concurrent reservations from two clients never overshoot', async () => {
    const [p, a] = [s.peer(), key('race')];
    const clients = [c, p];
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => clients[i % 2]!.reserve([{ key: a, amount: 7, limit: 1000 }])),
    );
    assert.is(results.filter((r) => r.ok).length, 142);
    assert.is(await c.get(a), String(Math.floor(1000 / 7) * 7));
    if (p !== c) await p.close();
  });

  test.run();
}
