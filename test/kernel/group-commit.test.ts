import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, MemorySink, type Backing } from '../support/harness.js';
import { loadConfig } from '../../kernel/config/load.js';
import { createLogger } from '../../kernel/log/logger.js';
import { openStore, type Store } from '../../kernel/store/orm.js';
import { GroupCommit, type AfterCommit, type DurableWrite, type GroupStep, type TotalsTable } from '../../kernel/store/group-commit.js';
import { flatRows, powerOfTwoSizes, sliceSizes } from '../../kernel/store/durable-writes.js';
import { Pipeline } from '../../kernel/pipeline/pipeline.js';
import type { RequestContext } from '../../kernel/pipeline/context.js';

/** The durable commit of settle hooks (kernel/store/group-commit.ts), on the shape's real database. */
const test = suite('kernel: group commit of money records');
let backing: Backing;
let store: Store;
const logs = new MemorySink();
let commits: GroupCommit;

test.before(async () => {
  backing = await createBacking();
  const { config } = loadConfig({}, { dataDir: backing.dataDir, database: backing.databaseUrl ? { url: backing.databaseUrl } : {} });
  store = await openStore(config, []);
  await store.execute('create table gc_usage (id varchar(40) primary key, cost bigint not null)');
  await store.execute('create table gc_totals (k varchar(40) primary key, v bigint not null)');
  commits = new GroupCommit(store, createLogger('info', logs), 10);
});
test.after(async () => {
  await store.close();
  await backing.drop();
});

const gcTotals: TotalsTable = { table: 'gc_totals', keyColumn: 'k', valueColumn: 'v' };
const usage = (id: string, cost: unknown): DurableWrite => ({ kind: 'insert', table: 'gc_usage', columns: ['id', 'cost'], rows: [[id, cost]] });
const add = (amount: number, seen?: Array<Array<{ key: string; before: number; after: number }>>): DurableWrite => ({
  kind: 'add', into: gcTotals, now: 0, keys: ['total'], amount, onTotals: seen ? (rows) => seen.push(rows) : undefined,
});

test('requests settling together share one transaction; each statement gets its own rows', async () => {
  const seen: Array<Array<{ key: string; before: number; after: number }>> = [];
  await commits.commit([usage('r0', 1), add(1, seen)]);
  // Three requests settling at once: one multi-row insert, one upsert with their sum.
  await Promise.all(['r1', 'r2', 'r3'].map((id) => commits.commit([usage(id, 5), add(5, seen)])));
  assert.equal(seen, [[{ key: 'total', before: 0, after: 1 }], ...Array(3).fill([{ key: 'total', before: 1, after: 16 }])]);
});

test('a group larger than one statement slice: every request lands, every total reaches its own hook', async () => {
  const ids = Array.from({ length: 37 }, (_, i) => `big${i}`);
  const seen = new Map<string, Array<{ key: string; before: number; after: number }>>();
  const own = (id: string, amount: number): DurableWrite => ({
    kind: 'add', into: gcTotals, now: 0, keys: [`k-${id}`, 'shared'], amount, onTotals: (rows) => seen.set(id, rows),
  });
  await Promise.all(ids.map((id, i) => commits.commit([usage(id, i), own(id, i + 1)])));
  const sharedAfter = (37 * 38) / 2;
  for (const [i, id] of ids.entries()) {
    const rows = seen.get(id)!;
    assert.equal(rows.find((r) => r.key === `k-${id}`), { key: `k-${id}`, before: 0, after: i + 1 }, id);
    assert.is(rows.find((r) => r.key === 'shared')!.after <= sharedAfter, true);
  }
  const [u] = await store.execute<{ n: string | number }>("select count(*) as n from gc_usage where id like 'big%'");
  assert.is(Number(u!.n), 37);
  const [t] = await store.execute<{ v: string | number }>("select v from gc_totals where k = 'shared'");
  assert.is(Number(t!.v), sharedAfter);
});

test('with a commit delay, requests settling a moment apart share one transaction; idle() commits at once', async () => {
  const lingering = new GroupCommit(store, createLogger('info', logs), 10, 200, 60_000);
  const seen: Array<Array<{ key: string; before: number; after: number }>> = [];
  const add = (amount: number): DurableWrite => ({ kind: 'add', into: gcTotals, now: 0, keys: ['linger'], amount, onTotals: (rows) => seen.push(rows) });
  const first = lingering.commit([usage('d1', 1), add(2)]);
  await new Promise((r) => setTimeout(r, 20));
  const second = lingering.commit([usage('d2', 1), add(3)]);
  assert.is(lingering.pending, 2, 'both wait for the delay');
  await lingering.idle();
  await Promise.all([first, second]);
  assert.is(seen.length, 2);
  assert.is(seen[0]![0]!.after, seen[1]![0]!.after, 'one upsert: both see the same total');
  assert.equal(seen[0], [{ key: 'linger', before: 0, after: 5 }]);
});

