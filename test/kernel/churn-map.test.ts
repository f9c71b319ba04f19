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

test.run();
