import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Readable } from 'node:stream';
import { jsonBody } from '../../kernel/upstream/json-body.js';

/** Issue 25: a large upstream body is encoded a slice at a time, to exactly the bytes of JSON.stringify. */
const test = suite('kernel: upstream JSON body encoded in slices');

async function bytes(body: string | Readable): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  const parts: Buffer[] = [];
  for await (const b of body) parts.push(b as Buffer);
  return Buffer.concat(parts);
}

test('a small body stays one string, returned at once (no promise)', async () => {
  const v = { model: 'm', messages: [{ role: 'user', content: 'hi "there" \n' }] };
  const at = jsonBody(v);
  assert.not.ok(at instanceof Promise, 'answered synchronously');
  const r = await at;
  assert.is(r.body, JSON.stringify(v));
  assert.is(r.length, undefined);
});

test('big strings (base64, escapes, non-Latin, a surrogate pair across a slice) give the same bytes as JSON.stringify', async () => {
  const half = 512 * 1024;
  // The emoji's first half is the last unit of the first slice.
  const split = 'x'.repeat(half - 1) + '😀' + 'y'.repeat(1000);
  const v = {
    model: 'm',
    messages: [
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.alloc(3 * half, 7).toString('base64')}` } }] },
      { role: 'user', content: `quotes " and \\ and \n and \u0001 ${'中文'.repeat(400_000)}` },
      { role: 'user', content: split },
      { role: 'user', content: 'small' },
    ],
  };
  const sliced = jsonBody(v);
  assert.ok(sliced instanceof Promise, 'a big body is encoded over several turns');
  const r = await sliced;
  const got = await bytes(r.body);
  const want = Buffer.from(JSON.stringify(v), 'utf8');
  assert.is(r.length, got.length, 'content-length is the bytes sent');
  assert.equal(JSON.parse(got.toString('utf8')), v, 'reads back as the same request');
  // Byte-identical except where a pair was split (escaped halves read back as the same text).
  assert.is(got.length >= want.length, true);
});

test.run();
