import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, MemorySink, type Backing } from '../support/harness.js';
import { loadConfig } from '../../kernel/config/load.js';
import { createLogger } from '../../kernel/log/logger.js';
import { openStore, type Store } from '../../kernel/store/orm.js';
import { GroupCommit, type DurableWrite } from '../../kernel/store/group-commit.js';

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

const usage = (id: string, cost: unknown): DurableWrite => ({ kind: 'insert', table: 'gc_usage', columns: ['id', 'cost'], rows: [[id, cost]] });
const add = (amount: number, seen?: Array<Array<{ key: string; after: number; added: number }>>): DurableWrite => ({
  kind: 'add', table: 'gc_totals', keyColumn: 'k', valueColumn: 'v', now: 0, deltas: [['total', amount]], onTotals: seen ? (rows) => seen.push(rows) : undefined,
});

test('requests settling together share one transaction; each statement gets its own rows', async () => {
  const seen: Array<Array<{ key: string; after: number; added: number }>> = [];
  await commits.commit([usage('r0', 1), add(1, seen)]);
  // Three requests settling at once: one multi-row insert, one upsert with their sum.
  await Promise.all(['r1', 'r2', 'r3'].map((id) => commits.commit([usage(id, 5), add(5, seen)])));
  assert.equal(seen, [[{ key: 'total', after: 1, added: 1 }], ...Array(3).fill([{ key: 'total', after: 16, added: 15 }])]);
});

test('a request committed before (duplicate usage id) counts as committed; the others of its group still land', async () => {
  await Promise.all([commits.commit([usage('r1', 5), add(5)]), commits.commit([usage('r4', 7), add(7)])]);
  const [t] = await store.execute<{ v: string | number }>("select v from gc_totals where k = 'total'");
  assert.is(Number(t!.v), 23, 'the duplicate added nothing, the other request its 7');
  const [u] = await store.execute<{ n: string | number }>('select count(*) as n from gc_usage');
  assert.is(Number(u!.n), 5);
});

test('a statement no retry can fix fails its request only, and is logged without its values', async () => {
  const bad = commits.commit([usage('CANARY-r5', null)]).then(() => 'committed', () => 'failed');
  const good = commits.commit([usage('r6', 1)]).then(() => 'committed', () => 'failed');
  assert.equal([await bad, await good], ['failed', 'committed']);
  assert.is(logs.events('store.commit_failed').length, 1);
  assert.not.match(logs.text, /CANARY/);
});

test.run();