test('a hook shared by the requests of a group is called once, with every key staged with it', async () => {
  const calls: Array<Array<{ key: string; before: number; after: number }>> = [];
  const hook = (rows: Array<{ key: string; before: number; after: number }>) => calls.push(rows);
  const shared = ['s1', 's2'];
  const write = (keys: readonly string[], amount: number): DurableWrite => ({ kind: 'add', into: gcTotals, now: 0, keys, amount, onTotals: hook });
  const lingering = new GroupCommit(store, createLogger('info', logs), 10, 200, 60_000);
  const all = [lingering.commit([write(shared, 1)]), lingering.commit([write(shared, 2)]), lingering.commit([write(['s3'], 4)])];
  await lingering.idle();
  await Promise.all(all);
  assert.equal(calls, [[{ key: 's1', before: 0, after: 3 }, { key: 's2', before: 0, after: 3 }, { key: 's3', before: 0, after: 4 }]]);
});

test('returning: every total is added, only the keys named come back to the hook (one upsert returns, one does not)', async () => {
  const calls: Array<Array<{ key: string; before: number; after: number }>> = [];
  const hook = (rows: Array<{ key: string; before: number; after: number }>) => calls.push(rows);
  const keys = ['ret1', 'quiet1', 'ret2', 'quiet2'];
  const returning = ['ret1', 'ret2'];
  const write = (amount: number): DurableWrite => ({ kind: 'add', into: gcTotals, now: 0, keys, amount, onTotals: hook, returning });
  const lingering = new GroupCommit(store, createLogger('info', logs), 10, 200, 60_000);
  const both = [lingering.commit([usage('q1', 1), write(2)]), lingering.commit([usage('q2', 1), write(5)])];
  await lingering.idle();
  await Promise.all(both);
  assert.equal(calls, [[{ key: 'ret1', before: 0, after: 7 }, { key: 'ret2', before: 0, after: 7 }]]);
  const rows = await store.execute<{ k: string; v: string | number }>("select k, v from gc_totals where k in ('ret1', 'quiet1', 'ret2', 'quiet2') order by k");
  assert.equal(rows.map((r) => [r.k, Number(r.v)]), [['quiet1', 7], ['quiet2', 7], ['ret1', 7], ['ret2', 7]]);
  // No key named: nothing comes back, the hook is not called, the totals still grow.
  await commits.commit([{ kind: 'add', into: gcTotals, now: 0, keys: ['quiet1'], amount: 1, onTotals: hook, returning: [] }]);
  assert.is(calls.length, 1);
  const [q] = await store.execute<{ v: string | number }>("select v from gc_totals where k = 'quiet1'");
  assert.is(Number(q!.v), 8);
});

