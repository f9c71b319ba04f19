import { mkdtempSync, rmSync, statSync } from 'node:fs';
import dc from 'node:diagnostics_channel';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteWriter } from '../../kernel/store/sqlite-writer.js';

/**
 * The embedded shape's writes behind the response (kernel/store/sqlite-writer.ts): a second
 * connection on the event loop that never blocks it, and checkpoints on a thread that ends when
 * writes stop. On a real database file in both shapes (the file is the unit under test).
 */
const test = suite('kernel: SQLite writer on the event loop');
let dir: string;
let file: string;
let other: DatabaseSync;

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-writer-'));
  file = join(dir, 'svc.db');
  other = new DatabaseSync(file);
  other.exec('pragma journal_mode = wal; pragma wal_autocheckpoint = 0; create table t (n integer primary key autoincrement, v text not null)');
});
test.after.each(() => {
  if (other.isOpen) other.close();
  rmSync(dir, { recursive: true, force: true });
});

const values = (): string[] => (other.prepare('select v from t order by n').all() as Array<{ v: string }>).map((r) => r.v);
const walBytes = (): number => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

test('a lock held by another connection: writes wait on timers (the loop keeps turning), then land in the order given', async () => {
  const writer = new SqliteWriter(file);
  other.exec('begin immediate');
  other.exec("insert into t (v) values ('held')");
  const writes = [writer.run('insert into t (v) values (?)', ['a']), writer.commit([{ sql: 'insert into t (v) values (?)', params: ['b'] }]), writer.run('insert into t (v) values (?)', ['c'])];
  // A busy_timeout would hold the loop for 5 s inside the first write; the queue waits on timers.
  const started = Date.now();
  for (let i = 0; i < 10; i++) await sleep(5);
  assert.ok(Date.now() - started < 2000, `ten 5 ms timers took ${Date.now() - started} ms`);
  assert.equal(values(), ['held']); // nothing of the writer's yet: the lock is still held
  other.exec('commit');
  await Promise.all(writes);
  assert.equal(values(), ['held', 'a', 'b', 'c']);
  await writer.close();
});

test('a lock held past 5 s fails that write with SQLITE_BUSY; the next write lands', async () => {
  const writer = new SqliteWriter(file);
  other.exec('begin immediate');
  const started = Date.now();
  const err = await writer.run('insert into t (v) values (?)', ['late']).then(() => null, (e: { errcode?: number }) => e);
  assert.ok(err, 'the write failed');
  assert.is(Number(err!.errcode) & 0xff, 5);
  assert.ok(Date.now() - started >= 4900, `waited ${Date.now() - started} ms`);
  other.exec('rollback');
  await writer.run('insert into t (v) values (?)', ['next']);
  assert.equal(values(), ['next']);
  await writer.close();
});

test('one transaction: each statement gets its own rows as plain objects; a failing statement rolls all back', async () => {
  const writer = new SqliteWriter(file);
  const rows = await writer.commit([
    { sql: 'insert into t (v) values (?) returning n, v', params: ['x'], returning: true },
    { sql: 'insert into t (v) values (?)', params: ['y'] },
    { sql: 'select count(*) as c from t', params: [], returning: true },
  ]);
  assert.equal(rows, [[{ n: 1, v: 'x' }], [], [{ c: 2 }]]);
  assert.is(Object.getPrototypeOf(rows[0]![0]), Object.prototype);
  const err = await writer.commit([{ sql: 'insert into t (v) values (?)', params: ['z'] }, { sql: 'insert into t (v) values (?)', params: [null] }]).then(() => null, (e: Error) => e);
  assert.match(String(err?.message), /NOT NULL/);
  assert.equal(values(), ['x', 'y']);
  // Booleans, dates and undefined are bound as both drivers bind them (1/0, ISO text, null), in the given list.
  const params: unknown[] = [true, new Date(0), false];
  const [bound] = await writer.commit([{ sql: 'select ? as a, ? as b, ? as c', params, returning: true }]);
  assert.equal(bound, [{ a: 1, b: '1970-01-01T00:00:00.000Z', c: 0 }]);
  assert.equal(params, [1, '1970-01-01T00:00:00.000Z', 0]);
  // Each transaction is published as it begins and ends, a failed one too (timeline probe).
  const marks: string[] = [];
  const start = (): number => marks.push('start');
  const end = (): number => marks.push('end');
  dc.subscribe('svc.store.transaction.start', start);
  dc.subscribe('svc.store.transaction.end', end);
  await writer.commit([{ sql: 'insert into t (v) values (?)', params: ['w'] }]);
  await writer.commit([{ sql: 'insert into t (v) values (?)', params: [null] }]).catch(() => marks.push('failed'));
  dc.unsubscribe('svc.store.transaction.start', start);
  dc.unsubscribe('svc.store.transaction.end', end);
  assert.equal(marks, ['start', 'end', 'start', 'end', 'failed']);
  await writer.close();
});

