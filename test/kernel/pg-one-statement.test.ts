import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { keptChars, oneStatement, splitRows } from '../../kernel/store/pg-one-statement.js';
import { plan } from '../../kernel/store/group-plan.js';
import type { DurableWrite } from '../../kernel/store/durable-writes.js';

const usage = 'insert into usage_records (id, charge) values (?, ?), (?, ?)';
const totals = "insert into budget_totals (k, amount) values (?, ?) on conflict (k) do update set amount = budget_totals.amount + excluded.amount returning k, amount";

test('a group of inserts is one statement: parts as CTEs, placeholders numbered across them, parameters in order', () => {
  const one = oneStatement([
    { sql: usage, params: ['u1', 5, 'u2', 7] },
    { sql: totals, params: ['t1', 12], returning: true },
  ]);
  assert.ok(one);
  assert.is(
    one.text,
    'with w0 as (insert into usage_records (id, charge) values ($1, $2), ($3, $4)), ' +
      "w1 as (insert into budget_totals (k, amount) values ($5, $6) on conflict (k) do update set amount = budget_totals.amount + excluded.amount returning k, amount) " +
      'select * from w1',
  );
  assert.equal(one.params, ['u1', 5, 'u2', 7, 't1', 12]);
  assert.is(one.only, 1, 'the one part returning rows gets them as its own columns');
});

test('the same composition finds the same text again; another composition gets its own', () => {
  const a = oneStatement([{ sql: usage, params: [1, 2, 3, 4] }, { sql: totals, params: [5, 6], returning: true }])!;
  const kept = keptChars();
  const b = oneStatement([{ sql: usage, params: [9, 9, 9, 9] }, { sql: totals, params: [8, 8], returning: true }])!;
  assert.is(keptChars(), kept, 'found again, not built again');
  assert.is(b.text, a.text);
  assert.equal(b.params, [9, 9, 9, 9, 8, 8]);
  const plain = oneStatement([{ sql: usage, params: [1, 2, 3, 4] }, { sql: totals, params: [5, 6] }])!;
  assert.is.not(plain.text, a.text, 'whether a part returns rows is part of the composition');
  assert.match(plain.text, /select null::int as i, null::jsonb as r where false$/);
  const three = oneStatement([{ sql: usage, params: [1, 2, 3, 4] }, { sql: totals, params: [5, 6], returning: true }, { sql: usage, params: [7, 8, 9, 10] }])!;
  assert.match(three.text, /w2 as \(insert into usage_records \(id, charge\) values \(\$7, \$8\), \(\$9, \$10\)\)/);
  const two = oneStatement([{ sql: totals, params: [1, 2], returning: true }, { sql: totals.replace('budget_totals', 'other_totals'), params: [3, 4], returning: true }])!;
  assert.is(two.only, undefined);
  assert.match(two.text, / select 0 as i, to_jsonb\(w0\) as r from w0 union all select 1 as i, to_jsonb\(w1\) as r from w1$/);
});

test('a very long combined text is made for its group and not kept', () => {
  const rows = Array.from({ length: 3000 }, () => '(?, ?)').join(', ');
  const big = `insert into usage_records (id, charge) values ${rows}`;
  const params = Array.from({ length: 6000 }, (_, i) => i);
  const kept = keptChars();
  const a = oneStatement([{ sql: big, params }, { sql: totals, params: [1, 2], returning: true }])!;
  assert.is(keptChars(), kept, 'not kept');
  assert.match(a.text, /\(\$5999, \$6000\)\), w1 as \(insert into budget_totals \(k, amount\) values \(\$6001, \$6002\)/);
  assert.is(a.params.length, 6002);
});

test('only groups of two or more inserts qualify', () => {
  assert.is(oneStatement([{ sql: usage, params: [1, 2, 3, 4] }]), undefined);
  assert.is(oneStatement([{ sql: usage, params: [1, 2, 3, 4] }, { sql: 'update budget_caps set amount = ?', params: [1] }]), undefined);
  assert.is(oneStatement([{ sql: 'delete from usage_records where id = ?', params: [1] }, { sql: usage, params: [1, 2, 3, 4] }]), undefined);
});

test('splitRows hands each part its own rows, in order', () => {
  const own = [{ k: 'a', v: '3' }];
  assert.equal(splitRows(own, 2, 1), [[], own], 'one returning part: the rows as they came');
  const rows = [
    { i: 1, r: { k: 'a', amount: 3 } },
    { i: 2, r: { k: 'b', amount: 4 } },
    { i: 1, r: { k: 'c', amount: 5 } },
  ];
  assert.equal(splitRows(rows, 3), [[], [{ k: 'a', amount: 3 }, { k: 'c', amount: 5 }], [{ k: 'b', amount: 4 }]]);
});

test.run();

test("a planned group's parts share one parameter list, which the combined statement binds as it is; SQLite's parts get their own", () => {
  const into = { table: 'budget_totals', keyColumn: 'k', valueColumn: 'amount' };
  const hook = () => {};
  const writes: DurableWrite[] = [
    { kind: 'insert', table: 'usage_records', columns: ['id', 'charge'], rows: [['u1', 5]] },
    { kind: 'add', into, now: 0, keys: ['a', 'b', 'c'], amount: 5, onTotals: hook, returning: ['b'] },
    { kind: 'insert', table: 'usage_records', columns: ['id', 'charge'], rows: [['u2', 7]] },
    { kind: 'add', into, now: 0, keys: ['a', 'b', 'c'], amount: 7, onTotals: hook, returning: ['b'] },
  ];
  const planned = plan(writes, false);
  assert.equal(planned.map((s) => [s.at, s.count, s.returning === true]), [[0, 4, false], [4, 2, true], [6, 4, false]]);
  assert.ok(planned.every((s) => s.params === planned[0]!.params));
  assert.equal(planned[0]!.params, ['u1', 5, 'u2', 7, 'b', 12, 'a', 12, 'c', 12]);
  const one = oneStatement(planned)!;
  assert.is(one.params, planned[0]!.params, 'not copied');
  // A list shared with something else is copied: only each part's own values go.
  const partial = oneStatement([planned[0]!, planned[2]!])!;
  assert.equal(partial.params, ['u1', 5, 'u2', 7, 'a', 12, 'c', 12]);
  const sqlite = plan(writes, true);
  assert.equal(sqlite.map((s) => s.params), [['u1', 5, 'u2', 7], ['b', 12], ['a', 12, 'c', 12]]);
  assert.ok(sqlite.every((s) => s.at === undefined));
});
