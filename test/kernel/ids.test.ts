import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newRequestId, orderedId, orderedUuid, randomId } from '../../kernel/http/ids.js';

const ids = suite('ids');

ids('request ids are req_, nine time characters and twelve random URL-safe ones', () => {
  const id = newRequestId();
  assert.match(id, /^req_[0-9a-v]{9}[A-Za-z0-9_-]{12}$/);
  assert.is.not(newRequestId(), id);
});

ids('ordered ids sort as their times do, across a change in the number of digits of either', () => {
  const times = [0, 1, 31, 32, 1_000, 1_764_000_000_000, 1_764_000_000_001, 1_764_086_400_000, 2 ** 44];
  const made = times.map((t) => orderedId('x_', 9, t));
  assert.equal([...made].sort(), made);
  for (const id of made) assert.match(id, /^x_[0-9a-v]{9}[A-Za-z0-9_-]{12}$/);
});

ids('ordered ids made in the same millisecond still differ', () => {
  const seen = new Set(Array.from({ length: 5_000 }, () => orderedId('m_', 9, 1_764_000_000_000)));
  assert.is(seen.size, 5_000);
});

ids('ordered ids made in the same millisecond sort in the order they were made (an audit entry after the one before it)', () => {
  const made = Array.from({ length: 1_000 }, () => orderedId('aud_', 9, 1_764_000_000_123));
  assert.equal([...made].sort(), made);
  // The same in the byte order PostgreSQL's "C" collation and SQLite use, and the next millisecond starts over after them.
  const next = orderedId('aud_', 9, 1_764_000_000_124);
  assert.ok(next > made[made.length - 1]!);
  assert.match(next, /^aud_[0-9a-v]{9}00[A-Za-z0-9_-]{10}$/);
});

ids('ordered UUIDs are version 7 with the RFC 9562 variant and sort by time', () => {
  const a = orderedUuid(1_764_000_000_000);
  const b = orderedUuid(1_764_000_000_001);
  const c = orderedUuid(1_900_000_000_000);
  for (const u of [a, b, c]) assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal([c, a, b].sort(), [a, b, c]);
  // The first 48 bits are the milliseconds.
  assert.is(parseInt(a.slice(0, 8) + a.slice(9, 13), 16), 1_764_000_000_000);
});

ids('random ids come from the pool across its refills', () => {
  const seen = new Set(Array.from({ length: 2_000 }, () => randomId(12, 'hex')));
  assert.is(seen.size, 2_000);
});

ids.run();