test('checkpoints: a WAL past startBytes starts a thread, which keeps it copied, truncates it and ends when writes stop; a grown WAL starts it again', async () => {
  const writer = new SqliteWriter(file, { intervalMs: 50, quietMs: 300, startBytes: 64 * 1024 });
  const checkpointer = (writer as unknown as { checkpointer: { running: boolean } }).checkpointer;
  // Light use: a small WAL, no thread (an idle or quiet service keeps none).
  for (let i = 0; i < 5; i++) {
    await writer.run('insert into t (v) values (?)', [`row ${i}`]);
    await sleep(60);
  }
  assert.ok(walBytes() > 0 && walBytes() < 64 * 1024, `WAL ${walBytes()} bytes`);
  assert.is(checkpointer.running, false);
  // Heavier use: the WAL passes 64 KB and the next look at it starts the thread.
  const big = 'x'.repeat(4000);
  for (let i = 0; i < 40; i++) await writer.run('insert into t (v) values (?)', [big]);
  for (let i = 0; i < 20 && !checkpointer.running; i++) {
    await sleep(60);
    await writer.run('insert into t (v) values (?)', ['more']);
  }
  assert.is(checkpointer.running, true);
  for (let i = 0; i < 100 && checkpointer.running; i++) await sleep(50);
  assert.is(checkpointer.running, false, 'the thread ended after the quiet spell');
  assert.is(walBytes(), 0, 'the WAL was truncated');
  // Everything is in the database file itself: a reader without the WAL sees it.
  const rows = (other.prepare('select count(*) as c from t').get() as { c: number }).c;
  other.close();
  const reader = new DatabaseSync(file, { readOnly: true });
  assert.is((reader.prepare('select count(*) as c from t').get() as { c: number }).c, rows);
  reader.close();
  for (let i = 0; i < 40; i++) await writer.run('insert into t (v) values (?)', [big]);
  for (let i = 0; i < 20 && !checkpointer.running; i++) {
    await sleep(60);
    await writer.run('insert into t (v) values (?)', ['again']);
  }
  assert.is(checkpointer.running, true);
  await writer.close();
  assert.is(checkpointer.running, false);
});

test('checkpoints under steady writes: the WAL starts over instead of growing for as long as writes come', async () => {
  // A passive checkpoint alone never catches up with a writer that never pauses: the WAL grew
  // with every write (15 MB a second under load) until the writes stopped.
  const writer = new SqliteWriter(file, { intervalMs: 50, quietMs: 5000, startBytes: 64 * 1024, restartFrames: 64 });
  const big = 'x'.repeat(4000);
  // 3,000 one-row transactions left 50–64 MB of WAL before the fix, 4 MB after it.
  for (let written = 0; written < 3000; written += 2) {
    await Promise.all([writer.run('insert into t (v) values (?)', [big]), writer.run('insert into t (v) values (?)', [big])]);
    await sleep(1);
  }
  assert.ok(walBytes() < 12 * 1024 * 1024, `WAL ${walBytes()} bytes after 3,000 rows of a page each`);
  assert.is((other.prepare('select count(*) as c from t').get() as { c: number }).c, 3000);
  await writer.close();
});

test('close: queued writes land first; writes after it are refused with ERR_WRITER_STOPPED', async () => {
  const writer = new SqliteWriter(file);
  const queued = [writer.run('insert into t (v) values (?)', ['1']), writer.run('insert into t (v) values (?)', ['2'])];
  await writer.close();
  await Promise.all(queued);
  assert.equal(values(), ['1', '2']);
  const err = await writer.run('insert into t (v) values (?)', ['3']).then(() => null, (e: { code?: string }) => e);
  assert.is(err?.code, 'ERR_WRITER_STOPPED');
});

test.run();
