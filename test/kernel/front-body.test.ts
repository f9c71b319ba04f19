import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { startChatWorld, modelName, type ChatWorld } from '../chat/setup.js';
import { upload, type Reply } from './fixtures/upload.js';
import { slowBody } from './fixtures/slow-body.js';

/**
 * Issue 9 item 4: the key is checked before the body is read, the bodies being read share one
 * bounded total, a trickling body is cut, and memory stays bounded under a burst of large
 * unauthenticated bodies (RSS of this process, which hosts the service and the clients).
 */
const test = suite(`http front: bodies are read after the key, within a total and a floor rate (${shape})`);
const MB = 1024 * 1024;
/** The test's bound on RSS growth for a 40 × 31 MB burst (before the fix it grew about 1.1 GB). */
const rssBound = 300 * MB;
const total = 2 * MB;
let w: ChatWorld;

test.before(async () => {
  w = await startChatWorld({ server: { bodyBytesInFlight: total, bodyMinBytesPerSecond: 1000, bodyRateWindowMs: 300 } });
});
test.after(async () => w.stop());

const auth = (): Record<string, string> => ({ authorization: `Bearer ${w.apiKey}` });
const errorOf = (r: Reply): { code: string; svc?: Record<string, unknown> } => (JSON.parse(r.body) as { error: { code: string; svc?: Record<string, unknown> } }).error;

/** Sends `count` concurrent unauthenticated 31 MB bodies to `path`; returns the peak RSS growth and /healthz statuses seen meanwhile. */
async function burst(path: string, count: number): Promise<{ replies: Reply[]; peak: number; health: number[] }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const health: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      const res = await fetch(`${w.svc.url}/healthz`);
      health.push(res.status);
      await res.arrayBuffer();
    }
  })();
  try {
    const replies = await Promise.all(Array.from({ length: count }, () => upload(w.svc.url, path, { total: 31 * MB, declareLength: true, head: Buffer.from('{"model":"x",') })));
    return { replies, peak: peak - before, health };
  } finally {
    running = false;
    clearInterval(sampler);
    await probe;
  }
}

test('40 concurrent unauthenticated 31 MB bodies: 401 each, RSS grows less than the bound, /healthz answers', async () => {
  const start = process.memoryUsage.rss();
  const { replies, peak, health } = await burst('/v1/chat/completions', 40);
  for (const r of replies) {
    assert.is(r.status, 401);
    assert.is(errorOf(r).code, 'invalid_api_key');
    assert.ok(r.headers['x-svc-request-id']);
  }
  assert.ok(peak < rssBound, `RSS grew ${Math.round(peak / MB)} MB during the burst (bound ${rssBound / MB} MB)`);
  assert.ok(health.length > 0 && health.every((s) => s === 200), `healthz: ${health.join(',')}`);
  assert.ok(process.memoryUsage.rss() - start < rssBound, 'memory is back under the bound after the burst');
  // The service is still fine for a real request.
  const ok = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] });
  assert.ok(ok.choices[0]);
});

test('the admin API refuses an unauthenticated large body without buffering it', async () => {
  const { replies, peak } = await burst('/admin/v1/workspaces', 20);
  for (const r of replies) assert.is(r.status, 401, r.body);
  assert.ok(peak < rssBound, `RSS grew ${Math.round(peak / MB)} MB`);
  // Sign-in needs no key; its body is small, so a large one is refused past 64 KB.
  const signIn = await upload(w.svc.url, '/admin/v1/sessions', { total: 31 * MB, declareLength: false, head: Buffer.from('{"email":"') });
  assert.is(signIn.status, 413);
  assert.equal(errorOf(signIn), { message: 'The request body is larger than 65536 bytes.', type: 'invalid_request_error', param: null, code: 'request_too_large' });
  assert.ok(signIn.written < 31 * MB);
});

