import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ChurnMap } from '../../kernel/pipeline/churn-map.js';

const test = suite('kernel: churn map (string-keyed entries that come and go with requests)');

test('set, get, has, delete and size behave as a Map', () => {
  const m = new ChurnMap<number>();
  assert.is(m.size, 0);
  m.set('a', 1).set('b', 2).set('a', 3);
  assert.is(m.size, 2, 'setting a key again replaces its value');
  assert.is(m.get('a'), 3);
  assert.ok(m.has('b'));
  assert.not.ok(m.has('c'));
  assert.is(m.get('c'), undefined);
  assert.ok(m.delete('a'));
  assert.not.ok(m.delete('a'), 'a second delete reports nothing removed');
  assert.is(m.size, 1);
  assert.equal(m.keys(), ['b']);
  assert.equal(m.values(), [2]);
  assert.equal(m.pairs(), [['b', 2]]);
  m.clear();
  assert.is(m.size, 0);
  assert.equal(m.keys(), []);
});

test('keys that are Object.prototype names or look like numbers are ordinary keys', () => {
  const m = new ChurnMap<string>();
  for (const k of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '42', '']) {
    assert.not.ok(m.has(k), k);
    m.set(k, `v${k}`);
    assert.is(m.get(k), `v${k}`);
  }
  assert.is(m.size, 6);
  for (const k of ['__proto__', 'constructor', '42', '']) assert.ok(m.delete(k), k);
  assert.is(m.size, 2);
  assert.equal(m.keys().sort(), ['hasOwnProperty', 'toString']);
});

test('pairs() is a copy: entries may leave while the caller walks it', () => {
  const m = new ChurnMap<number>();
  for (let i = 0; i < 5; i++) m.set(`k${i}`, i);
  let walked = 0;
  for (const [k] of m.pairs()) {
    walked++;
    m.delete(k);
  }
  assert.is(walked, 5);
  assert.is(m.size, 0);
});

test('agrees with a Map through a long random run of sets and deletes (probing, removed slots, rebuilds)', () => {
  const m = new ChurnMap<number>();
  const ref = new Map<string, number>();
  let seed = 7;
  const rand = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  for (let step = 0; step < 50_000; step++) {
    // Few distinct keys at a time (requests in flight), a long stream of them over the run.
    const key = `hold-${rand(200) + Math.floor(step / 500) * 50}`;
    if (rand(3) === 0) assert.is(m.delete(key), ref.delete(key), `delete ${key} at ${step}`);
    else {
      m.set(key, step);
      ref.set(key, step);
    }
    if (step % 997 === 0) {
      assert.is(m.size, ref.size, `size at ${step}`);
      assert.equal(m.pairs().sort(), [...ref].sort(), `entries at ${step}`);
    }
    assert.is(m.get(key), ref.get(key));
  }
  assert.equal(m.pairs().sort(), [...ref].sort());
});

test('long keys that differ only in the middle (the part the hash skips) stay distinct entries', () => {
  const m = new ChurnMap<number>();
  const ends = 'x'.repeat(40);
  const keys = Array.from({ length: 300 }, (_, i) => `${ends}${String(i).padStart(5, '0')}${ends}`);
  keys.forEach((k, i) => m.set(k, i));
  assert.is(m.size, 300);
  keys.forEach((k, i) => assert.is(m.get(k), i));
  // An equal key built afresh (another string object) finds its entry.
  assert.is(m.get(`${ends}00042${ends}`), 42);
  for (let i = 0; i < 300; i += 2) assert.ok(m.delete(keys[i]!));
  keys.forEach((k, i) => assert.is(m.has(k), i % 2 === 1));
  assert.is(m.size, 150);
});

test.run();
