import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { rawChunked, upload } from './fixtures/upload.js';

const test = suite(`request body limit and JSON reading (${shape})`);
const probeModule = fileURLToPath(new URL('./fixtures/probe-plugin.js', import.meta.url));
const small = 64 * 1024;
const MB = 1024 * 1024;
let backing: Backing;
let svc: TestService;

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing, overrides: { server: { bodyLimitBytes: small }, plugins: { probe: { module: probeModule } } } });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

const tooLarge = (limitText: string) => ({
  error: { message: `The request body is larger than ${limitText}.`, type: 'invalid_request_error', param: null, code: 'request_too_large' },
});

/** The same route read by node:http and by the front's own reader (kernel/http/direct/). */
const echoes = ['/probe/echo', '/probe/echo-direct'];

test('a body of exactly the limit is read', async () => {
  for (const path of echoes) {
    const res = await upload(svc.url, path, { total: small, declareLength: true, head: Buffer.from('{}') });
    assert.is(res.status, 200, `${path}: ${res.body}`);
    assert.equal(JSON.parse(res.body), { kind: 'object' });
  }
});

test('one byte over the limit with Content-Length: 413 request_too_large in the spec shape', async () => {
  for (const path of echoes) {
    const res = await upload(svc.url, path, { total: small + 1, declareLength: true, head: Buffer.from('{}') });
    assert.is(res.status, 413, path);
    assert.ok(res.headers['x-svc-request-id']);
    assert.equal(JSON.parse(res.body), tooLarge('65536 bytes'));
  }
  assert.ok(svc.logs.events('request.failed').some((e) => e.code === 'request_too_large' && e.status === 413));
});

test('over the limit without Content-Length (chunked): 413 once the running total passes it', async () => {
  const res = await upload(svc.url, '/probe/echo', { total: 4 * MB, declareLength: false, head: Buffer.from('{}') });
  assert.is(res.status, 413);
  assert.ok(res.headers['x-svc-request-id']);
  assert.equal(JSON.parse(res.body), tooLarge('65536 bytes'));
  assert.ok(res.written < 4 * MB, 'the server answered before the whole body was sent');
});

test('a slow client sending a chunked body over the limit reads the 413 (no reset), and the connection is reused', async () => {
  const port = Number(new URL(svc.url).port);
  const text = await rawChunked(port, '/probe/echo', 1024 * 1024, 'POST /probe/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}', 2);
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  assert.equal(statuses, [413, 200], text.slice(0, 300));
  assert.match(text, /"code":"request_too_large"/);
});

test('malformed JSON, invalid UTF-8 and an empty body: 400 invalid_request', async () => {
  const cases: Array<[string | Uint8Array, string]> = [
    ['{"model": ', 'The request body is not valid JSON.'],
    [new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'The request body is not valid UTF-8.'],
    ['', 'The request body is empty; a JSON object is expected.'],
  ];
  for (const [body, message] of cases) for (const path of echoes) {
    const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.is(res.status, 400, `${path}: ${message}`);
    assert.ok(res.headers.get('x-svc-request-id'));
    assert.equal(await res.json(), { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request' } });
  }
});

test('the connection stays usable after a 400 (the body was read)', async () => {
  for (const path of echoes) {
    for (let i = 0; i < 3; i++) assert.is((await fetch(`${svc.url}${path}`, { method: 'POST', body: 'nope' })).status, 400);
    assert.is((await fetch(`${svc.url}${path}`, { method: 'POST', body: '[1]' })).status, 200);
  }
});

test('default limit: a real 33 MB body is refused 413 and memory does not grow by the body size', async () => {
  const b = await createBacking();
  const s = await startService({ backing: b, overrides: { plugins: { probe: { module: probeModule } } } });
  try {
    const total = 33 * MB;
    const before = process.memoryUsage().rss;
    const declared = await upload(s.url, '/probe/echo', { total, declareLength: true, head: Buffer.from('{}') });
    const afterDeclared = process.memoryUsage().rss;
    assert.is(declared.status, 413);
    assert.equal(JSON.parse(declared.body), tooLarge('32 MB'));
    // Refused on the declared length alone: nothing near the body's size was buffered.
    assert.ok(afterDeclared - before < 16 * MB, `rss grew ${(afterDeclared - before) / MB} MB`);

    const chunked = await upload(s.url, '/probe/echo', { total, declareLength: false, head: Buffer.from('{}') });
    const afterChunked = process.memoryUsage().rss;
    assert.is(chunked.status, 413);
    assert.equal(JSON.parse(chunked.body), tooLarge('32 MB'));
    // Read up to the limit at most, never the whole body (generous bound: limit plus slack).
    assert.ok(afterChunked - before < 32 * MB + 24 * MB, `rss grew ${(afterChunked - before) / MB} MB`);
    // Still serving.
    assert.is((await fetch(`${s.url}/probe/echo`, { method: 'POST', body: '{}' })).status, 200);
  } finally {
    await s.stop();
    await b.drop();
  }
});

test.run();