test("PostgreSQL: the group commit's own connection, ended by the server, is replaced; nothing is lost", async () => {
  if (!backing.databaseUrl) return;
  await commits.commit([usage('conn1', 1)]);
  // Every other connection to this test's database ends: the writer's and the pool's.
  const [ended] = await store.execute<{ n: string | number }>(
    'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  assert.ok(Number(ended!.n) >= 1, 'the writer had a connection of its own');
  await new Promise((r) => setTimeout(r, 50));
  const retries = commits.counts.retries;
  await Promise.all([commits.commit([usage('conn2', 2), { kind: 'add', into: gcTotals, now: 0, keys: ['conn-total'], amount: 1 }]), commits.commit([usage('conn3', 3)])]);
  const rows = await store.execute<{ id: string }>("select id from gc_usage where id like 'conn%' order by id");
  assert.equal(rows.map((r) => r.id), ['conn1', 'conn2', 'conn3']);
  assert.is(commits.counts.failed, 0);
  assert.is(commits.counts.retries, retries, 'the ended connection was dropped when it ended, not found dead by a commit');
});

test('a key repeated in one staged list reaches its hook once', async () => {
  const calls: Array<Array<{ key: string; before: number; after: number }>> = [];
  await commits.commit([{ kind: 'add', into: gcTotals, now: 0, keys: ['rep1', 'rep2', 'rep1'], amount: 1, onTotals: (rows) => calls.push(rows) }]);
  assert.equal(calls, [[{ key: 'rep1', before: 0, after: 2 }, { key: 'rep2', before: 0, after: 1 }]]);
});

test('powerOfTwoSizes and flatRows: the slices a group is cut into, flattened from an offset', () => {
  assert.equal(powerOfTwoSizes(37), [32, 4, 1]);
  assert.equal(powerOfTwoSizes(0), []);
  assert.equal(powerOfTwoSizes(64), [64]);
  assert.equal(flatRows([[1, 2], [3, 4], [5, 6]], 2, 1, 2), [3, 4, 5, 6]);
  assert.equal(flatRows([[1, 2, 'x'], [3, 4, 'y']], 2), [1, 2, 3, 4]);
});

test('sliceSizes: powers of two where statement texts are cached (SQLite), one slice otherwise', () => {
  assert.equal(sliceSizes(7, true), [4, 2, 1]);
  assert.equal(sliceSizes(37, true).reduce((a, b) => a + b, 0), 37);
  assert.equal(sliceSizes(0, true), []);
  assert.equal(sliceSizes(37, false), [37]);
});

test('a request committed before (duplicate usage id) counts as committed; the others of its group still land', async () => {
  await Promise.all([commits.commit([usage('r1', 5), add(5)]), commits.commit([usage('r4', 7), add(7)])]);
  const [t] = await store.execute<{ v: string | number }>("select v from gc_totals where k = 'total'");
  assert.is(Number(t!.v), 23, 'the duplicate added nothing, the other request its 7');
  const [u] = await store.execute<{ n: string | number }>("select count(*) as n from gc_usage where id like 'r%'");
  assert.is(Number(u!.n), 5);
});

test('a statement no retry can fix fails its request only, and is logged without its values', async () => {
  const bad = commits.commit([usage('CANARY-r5', null)]).then(() => 'committed', () => 'failed');
  const good = commits.commit([usage('r6', 1)]).then(() => 'committed', () => 'failed');
  assert.equal([await bad, await good], ['failed', 'committed']);
  assert.is(logs.events('store.commit_failed').length, 1);
  assert.not.match(logs.text, /CANARY/);
});

test("one request's writes land together or not at all (PostgreSQL: one statement of CTEs; SQLite: one transaction)", async () => {
  const seen: Array<Array<{ key: string; before: number; after: number }>> = [];
  const broken: DurableWrite = { kind: 'insert', table: 'gc_totals', columns: ['k', 'v'], rows: [['atom-total', null]] };
  const r = await commits.commit([usage('atom1', 3), add(3, seen), broken]).then(() => 'committed', () => 'failed');
  assert.is(r, 'failed');
  const [u] = await store.execute<{ n: string | number }>("select count(*) as n from gc_usage where id = 'atom1'");
  assert.is(Number(u!.n), 0, 'the usage row did not land without the rest');
  assert.equal(seen, [], 'no total was reported as written');
  const [t] = await store.execute<{ v: string | number }>("select v from gc_totals where k = 'total'");
  assert.is(Number(t!.v), 23, 'the running total did not move');
});

test("a group's steps run once, with every item its requests staged, after the commit; its settles end when the step is over; a failing step is logged", async () => {
  const pipeline = new Pipeline();
  const lingering = new GroupCommit(store, createLogger('info', logs), 10, 200, 60_000);
  pipeline.enqueue = (waiter) => lingering.enqueue(waiter);
  const runs: string[][] = [];
  let release!: () => void;
  const slow = new Promise<void>((r) => (release = r));
  const step: GroupStep<AfterCommit & { id: string }> = {
    run: (items) => {
      runs.push(items.map((i) => i.id));
      return slow;
    },
  };
  const failing: GroupStep = {
    run: () => {
      throw Object.assign(new Error('step failed'), { code: 'EPROBE' });
    },
  };
  pipeline.add('settle', 'probe', (ctx) => {
    ctx.durable!.push(usage(ctx.id, 7), { kind: 'after', step, id: `${ctx.id}-a` } as AfterCommit, { kind: 'after', step: failing });
    if (ctx.id === 'step-2') ctx.durable!.push({ kind: 'after', step, id: `${ctx.id}-b` } as AfterCommit);
  });
  const told: string[] = [];
  for (const id of ['step-1', 'step-2']) assert.is(pipeline.settle({ id, durable: [] } as unknown as RequestContext, (plugin, _e, requestId) => told.push(`${plugin}:${requestId}`)), undefined);
  const settled = pipeline.settled();
  assert.equal(runs, [], 'nothing runs before the commit');
  await lingering.idle();
  const rows = await store.execute<{ id: string }>("select id from gc_usage where id like 'step-%' order by id");
  assert.equal(rows.map((r) => r.id), ['step-1', 'step-2'], 'committed');
  assert.equal(runs, [['step-1-a', 'step-2-a', 'step-2-b']], 'one run for the group, items in the order staged');
  let over = false;
  void settled.then(() => (over = true));
  await new Promise((r) => setTimeout(r, 30));
  assert.is(over, false, 'the settles wait for the step');
  release();
  await settled;
  assert.equal(told, [], 'a failing step is not a failed settle');
  assert.equal(logs.events('store.after_commit_failed').map((e) => [e.requests, e.error_code]), [[2, 'EPROBE']]);
});

test('a settle whose writes fail for good is told, and no step gets its items', async () => {
  const pipeline = new Pipeline();
  pipeline.enqueue = (waiter) => commits.enqueue(waiter);
  const ran: unknown[] = [];
  const told: string[] = [];
  const step: GroupStep = { run: (items) => void ran.push(...items) };
  pipeline.add('settle', 'probe', (ctx) => {
    ctx.durable!.push({ kind: 'insert', table: 'gc_usage', columns: ['id', 'cost'], rows: [['bad-1', null]] }, { kind: 'after', step });
  });
  pipeline.settle({ id: 'bad-1', durable: [] } as unknown as RequestContext, (plugin, _err, requestId) => told.push(`${plugin}:${requestId}`));
  await pipeline.settled(5000);
  assert.equal(told, ['kernel:bad-1']);
  assert.equal(ran, []);
});

test.run();
