import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, MemorySink } from '../support/harness.js';
import { loadConfig } from '../../kernel/config/load.js';
import { createLogger } from '../../kernel/log/logger.js';
import { MemoryCache } from '../../kernel/cache/memory.js';
import { RedisCache } from '../../kernel/cache/redis.js';
import type { CachePort } from '../../kernel/cache/port.js';
import { openStore } from '../../kernel/store/orm.js';
import { CounterSeeds } from '../../plugins/budgets/seeds.js';
import { Totals } from '../../plugins/budgets/totals.js';
import { counterKey, encodeTrack, holdsSet, type TrackedHold } from '../../plugins/budgets/reservation.js';

/**
 * A lost counter is seeded from the committed totals plus the live holds (plugins/budgets/seeds.ts).
 * Those are two reads; a hold that settles between them must be counted once or twice, never
 * missed: otherwise the counter restarts below what was spent and admits holds past the cap.
 * On the shape's real database and cache.
 */
const test = suite('budgets: seeding a lost counter while a hold settles');

test('a hold that settles between the seed\'s reads is still counted: the counter never restarts below the spend', async () => {
  const backing = await createBacking();
  const { config } = loadConfig({}, { dataDir: backing.dataDir, database: backing.databaseUrl ? { url: backing.databaseUrl } : {} });
  const store = await openStore(config, []);
  const cache: CachePort = backing.redisUrl ? new RedisCache(backing.redisUrl, backing.redisPrefix) : new MemoryCache();
  try {
    await store.execute('create table budget_totals (total_key varchar(200) primary key, total_micro_usd bigint not null, updated_at bigint not null)');
    const totals = new Totals(store, createLogger('info', new MemorySink()), () => [], 60_000, 60_000);
    const total = 'key:k1:lifetime:all';
    const hold: TrackedHold = { i: 'h1', a: 500, k: [[total, 'lifetime']], r: 'r1', w: 'w1', p: 'p1', y: 'k1', m: 'mock:big', t: Date.now() };
    const member = encodeTrack(hold);
    // A live hold of 500 whose counter the cache has lost.
    await cache.reserve([], { key: holdsSet, member, score: Date.now() + 60_000 });
    // Its settle lands while the seed is being read: the charge (300) committed, then the hold
    // leaves the set (the counter move that goes with it finds no counter to move).
    let settled = false;
    const racing: CachePort = Object.assign(Object.create(cache) as CachePort, {
      members: async (key: string) => {
        if (!settled) {
          settled = true;
          await store.execute('insert into budget_totals (total_key, total_micro_usd, updated_at) values (?, ?, ?)', [total, 300, Date.now()]);
          await cache.adjust([], { key: holdsSet, member, required: true });
        }
        return cache.members(key);
      },
    });
    const seeds = new CounterSeeds(racing, totals);
    const line = { key: counterKey(total), amount: 100, limit: 10_000, mustExist: true };
    const r = await seeds.run([line], [{ total, offset: 0 }], () => cache.reserve([line]));
    assert.ok(settled, 'the settle ran during the seed');
    assert.ok(r.ok);
    // 300 spent plus the new hold of 100: 400 (the hold's 500 again would only over-count).
    assert.is(Number(await cache.get(counterKey(total))), 400);
    assert.equal(await cache.members(holdsSet), []);
  } finally {
    await cache.close();
    await store.close();
    await backing.drop();
  }
});

test.run();
