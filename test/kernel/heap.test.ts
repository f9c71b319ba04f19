import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compactHeap } from '../../kernel/lifecycle/heap.js';
import { createBacking } from '../support/harness.js';
import { startReplica } from '../support/child-replica.js';

const heap = suite('heap compaction');

heap('compactHeap collects, shrinks the young generation and leaves gc off the global object', () => {
  // Grow the young generation with short-lived garbage, as start-up does.
  let keep = 0;
  for (let i = 0; i < 200_000; i++) keep += JSON.stringify({ i, s: 'x'.repeat(40) }).length;
  assert.ok(keep > 0);
  const c = compactHeap();
  for (const v of Object.values(c)) assert.ok(Number.isInteger(v) && v >= 0, JSON.stringify(c));
  assert.ok(c.young_mb_after <= c.young_mb_before, JSON.stringify(c));
  assert.is((globalThis as { gc?: unknown }).gc, undefined);
});

heap('svc serve compacts its heap once, before it listens, and says what it gave back', async () => {
  const backing = await createBacking();
  try {
    const replica = await startReplica(backing, {});
    try {
      const events = replica.lines.map((l) => JSON.parse(l) as { event?: string; young_mb_before?: number; young_mb_after?: number; rss_mb_before?: number; rss_mb_after?: number });
      const compacted = events.findIndex((e) => e.event === 'heap.compacted');
      const started = events.findIndex((e) => e.event === 'api.started');
      assert.ok(compacted >= 0, 'heap.compacted is logged');
      assert.ok(compacted < started, 'before api.started');
      assert.is(events.filter((e) => e.event === 'heap.compacted').length, 1);
      const c = events[compacted]!;
      assert.ok(c.young_mb_after! <= c.young_mb_before!, JSON.stringify(c));
      assert.ok(c.rss_mb_before! > 0 && c.rss_mb_after! > 0, JSON.stringify(c));
      const health = await fetch(`${replica.url}/healthz`);
      assert.is(health.status, 200);
    } finally {
      await replica.stop();
    }
  } finally {
    await backing.drop();
  }
});

heap.run();
