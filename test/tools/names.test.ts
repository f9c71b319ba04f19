import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { functionName } from '../../plugins/tools/names.js';

const test = suite('tools: function names for workspace tools');
const valid = /^[a-zA-Z0-9_-]{1,64}$/;

test('server and tool joined; characters OpenAI-format names refuse become _', () => {
  assert.is(functionName('files', 'lookup', new Set()), 'files__lookup');
  assert.is(functionName('gh', 'repos.get-issue', new Set()), 'gh__repos_get-issue');
});

test('a name over 64 characters (MCP allows 128) ends in a hash; distinct long names stay distinct and valid', () => {
  const a = functionName('server', `${'a'.repeat(100)}.one`, new Set());
  const b = functionName('server', `${'a'.repeat(100)}.two`, new Set());
  assert.ok(valid.test(a) && valid.test(b));
  assert.is(a.length, 64);
  assert.is.not(a, b);
  assert.is(functionName('server', `${'a'.repeat(100)}.one`, new Set()), a, 'stable');
});

test("a collision with a client's tool or another workspace tool gets another valid name", () => {
  const taken = new Set(['files__lookup']);
  const n = functionName('files', 'lookup', taken);
  assert.ok(valid.test(n));
  assert.is.not(n, 'files__lookup');
  // a.b and a_b would both become files__a_b
  const first = functionName('files', 'a.b', new Set());
  const second = functionName('files', 'a_b', new Set([first]));
  assert.is.not(first, second);
  assert.ok(valid.test(second));
  const third = functionName('files', 'a_b', new Set([first, second]));
  assert.ok(![first, second].includes(third) && valid.test(third));
});

test.run();
