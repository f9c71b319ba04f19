import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, MemorySink } from '../support/harness.js';
import { loadConfig } from '../../kernel/config/load.js';
import { createLogger } from '../../kernel/log/logger.js';
import { MemoryCache } from '../../kernel/cache/memory.js';
import { RedisCache } from '../../kernel/cache/redis.js';
import type { CachePort } from '../../kernel/cache/port.js';
import { openStore, type Store } from '../../kernel/store/orm.js';
import { CounterSeeds } from '../../plugins/budgets/seeds.js';
import { HoldMoves } from '../../plugins/budgets/hold-moves.js';
import { Totals } from '../../plugins/budgets/totals.js';
import { counterKey, encodeTrack, holdsSet, moveLines, type TrackedHold } from '../../plugins/budgets/reservation.js';

/**
 * The settles of one group commit move their holds' counters in ONE cache call
 * (plugins/budgets/hold-moves.ts), each hold all or nothing and only while it is live; a hold
 * whose counter the cache lost is seeded on the single path. On the shape's real database and cache.
 */
const test = suite('budgets: settled holds move their counters in one cache call');

interface Env {
  cache: CachePort;
  calls: { each: number; single: number };
  moves: HoldMoves;
  store: Store;
  done: () => Promise<void>;
}

async function open(failing = false): Promise<Env> {
  const backing = await createBacking();
  const { config } = loadConfig({}, { dataDir: backing.dataDir, database: backing.databaseUrl ? { url: backing.databaseUrl } : {} });
  const store = await openStore(config, []);
  await store.execute('create table budget_totals (total_key varchar(200) primary key, total_micro_usd bigint not null, updated_at bigint not null)');
  const cache: CachePort = backing.redisUrl ? new RedisCache(backing.redisUrl, backing.redisPrefix) : new MemoryCache();
  const calls = { each: 0, single: 0 };
  const counted: CachePort = Object.assign(Object.create(cache) as CachePort, {
    adjustEach: (items: Parameters<CachePort['adjustEach']>[0]) => {
      calls.each++;
      return failing ? Promise.reject(new Error('cache: Redis unavailable')) : cache.adjustEach(items);
    },
    adjust: (...args: Parameters<CachePort['adjust']>) => {
      calls.single++;
      return cache.adjust(...args);
    },
  });
  const totals = new Totals(store, createLogger('info', new MemorySink()), () => [], 60_000, 60_000);
  const moves = new HoldMoves(counted, new CounterSeeds(counted, totals));
  return {
    cache, calls, moves, store,
    done: async () => {
      await cache.close();
      await store.close();
      await backing.drop();
    },
  };
}

/** A live hold of `amount` on `total`'s counter, reserved as holds.ts does. */
async function hold(cache: CachePort, id: string, total: string, amount: number): Promise<{ h: TrackedHold; member: string }> {
  const h: TrackedHold = { i: id, a: amount, k: [[total, 'lifetime']], r: `r-${id}`, w: 'w1', p: 'p1', y: 'k1', m: 'mock:big', t: Date.now() };
  const member = encodeTrack(h);
  const r = await cache.reserve([{ key: counterKey(total), amount, limit: 1_000_000, seed: 0 }], { key: holdsSet, member, score: Date.now() + 60_000 });
  assert.ok(r.ok);
  return { h, member };
}

test('holds settled in the same turn: one call, every counter moved by charge − hold, every hold gone', async () => {
  const env = await open();
  try {
    const total = 'key:k1:lifetime:all';
    const holds = await Promise.all([1, 2, 3, 4, 5].map((n) => hold(env.cache, `h${n}`, total, 1000)));
    assert.is(Number(await env.cache.get(counterKey(total))), 5000);
    const charges = [100, 200, 0, 1000, 450];
    await Promise.all(holds.map(({ h, member }, i) => env.moves.move(h, member, moveLines(h.k, charges[i]! - h.a, Date.now(), 60_000))));
    assert.equal(env.calls, { each: 1, single: 0 });
    assert.is(Number(await env.cache.get(counterKey(total))), 1750);
    assert.equal(await env.cache.members(holdsSet), []);
    // Moved again (a retry after a lost reply): the holds are gone, nothing moves twice.
    await Promise.all(holds.map(({ h, member }) => env.moves.move(h, member, moveLines(h.k, -h.a, Date.now(), 60_000))));
    assert.equal(env.calls, { each: 2, single: 0 });
    assert.is(Number(await env.cache.get(counterKey(total))), 1750);
  } finally {
    await env.done();
  }
});

test('a hold whose counter the cache lost is seeded on its own; the others move in the shared call', async () => {
  const env = await open();
  try {
    const kept = 'key:k1:lifetime:all';
    const lost = 'person:p1:lifetime:all';
    const a = await hold(env.cache, 'a', kept, 1000);
    const b = await hold(env.cache, 'b', lost, 500);
    await env.cache.del(counterKey(lost));
    // b's charge (300) was committed before its counters move, as the settle does it.
    await env.store.execute('insert into budget_totals (total_key, total_micro_usd, updated_at) values (?, ?, ?)', [lost, 300, Date.now()]);
    await Promise.all([
      env.moves.move(a.h, a.member, moveLines(a.h.k, 400 - 1000, Date.now(), 60_000)),
      env.moves.move(b.h, b.member, moveLines(b.h.k, 300 - 500, Date.now(), 60_000)),
    ]);
    assert.is(env.calls.each, 1);
    assert.ok(env.calls.single >= 1, 'the lost counter went the seeding path');
    assert.is(Number(await env.cache.get(counterKey(kept))), 400);
    assert.is(Number(await env.cache.get(counterKey(lost))), 300, 'seeded at the committed spend, not at zero');
    assert.equal(await env.cache.members(holdsSet), []);
  } finally {
    await env.done();
  }
});

test('a cache call that fails rejects every move in it (the settler retries each)', async () => {
  const env = await open(true);
  try {
    const h = await hold(env.cache, 'x', 'key:k1:lifetime:all', 1000);
    const results = await Promise.allSettled([
      env.moves.move(h.h, h.member, moveLines(h.h.k, -1000, Date.now(), 60_000)),
      env.moves.move(h.h, h.member, moveLines(h.h.k, -1000, Date.now(), 60_000)),
    ]);
    assert.equal(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.is(env.calls.each, 1);
    assert.is(Number(await env.cache.get(counterKey('key:k1:lifetime:all'))), 1000, 'nothing moved');
  } finally {
    await env.done();
  }
});

test.run();