/** Sends only the head of a request with Expect: 100-continue; resolves with what the server wrote first. */
function expectContinue(headers: string, body?: string): Promise<string> {
  return new Promise((done, fail) => {
    const s = connect({ host: '127.0.0.1', port: w.svc.service.port });
    let text = '';
    s.setEncoding('utf8');
    s.on('error', fail);
    s.on('data', (d: string) => {
      text += d;
      if (body !== undefined && text.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !s.writableEnded) return void s.end(body);
      if (/\r\n\r\n\{.*\}$/s.test(text)) {
        s.destroy();
        done(text);
      }
    });
    s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n${headers}\r\n`);
  });
}

test('Expect: 100-continue: an unauthenticated request is refused before the client sends its body', async () => {
  const refused = await expectContinue(`Content-Length: ${31 * MB}\r\n`);
  assert.match(refused, /^HTTP\/1\.1 401 /);
  assert.match(refused, /"code":"invalid_api_key"/);
  const allowed = await expectContinue(`Authorization: Bearer ${w.apiKey}\r\nContent-Length: 2\r\n`, '{}');
  assert.match(allowed, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
  assert.match(allowed, /"code":"invalid_request"/);
});

test('bodies being read share one total: past it 413 request_too_large with Retry-After and x-should-retry: true', async () => {
  // 1.5 MB declared and sent slowly (above the floor rate) holds 1.5 of the 2 MB.
  const holder = slowBody(w.svc.url, '/v1/chat/completions', auth(), 1.5 * MB, 1024, 100);
  await new Promise((r) => setTimeout(r, 300));
  const refused = await upload(w.svc.url, '/v1/chat/completions', { total: MB, declareLength: true, head: Buffer.from('{') });
  assert.is(refused.status, 401, 'unauthenticated bodies never count against the total');
  const busy = await fetch(`${w.svc.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: ' '.repeat(MB) });
  assert.is(busy.status, 413);
  assert.is(busy.headers.get('retry-after'), '1');
  assert.is(busy.headers.get('x-should-retry'), 'true');
  const body = (await busy.json()) as { error: { code: string; svc: Record<string, unknown> } };
  assert.is(body.error.code, 'request_too_large');
  assert.equal(body.error.svc, { reason: 'body_capacity' });
  // Chunked (no Content-Length): refused once its running total passes the room left.
  const chunked = await upload(w.svc.url, '/v1/chat/completions', { total: 4 * MB, declareLength: false, headers: auth() });
  assert.is(chunked.status, 413);
  assert.equal(errorOf(chunked).svc, { reason: 'body_capacity' });
  assert.ok(chunked.written < 4 * MB);
  holder.finish();
  const held = await holder.reply;
  assert.is(held.status, 400, 'whitespace is not JSON, but the body was read whole');
  // Its bytes are given back once its response closed: the same 1 MB body now fits.
  const after = await fetch(`${w.svc.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: ' '.repeat(MB) });
  assert.is(after.status, 400);
  assert.is(((await after.json()) as { error: { code: string } }).error.code, 'invalid_request');
});

test('a body that trickles below the floor rate is cut: 400 invalid_request (body_too_slow), connection closed', async () => {
  const stalled = slowBody(w.svc.url, '/v1/chat/completions', auth(), 100_000, 0, 1000);
  const r = await stalled.reply;
  assert.is(r.status, 400);
  assert.equal(errorOf(r), { message: 'The request body arrived slower than 1000 bytes per second and was cut.', type: 'invalid_request_error', param: null, code: 'invalid_request', svc: { reason: 'body_too_slow' } });
  assert.is(r.headers.connection, 'close');
  assert.ok(r.written < 100_000);
  // A body above the floor is read whole.
  const steady = slowBody(w.svc.url, '/v1/chat/completions', auth(), 8_000, 500, 100);
  assert.is((await steady.reply).status, 400, 'read to the end (whitespace is not JSON)');
});

test.run();
