import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchList } from '../../plugins/catalogue-feed/fetch-list.js';
import { FeedError, openEnvelope } from '../../plugins/catalogue-feed/list.js';
import { parsePublicKey } from '../../plugins/catalogue-feed/signing.js';
import { FeedServer, entry, listText, publisher, signed } from './support.js';

/** The parts of a check that need no service: the document's checks and the fetch's limits. */
const test = suite('catalogue feed: list format and fetch limits');
const old = publisher();
const current = publisher();
const pinned = [parsePublicKey(old.publicKey), parsePublicKey(current.publicKey)];

function code(fn: () => unknown): string {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return err instanceof FeedError ? err.code : `not a FeedError: ${(err as Error).message}`;
  }
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(() => 'no error', (err: unknown) => (err instanceof FeedError ? err.code : `not a FeedError: ${(err as Error).message}`));
}

test('any pinned key verifies (a rotation); the digest is of the signed text', () => {
  const text = listText(2, { openai: [entry('gpt-4o', 1, 2)] }, '2026-11-22T08:00:00+01:00');
  for (const by of [old, current]) {
    const { list, digest } = openEnvelope(signed(text, by), pinned);
    assert.equal([list.sequence, list.issuedAt, list.providers.openai?.[0]?.id], [2, '2026-11-22T07:00:00.000Z', 'gpt-4o']);
    assert.match(digest, /^[0-9a-f]{64}$/);
  }
  assert.is(code(() => openEnvelope(signed(text, publisher()), pinned)), 'bad_signature');
});

test('nothing but a signed, well-formed version-1 list passes', () => {
  const sign = (list: unknown) => signed(JSON.stringify(list), current);
  const base = { version: 1, sequence: 3, issued_at: '2026-11-22T08:00:00Z', providers: { groq: [entry('m', 1, 1)] } };
  assert.is(code(() => openEnvelope('<html>', pinned)), 'malformed');
  assert.is(code(() => openEnvelope(JSON.stringify({ format: 'other', signature: '', list: '{}' }), pinned)), 'malformed');
  assert.is(code(() => openEnvelope(JSON.stringify({ format: 'svc-catalogue-feed', signature: 'c2hvcnQ=', list: JSON.stringify(base) }), pinned)), 'bad_signature');
  assert.is(code(() => openEnvelope(signed('not json', current), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, version: 2 }), pinned)), 'unsupported_version');
  assert.is(code(() => openEnvelope(sign({ ...base, sequence: 0 }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, issued_at: 'yesterday!' }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, providers: { groq: [{ ...entry('m', 1, 1), input_micro_usd_per_mtok: 1.5 }] } }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, providers: { groq: [{ ...entry('m', 1, 1), input_micro_usd_per_mtok: -1 }] } }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, providers: { 'Not A Name': [] } }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, providers: { groq: [{ ...entry('m', 1, 1), output_limit: 200_000 }] } }), pinned)), 'invalid_list');
  assert.is(code(() => openEnvelope(sign({ ...base, providers: { groq: [entry('m', null, null)] } }), pinned)), 'no error');
});

test('fetch: a body over maxBytes is too_large; a server that never answers is a timeout', async () => {
  const host = new FeedServer();
  const url = await host.start();
  host.body = 'x'.repeat(5000);
  assert.is(await codeOf(fetchList(url, 2000, 4096)), 'too_large');
  assert.is(await fetchList(url, 2000, 8192).then((t) => t.length), 5000);
  await host.stop();
  const silent = createServer(() => undefined);
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  try {
    assert.is(await codeOf(fetchList(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, 300, 4096)), 'timeout');
  } finally {
    silent.closeAllConnections();
    await new Promise<void>((done) => silent.close(() => done()));
  }
});

test.run();
