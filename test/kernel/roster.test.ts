import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Roster } from '../../kernel/pipeline/roster.js';

const test = suite('kernel: roster (per-request registries)');

test('entries join and leave; size and values follow; an emptied slot is reused', () => {
  const roster = new Roster<{ n: number }>();
  const a = { n: 1 };
  const b = { n: 2 };
  const c = { n: 3 };
  const sa = roster.add(a);
  const sb = roster.add(b);
  assert.is(roster.size, 2);
  assert.equal(roster.values(), [a, b]);
  roster.remove(sa, a);
  assert.is(roster.size, 1);
  assert.is(roster.at(sa), undefined);
  assert.equal(roster.values(), [b]);
  const sc = roster.add(c);
  assert.is(sc, sa, 'the freed slot is used again, so the array does not grow with the number of requests served');
  assert.equal(roster.values(), [c, b]);
  assert.is(roster.at(sb), b);
});

test('removing twice, or with an entry the slot no longer holds, changes nothing', () => {
  const roster = new Roster<string>();
  const s = roster.add('first');
  roster.remove(s, 'first');
  assert.is(roster.add('second'), s);
  roster.remove(s, 'first');
  assert.is(roster.size, 1);
  assert.is(roster.at(s), 'second');
  roster.remove(99, 'second');
  assert.is(roster.size, 1);
});

test('clear() forgets every entry; removing one of them afterwards changes nothing', () => {
  const roster = new Roster<string>();
  const s = roster.add('old');
  roster.add('other');
  roster.clear();
  assert.is(roster.size, 0);
  assert.equal(roster.values(), []);
  const n = roster.add('new');
  assert.is(n, 0);
  roster.remove(s, 'old');
  assert.is(roster.size, 1);
  assert.equal(roster.values(), ['new']);
});

test('values() is a copy: entries may leave while the caller walks it', () => {
  const roster = new Roster<number>();
  const slots = [10, 20, 30].map((v) => roster.add(v));
  const seen: number[] = [];
  for (const v of roster.values()) {
    seen.push(v);
    roster.remove(slots[0]!, 10);
    roster.remove(slots[2]!, 30);
  }
  assert.equal(seen, [10, 20, 30]);
  assert.equal(roster.values(), [20]);
});

test('a thousand requests served one after another leave one slot behind, not a thousand', () => {
  const roster = new Roster<object>();
  for (let i = 0; i < 1000; i++) {
    const o = {};
    roster.remove(roster.add(o), o);
  }
  assert.is(roster.size, 0);
  assert.is(roster.add({}), 0);
  assert.is(roster.add({}), 1);
});

test.run();
