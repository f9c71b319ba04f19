import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, type Backing } from '../support/harness.js';
import { loadConfig } from '../../kernel/config/load.js';
import { openStore, type Store } from '../../kernel/store/orm.js';
import { BatchWriter } from '../../kernel/store/batch-writer.js';

/**
 * Rows written behind the response (kernel/store/batch-writer.ts) on the shape's real database:
 * every row lands once and in order, SQLite gets a bounded set of statement texts (power-of-two
 * slices, so its prepared statements are reused), and a failed slice loses nothing.
 */
const test = suite('kernel: batch writer');
let backing: Backing;
let store: Store;
/** Statement texts the writer sent, by row count; `failAt` makes that call (1-based) fail once. */
let sent: number[] = [];
let failAt = 0;
let calls = 0;

/** The real store, watched: counts each insert's rows and can refuse one call like a database blip. */
function watched(real: Store): Store {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== 'writeBehind') return Reflect.get(target, prop, receiver);
      return async (sql: string, params: unknown[]) => {
        calls++;
        if (calls === failAt) throw Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
        sent.push((sql.match(/\(\?/g) ?? []).length);
        return target.writeBehind(sql, params);
      };
    },
  });
}

test.before(async () => {
  backing = await createBacking();
  const { config } = loadConfig({}, { dataDir: backing.dataDir, database: backing.databaseUrl ? { url: backing.databaseUrl } : {} });
  store = await openStore(config, []);
  await store.execute('create table bw_rows (id varchar(40) primary key, n bigint not null)');
});
test.after(async () => {
  await store.close();
  await backing.drop();
});
test.before.each(async () => {
  await store.execute('delete from bw_rows');
  sent = [];
  failAt = 0;
  calls = 0;
});

const ids = async (): Promise<string[]> => (await store.execute<{ id: string }>('select id from bw_rows order by n')).map((r) => r.id);

test('37 rows: all written in order; SQLite as slices of 32, 4 and 1 rows, PostgreSQL as one statement', async () => {
  const w = new BatchWriter(watched(store), 'bw_rows', ['id', 'n'], 60_000);
  for (let i = 0; i < 37; i++) assert.ok(w.add([`r${i}`, i]));
  await w.flush();
  assert.equal(await ids(), Array.from({ length: 37 }, (_, i) => `r${i}`));
  assert.equal(sent, store.dialect === 'sqlite' ? [32, 4, 1] : [37]);
  assert.is(w.pending, 0);
});

test('batches of every size from 1 to 200 use at most eight statement texts on SQLite', async () => {
  const w = new BatchWriter(watched(store), 'bw_rows', ['id', 'n'], 60_000, 100_000);
  let n = 0;
  for (let size = 1; size <= 200; size += 13) {
    for (let i = 0; i < size; i++, n++) w.add([`s${n}`, n]);
    await w.flush();
  }
  assert.is((await ids()).length, n);
  const distinct = new Set(sent);
  if (store.dialect === 'sqlite') {
    assert.ok(distinct.size <= 8, `${distinct.size} texts`);
    for (const size of distinct) assert.is(size & (size - 1), 0, `${size} rows is a power of two`);
  } else assert.is(sent.length, 16, 'one statement per round on PostgreSQL');
});

test('a slice that fails puts back only the rows not yet written; the retry writes each row once', async () => {
  const errors: number[] = [];
  const w = new BatchWriter(watched(store), 'bw_rows', ['id', 'n'], 60_000, 500, 100_000, (rows) => errors.push(rows));
  for (let i = 0; i < 37; i++) w.add([`f${i}`, i]);
  failAt = store.dialect === 'sqlite' ? 2 : 1; // SQLite: the 4-row slice, after the 32 were written
  await w.flush();
  const expectedLeft = store.dialect === 'sqlite' ? 5 : 37;
  assert.equal(errors, [expectedLeft]);
  assert.is(w.pending, expectedLeft);
  assert.is((await ids()).length, 37 - expectedLeft);
  await w.flush();
  assert.equal(await ids(), Array.from({ length: 37 }, (_, i) => `f${i}`));
  assert.is(w.pending, 0);
});

test.run();
