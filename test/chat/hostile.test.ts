import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { shape } from '../support/harness.js';
import { assertSchema } from '../support/openapi.js';
import { errorTable } from '../../kernel/index.js';
import { startChatWorld, modelName, type ChatWorld } from './setup.js';
import { hello } from './support.js';
import { hostileBodies } from './hostile-bodies.js';

/** Issue #4 "Done when": a 33 MB body is refused without buffering it; 1,000 hostile bodies get 4xx, never 500. */
const test = suite(`chat hostile bodies (${shape})`);
let w: ChatWorld;
const MB = 1024 * 1024;
const bodyLimit = 32 * MB;

test.before(async () => {
  // RSS is measured here: the route classifier's worker loading in the background would add to it.
  w = await startChatWorld({ plugins: { routing: { config: { classifier: { enabled: false } } } } });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; text: string }

/**
 * Streams `total` bytes to the chat endpoint from one reused 64 KB buffer (so this process does not
 * hold the body itself), with or without a Content-Length, and stops sending once answered.
 */
function upload(total: number, declareLength: boolean): Promise<Answer> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const headers: Record<string, string | number> = { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' };
  if (declareLength) headers['content-length'] = total;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(`${w.svc.url}/v1/chat/completions`, { method: 'POST', headers });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
        req.destroy();
      });
    });
    req.on('error', (err) => !answered && reject(err));
    void (async () => {
      req.write('{"model":"x","messages":[');
      for (let sent = 0; sent < total && !answered && !req.destroyed; sent += chunk.length) {
        if (!req.write(chunk)) await drainOrClose(req);
      }
      if (!answered && !req.destroyed) req.end();
    })();
  });
}

function drainOrClose(req: ReturnType<typeof request>): Promise<void> {
  return new Promise((done) => {
    const finish = (): void => {
      req.off('drain', finish).off('close', finish);
      done();
    };
    req.on('drain', finish).on('close', finish);
  });
}

/** Peak growth of this process's RSS (the service runs in it) while `work` runs. */
async function rssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

function check413(a: Answer): void {
  assert.is(a.status, 413, a.text.slice(0, 300));
  assert.match(String(a.headers['x-svc-request-id']), /^req_/);
  const body = JSON.parse(a.text) as { error: { code: string } };
  assertSchema('ErrorResponse', body);
  assert.is(body.error.code, 'request_too_large');
}

test('a 33 MB body with Content-Length: 413 request_too_large at once, memory does not grow by the body', async () => {
  const { result, growth } = await rssGrowth(() => upload(33 * MB, true));
  check413(result);
  if (process.env.SVC_TEST_VERBOSE) console.log(`declared 33 MB: RSS grew ${(growth / MB).toFixed(1)} MB`);
  assert.ok(growth < 16 * MB, `RSS grew ${(growth / MB).toFixed(1)} MB`);
});

test('a 33 MB chunked body (no length): 413 once past the limit, memory grows by no more than about the limit', async () => {
  const { result, growth } = await rssGrowth(() => upload(33 * MB, false));
  check413(result);
  if (process.env.SVC_TEST_VERBOSE) console.log(`chunked 33 MB: RSS grew ${(growth / MB).toFixed(1)} MB`);
  assert.ok(growth < bodyLimit + 16 * MB, `RSS grew ${(growth / MB).toFixed(1)} MB`);
});

/** Runs `fn` over `items` with at most `n` at a time. */
async function pool<T>(items: Iterable<T>, n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = it.next(); !next.done; next = it.next()) await fn(next.value);
  };
  await Promise.all(Array.from({ length: n }, worker));
}

/** Why one answer breaks the rule, or undefined when it is a proper 4xx in the spec's shape. */
async function fault(res: Response): Promise<string | undefined> {
  const text = await res.text();
  if (res.status < 400 || res.status > 499) return `status ${res.status}: ${text.slice(0, 200)}`;
  if (!/^req_/.test(res.headers.get('x-svc-request-id') ?? '')) return 'no x-svc-request-id';
  if (!/application\/json/.test(res.headers.get('content-type') ?? '')) return `content-type ${res.headers.get('content-type')}`;
  try {
    const body = JSON.parse(text) as { error: { code: string } };
    assertSchema('ErrorResponse', body);
    if (!(body.error.code in errorTable)) return `unknown code ${body.error.code}`;
    if (errorTable[body.error.code as keyof typeof errorTable].status !== res.status) return `code ${body.error.code} with status ${res.status}`;
  } catch (err) {
    return `body: ${(err as Error).message.slice(0, 200)}`;
  }
  return undefined;
}

test('1,000 malformed or hostile bodies: each a 4xx in the spec shape with a request id, never a 500, none forwarded', async () => {
  const faults: string[] = [];
  const codes = new Map<string, number>();
  let count = 0;
  const started = performance.now();
  await pool(hostileBodies(1000, modelName), 16, async ({ index, kind, body }) => {
    const res = await fetch(`${w.svc.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
      body,
    });
    count++;
    const code = res.headers.get('content-type')?.includes('json') ? ((await res.clone().json().catch(() => ({}))) as { error?: { code?: string } }).error?.code : undefined;
    codes.set(`${res.status} ${code}`, (codes.get(`${res.status} ${code}`) ?? 0) + 1);
    const why = await fault(res);
    if (why) faults.push(`#${index} ${kind}: ${why}`);
  });
  assert.is(count, 1000);
  assert.equal(faults.slice(0, 10), [], `${faults.length} bodies broke the rule`);
  assert.is(w.mock.requests.length, 0, 'a hostile body reached the provider');
  assert.is(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
  assert.not.match(w.svc.logs.text, /internal_error/);
  assert.equal(w.svc.logs.events('request.failed').filter((e) => Number(e.status) >= 500), [], 'no request failed on the service side');
  if (process.env.SVC_TEST_VERBOSE) console.log(`${count} bodies in ${Math.round(performance.now() - started)} ms`, Object.fromEntries(codes));
});

test('the service still answers a valid request after all that', async () => {
  const reply = await w.client.chat.completions.create({ model: modelName, messages: hello });
  assert.is(reply.choices[0]!.message.content, 'Hello from the mock.');
  assert.is(w.mock.requests.length, 1);
});

test.run();
