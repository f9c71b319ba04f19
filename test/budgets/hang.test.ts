import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, redisUrl, shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, charged, client, newKey, provision, startInstance, total, type Instance } from './support.js';

/**
 * Issue 9 items 1 and 6: a database or cache that hangs (reachable, silent: a proxy holding every
 * byte) fails closed like one that refuses connections. Short deadlines keep the test quick.
 */
const test = suite('budgets: a hanging database or cache fails closed');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BOUND = 40;

interface Health { status: string; checks: Record<string, { status: string; error_code?: string }> }
async function health(svc: Instance): Promise<{ http: number; body: Health }> {
  const res = await fetch(`${svc.url}/healthz`);
  return { http: res.status, body: (await res.json()) as Health };
}

async function until(what: string, ok: () => Promise<boolean>, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** `n` model requests, ten at a time: each one's status and error code. */
async function burst(svc: Instance, key: string, n: number): Promise<Array<[number, string]>> {
  const c = client(svc, key);
  const out: Array<[number, string]> = [];
  for (let i = 0; i < n; i += 10) {
    const part = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, () =>
        c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }).then(
          (): [number, string] => [200, 'served'],
          (err: unknown): [number, string] => {
            const e = apiError(err);
            return [e.status, e.code];
          },
        ),
      ),
    );
    out.push(...part);
  }
  return out;
}

const fast = { flushIntervalMs: 50, maxBufferedRows: BOUND, logIntervalMs: 60_000 };

test('PostgreSQL hangs: healthz down, every model request 503, buffers bounded, two log lines; recovers', async () => {
  if (shape !== 'scale-out') return; // the embedded database is a file in this process: it cannot hang alone
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const db = new URL(backing.databaseUrl!);
  const proxy = new TcpProxy(Number(db.port || 5432), db.hostname);
  await proxy.start();
  db.host = `127.0.0.1:${proxy.port}`;
  const svc = await startInstance({ ...backing, databaseUrl: db.toString() }, {
    budgets: { totalsRefreshMs: 100, ...fast },
    kernel: { database: { timeoutMs: 500, probeIntervalMs: 100 } },
    tracing: fast,
  });
  try {
    await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 10_000_000, period: 'month' });
    const key = (await newKey(svc.admin, await svc.admin.workspace())).value;
    assert.equal(await burst(svc, key, 2), [[200, 'served'], [200, 'served']]);
    await svc.flush();

    // A reply streaming when the database goes silent: it finishes, and its charge is kept
    // (committed once the database answers again), never lost nor counted twice.
    mock.enqueue({ chunks: ['one ', 'two ', 'three ', 'four'], gapMs: 250, usage: { prompt_tokens: 10, completion_tokens: 40 } });
    const streamed = (async () => {
      const s = await client(svc, key).chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'stream' }], max_tokens: 50, stream: true });
      let text = '';
      for await (const chunk of s) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    })();
    await sleep(100);
    proxy.hang();
    await until('healthz down', async () => (await health(svc)).http === 503);
    const h = await health(svc);
    assert.equal([h.body.status, h.body.checks.database?.status, h.body.checks.database?.error_code, h.body.checks.cache?.status], ['down', 'down', 'timeout', 'ok']);
    const before = mock.requests.length;
    const refused = await burst(svc, key, 100);
    assert.equal(refused.filter(([s, c]) => s !== 503 || c !== 'budget_unavailable'), [], 'no request served while the database hangs');
    assert.is(mock.requests.length, before, 'nothing reached the provider');
    assert.is(await streamed, 'one two three four');
    await sleep(1000); // still hanging a while later: nothing changes, nothing more is logged
    assert.is((await health(svc)).http, 503);
    assert.ok(proxy.heldBytes > 0, 'the service did try the database');

    proxy.heal();
    await until('healthz ok', async () => (await health(svc)).http === 200);
    await until('served again', async () => (await burst(svc, key, 1))[0]![0] === 200);
    // What waited in memory is written once the database answers; reads right after recovery may
    // still meet the backlog (the test's deadline is 500 ms), so read until everything is there.
    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    const count = async (where: string) => Number((await svc.sql<{ n: string | number }>(`select count(*) as n from usage_records where ${where}`))[0]!.n);
    let seen = { kept: 0, sent: 0, total: -1, charged: -2 };
    await until('records written', async () => {
      try {
        await svc.flush();
        seen = { kept: await count('status = 503'), sent: await count('status = 200 and cost_micro_usd > 0'), total: await total(svc, month), charged: await charged(svc) };
        return seen.sent === 4 && seen.kept === BOUND && seen.total === seen.charged;
      } catch {
        return false;
      }
    }).catch(() => undefined);
    if (process.env.DEBUG_HANG) console.log(svc.logs.lines.filter((l) => /health|budget\.|tracing/.test(l)).join(''));
    // Two before, the stream across the hang, one after; the refusals kept are exactly the bound.
    assert.equal(seen, { kept: BOUND, sent: 4, total: seen.charged, charged: seen.charged });
    assert.is(svc.logs.events('health.dependency_down').filter((e) => e.component === 'database').length, 1, 'one line when it went down');
    assert.is(svc.logs.events('health.dependency_up').filter((e) => e.component === 'database').length, 1, 'one line when it came back');
    // The rest were dropped, and said so (once: the interval is long).
    const drops = svc.logs.events('tracing.rows_dropped').filter((e) => e.table === 'usage_records');
    assert.equal(drops.map((e) => e.count), [1]);
  } finally {
    proxy.heal();
    await svc.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
});

test('Redis hangs: healthz down, every model request 503 quickly, nothing sent; recovers', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const proxy = new TcpProxy(Number(new URL(redisUrl).port || 6379), new URL(redisUrl).hostname);
  await proxy.start();
  const svc = await startInstance(backing, {
    cache: { url: `redis://127.0.0.1:${proxy.port}`, prefix: backing.redisPrefix, timeoutMs: 300, probeIntervalMs: 100 },
    budgets: fast,
    tracing: fast,
  });
  try {
    await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' } });
    const key = (await newKey(svc.admin, await svc.admin.workspace())).value;
    assert.equal(await burst(svc, key, 1), [[200, 'served']]);

    proxy.hang();
    await until('healthz down', async () => (await health(svc)).http === 503);
    const h = await health(svc);
    assert.equal([h.body.status, h.body.checks.cache?.status, h.body.checks.cache?.error_code, h.body.checks.database?.status], ['down', 'down', 'timeout', 'ok']);
    const before = mock.requests.length;
    const refused = await burst(svc, key, 60);
    assert.equal(refused.filter(([s, c]) => s !== 503 || c !== 'budget_unavailable'), [], 'no request served while the cache hangs');
    assert.is(mock.requests.length, before, 'nothing reached the provider');

    proxy.heal();
    await until('healthz ok', async () => (await health(svc)).http === 200);
    await until('served again', async () => (await burst(svc, key, 1))[0]![0] === 200);
    assert.is(svc.logs.events('health.dependency_down').filter((e) => e.component === 'cache').length, 1);
    assert.is(svc.logs.events('health.dependency_up').filter((e) => e.component === 'cache').length, 1);
  } finally {
    proxy.heal();
    await svc.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
