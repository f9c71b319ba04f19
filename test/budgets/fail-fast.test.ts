import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, postgresAdminUrl, redisUrl, shape, type Backing } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, charged, client, newKey, provision, startInstance, total, type Instance } from './support.js';

/**
 * Issue 25 item 3 with the shipped settings (no shortened deadlines): a database or cache that
 * goes silent behind a proxy makes the request path refuse model requests with 503
 * budget_unavailable before a call's deadline (3 s database, 1.5 s cache), i.e. because silence
 * was noticed, not because a connection timed out; once /healthz says ok again the very next
 * request is served; nothing is served unmetered and no charge is lost.
 */
const test = suite(`budgets: fail closed fast on silence, serve again with /healthz (${shape})`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function healthz(svc: Instance): Promise<number> {
  const res = await fetch(`${svc.url}/healthz`);
  await res.arrayBuffer();
  return res.status;
}

async function ask(svc: Instance, key: string): Promise<[number, string]> {
  return client(svc, key).chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }).then(
    (): [number, string] => [200, 'served'],
    (err: unknown): [number, string] => {
      const e = apiError(err);
      return [e.status, e.code];
    },
  );
}

/**
 * Requests one after another from the moment the proxy goes silent: how long until the first
 * refusal, and what the ones before it got (each either served or refused, never an error).
 */
async function untilRefused(svc: Instance, key: string, since: number): Promise<{ firstRefusalMs: number; before: Array<[number, string]> }> {
  const before: Array<[number, string]> = [];
  for (;;) {
    const r = await ask(svc, key);
    if (r[0] === 503) {
      assert.is(r[1], 'budget_unavailable');
      return { firstRefusalMs: performance.now() - since, before };
    }
    before.push(r);
    assert.ok(performance.now() - since < 10_000, 'never refused');
  }
}

async function recovery(svc: Instance, key: string, proxy: TcpProxy): Promise<void> {
  proxy.heal();
  while ((await healthz(svc)) !== 200) await sleep(20);
  // Served as soon as /healthz says ok: the request path and /healthz decide from the same state.
  assert.equal(await ask(svc, key), [200, 'served'], 'the first request after /healthz said ok');
}

async function moneyKept(svc: Instance): Promise<void> {
  const month = `instance:*:month:${periodKey('month', Date.now())}`;
  let seen = { total: -1, charged: -2 };
  for (let i = 0; i < 100 && seen.total !== seen.charged; i++) {
    try {
      await svc.flush();
      seen = { total: await total(svc, month), charged: await charged(svc) };
    } catch {
      await sleep(100);
    }
  }
  assert.is(seen.total, seen.charged, 'every charge made across the silence is in the running total');
  assert.ok(seen.charged > 0);
}

/**
 * The scenario both dependencies share: one request served, the proxy goes silent, requests one
 * after another until the first refusal (before `deadlineMs`, the call deadline), 20 more refused
 * with nothing sent, then recovery with /healthz and no charge lost.
 */
async function silence(which: string, svc: Instance, mock: MockUpstream, proxy: TcpProxy, deadlineMs: number, servedBefore: (served: Array<[number, string]>) => void): Promise<void> {
  await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' } });
  await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 10_000_000, period: 'month' });
  const key = (await newKey(svc.admin, await svc.admin.workspace())).value;
  assert.equal(await ask(svc, key), [200, 'served']);
  await svc.flush();

  const since = performance.now();
  proxy.hang();
  const { firstRefusalMs, before } = await untilRefused(svc, key, since);
  assert.ok(firstRefusalMs < deadlineMs, `first refusal ${Math.round(firstRefusalMs)} ms after the silence began: not after the ${deadlineMs} ms call deadline`);
  servedBefore(before);
  const sent = mock.requests.length;
  for (let i = 0; i < 20; i++) assert.equal(await ask(svc, key), [503, 'budget_unavailable']);
  assert.is(mock.requests.length, sent, 'nothing reached the provider while silent');
  assert.is(await healthz(svc), 503);
  if (process.env.SVC_TEST_VERBOSE) console.log(`${which} silent: first 503 after ${Math.round(firstRefusalMs)} ms, ${before.length} served before`);

  await recovery(svc, key, proxy);
  await moneyKept(svc);
}

async function behindProxy(port: number, host: string, start: (proxyPort: number, backing: Backing) => Promise<Instance>, run: (svc: Instance, mock: MockUpstream, proxy: TcpProxy) => Promise<void>): Promise<void> {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const proxy = new TcpProxy(port, host);
  await proxy.start();
  let svc: Instance | undefined;
  try {
    svc = await start(proxy.port, backing);
    await run(svc, mock, proxy);
  } finally {
    proxy.heal();
    await svc?.stop();
    await proxy.cut();
    await mock.stop();
    await backing.drop();
  }
}

test('PostgreSQL goes silent: 503 budget_unavailable before any call deadline; served again with /healthz ok', async () => {
  if (shape !== 'scale-out') return; // the embedded database is a file in this process: it cannot go silent alone
  const probe = new URL(postgresAdminUrl);
  await behindProxy(
    Number(probe.port || 5432),
    probe.hostname,
    (port, backing) => {
      const db = new URL(backing.databaseUrl!);
      db.host = `127.0.0.1:${port}`;
      return startInstance({ ...backing, databaseUrl: db.toString() });
    },
    (svc, mock, proxy) => silence('PostgreSQL', svc, mock, proxy, 3000, (before) => assert.equal(before.filter(([s]) => s !== 200), [], 'served (and metered later) or refused, nothing else')),
  );
});

test('Redis goes silent: 503 budget_unavailable before the cache deadline; served again with /healthz ok', async () => {
  const redis = new URL(redisUrl);
  await behindProxy(
    Number(redis.port || 6379),
    redis.hostname,
    (port, backing) => startInstance(backing, { cache: { url: `redis://127.0.0.1:${port}`, prefix: backing.redisPrefix } }),
    (svc, mock, proxy) => silence('Redis', svc, mock, proxy, 1500, (before) => assert.equal(before, [], 'a hold needs the cache: nothing is served once it is silent')),
  );
});

test.run();
