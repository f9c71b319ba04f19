import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryCache } from '../../kernel/cache/memory.js';
import type { AdjustCall, CachePort } from '../../kernel/index.js';
import { createLogger } from '../../kernel/log/logger.js';
import type { AfterCommit, GroupStep } from '../../kernel/store/group-commit.js';
import type { RequestContext } from '../../kernel/pipeline/context.js';
import { MemorySink } from '../support/harness.js';
import { LiveHolds } from '../../plugins/budgets/live.js';
import { counterKey, encodeTrack, holdsSet, type TrackedHold } from '../../plugins/budgets/reservation.js';
import { CounterSeeds } from '../../plugins/budgets/seeds.js';
import { Settler } from '../../plugins/budgets/settler.js';
import { Totals } from '../../plugins/budgets/totals.js';

/**
 * The settler's moves on a cache that answers later (as Redis does), on the in-process cache's
 * semantics: holds on the same counters move as one call; what such a call cannot apply goes hold by hold.
 */
const test = suite('budgets: settles moved together');

function setup(inProcess = false) {
  const memory = new MemoryCache();
  const calls: AdjustCall[][] = [];
  // Without adjustNow the settler takes the path it takes on Redis; with it, the embedded one.
  const cache = {
    adjust: (lines, untrack) => memory.adjust(lines, untrack),
    adjustEach: (each) => (calls.push([...each]), memory.adjustEach(each)),
    members: (key) => memory.members(key),
    ...(inProcess ? { adjustNow: (lines, untrack) => (calls.push([{ lines, untrack }]), memory.adjustNow(lines, untrack)) } : {}),
  } as Partial<CachePort> as CachePort;
  const log = createLogger('info', new MemorySink());
  const totals = new Totals(undefined as never, log, () => [], 60_000, 60_000);
  const live = new LiveHolds();
  const settler = new Settler(live, totals, new CounterSeeds(cache, totals), undefined as never, log, 1000);
  const t = Date.UTC(2026, 10, 30, 12);
  const k: TrackedHold['k'] = [['instance:*:month:2026-11', 'month'], ['workspace:w1:day:2026-11-30', 'day']];
  const hold = (i: string, a: number, keys = k): TrackedHold => ({ i, a, k: keys, r: `req-${i}`, w: 'w1', p: 'p1', y: null, m: 'm', t });
  /** Reserves `holds` in the cache and settles each at `charge`; returns the moves their commit would run. */
  const settle = async (holds: TrackedHold[], charge: number): Promise<AfterCommit[]> => {
    const moves: AfterCommit[] = [];
    for (const h of holds) {
      const member = encodeTrack(h);
      await memory.reserve(h.k.map(([total]) => ({ key: counterKey(total), amount: h.a, limit: null })), { key: holdsSet, member, score: t });
      const rc = { durable: [] } as unknown as RequestContext;
      settler.stage(rc, live.add(h, member, t + 60_000), charge);
      moves.push(...(rc.durable as Array<{ kind: string }>).filter((w): w is AfterCommit => w.kind === 'after'));
    }
    return moves;
  };
  const run = async (moves: AfterCommit[]) => {
    await (moves[0]!.step as GroupStep).run(moves);
    for (let i = 0; i < 50 && live.all.size > 0; i++) await sleep(10);
  };
  const counter = async (total: string) => Number(await memory.get(counterKey(total)));
  return { memory, calls, live, hold, settle, run, counter, k };
}

test('holds on the same counters move as ONE call: deltas summed, members removed together', async () => {
  const s = setup();
  const moves = await s.settle([s.hold('a', 100), s.hold('b', 100), s.hold('c', 100)], 30);
  await s.run(moves);
  assert.is(s.calls.length, 1, 'one cache call');
  assert.is(s.calls[0]!.length, 1, 'one joint move');
  assert.equal(s.calls[0]![0]!.lines.map((l) => l.delta), [-210, -210]);
  assert.is(s.calls[0]![0]!.untrack?.more?.length, 2);
  assert.is(await s.counter(s.k[0]![0]), 90);
  assert.equal(await s.memory.members(holdsSet), []);
  assert.is(s.live.all.size, 0);
});

test('a joint move that cannot apply (a hold already gone) goes hold by hold: the others move, the gone one does not', async () => {
  const s = setup();
  const holds = [s.hold('a', 100), s.hold('b', 100), s.hold('c', 100)];
  const moves = await s.settle(holds, 30);
  // The reaper (or another replica) ended b first: its counters were moved back already.
  await s.memory.adjust(s.k.map(([total]) => ({ key: counterKey(total), delta: -100 })), { key: holdsSet, member: encodeTrack(holds[1]!), required: true });
  await s.run(moves);
  assert.equal(s.calls.map((c) => c.length), [1, 3], 'the joint call, then each hold');
  assert.is(await s.counter(s.k[0]![0]), 60, 'a and c moved by −70 each; b not again');
  assert.equal(await s.memory.members(holdsSet), []);
  assert.is(s.live.all.size, 0);
});

test('holds on different counters (another principal, another day) move alone, after the joint call', async () => {
  const s = setup();
  const other: TrackedHold['k'] = [['instance:*:month:2026-11', 'month'], ['workspace:w2:day:2026-11-30', 'day']];
  const moves = await s.settle([s.hold('a', 100), s.hold('b', 50, other), s.hold('c', 100)], 10);
  await s.run(moves);
  assert.is(s.calls.length, 2, 'the joint call (a, c), then b alone');
  assert.equal(s.calls.map((c) => c.length), [1, 1]);
  assert.is(await s.counter(s.k[0]![0]), 30, 'instance: a, b and c settled at 10 each');
  assert.is(await s.counter('workspace:w2:day:2026-11-30'), 10);
  assert.equal(await s.memory.members(holdsSet), []);
});

test('in process: the same counters move as one call answered at once; a gone hold sends the others one by one', async () => {
  const s = setup(true);
  const moves = await s.settle([s.hold('a', 100), s.hold('b', 100)], 40);
  await s.run(moves);
  assert.equal(s.calls.map((c) => c[0]!.untrack?.more?.length ?? 0), [1], 'one joint move');
  assert.is(await s.counter(s.k[0]![0]), 80);
  const holds = [s.hold('c', 100), s.hold('d', 100)];
  const more = await s.settle(holds, 40);
  await s.memory.adjust(s.k.map(([total]) => ({ key: counterKey(total), delta: -100 })), { key: holdsSet, member: encodeTrack(holds[0]!), required: true });
  await s.run(more);
  assert.equal(s.calls.slice(1).map((c) => c[0]!.untrack?.more?.length ?? 0), [1, 0, 0], 'the joint move, then c (gone) and d alone');
  assert.is(await s.counter(s.k[0]![0]), 120, 'd moved by −60; c not again');
  assert.equal(await s.memory.members(holdsSet), []);
  assert.is(s.live.all.size, 0);
});

test.run();
