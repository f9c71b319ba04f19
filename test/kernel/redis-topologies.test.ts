import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RedisCache } from '../../kernel/cache/redis.js';
import { parseRedisUrl } from '../../kernel/cache/redis-url.js';
import { shape } from '../support/harness.js';
import { haveRedisServer, startCluster, startSentinelSet, type RedisSet } from '../support/redis-sets.js';
import { startChatWorld, modelName } from '../chat/setup.js';
import { contract } from './cache-contract.js';

/**
 * Issue 9 item 9: past one Redis. The cache port's whole contract, and a model request through
 * svc, against a 3-master Cluster and a Sentinel set started on side ports for this file.
 */
const urls = suite('redis URLs: sentinel and cluster forms');

urls('a Sentinel URL names the sentinels, the master, the database and the passwords', () => {
  assert.equal(parseRedisUrl('redis+sentinel://:s3cret@10.0.0.1,10.0.0.2:26380,[::1]:5/mymaster/2?sentinelPassword=other'), {
    kind: 'sentinel',
    nodes: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26380 }, { host: '::1', port: 5 }],
    master: 'mymaster',
    db: 2,
    auth: { password: 's3cret' },
    sentinelAuth: { password: 'other' },
    tls: false,
  });
  assert.equal(parseRedisUrl('rediss+cluster://app:pw@h1:7000,h2'), {
    kind: 'cluster',
    nodes: [{ host: 'h1', port: 7000 }, { host: 'h2', port: 6379 }],
    auth: { username: 'app', password: 'pw' },
    tls: true,
  });
  assert.equal(parseRedisUrl('redis://127.0.0.1:6379/1'), { kind: 'single', url: 'redis://127.0.0.1:6379/1' });
});

urls('malformed URLs are refused without echoing a password', () => {
  for (const bad of ['redis+sentinel://:pw@h1,h2', 'redis+cluster://:pw@h1/3', 'redis+sentinel://:pw@h1/m/x', 'memcached://:pw@h1']) {
    assert.throws(() => parseRedisUrl(bad), (e: Error) => !e.message.includes('pw@') && /invalid Redis URL/.test(e.message), bad);
  }
});
urls.run();

// Start both sets before registering the suites that use them (uvu runs suites registered before
// the first await of this module's body only if they are registered synchronously after it).
const available = haveRedisServer();
let cluster: RedisSet | undefined;
let sentinel: (RedisSet & { sentinelPort: number }) | undefined;
if (available) {
  cluster = await startCluster();
  sentinel = await startSentinelSet().catch(async (err: unknown) => {
    await cluster!.stop();
    throw err;
  });
} else if (process.env.CI === 'true') {
  const t = suite('redis topologies');
  t('redis-server is installed', () => assert.unreachable('redis-server is missing and CI=true: the Cluster and Sentinel tests cannot be skipped'));
  t.run();
} else {
  console.warn('redis-topologies.test: redis-server is not installed; skipping the Cluster and Sentinel tests (CI=true makes this a failure)');
}

if (cluster && sentinel) {
  const prefix = `svctest:${randomUUID()}:`;
  for (const set of [cluster, sentinel]) {
    const name = set === cluster ? 'redis cluster' : 'redis sentinel';
    contract({ name, open: () => new RedisCache(set.url, prefix), peer: () => new RedisCache(set.url, prefix) });
  }
  throughSvc(cluster, sentinel);
}

function throughSvc(c: RedisSet, s: RedisSet & { sentinelPort: number }): void {
  const test = suite(`redis topologies: svc serves a model request (${shape})`);
  test.after(async () => {
    await c.stop();
    await s.stop();
  });

  test('on the Cluster: the reply is served and every svc key sits under one hash tag', async () => {
    const w = await startChatWorld({ cache: { url: c.url, prefix: 'svc:' } });
    try {
      const reply = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] });
      assert.ok(reply.choices[0]?.message.content);
      const keys: string[] = [];
      for (const port of c.ports) {
        const r = new Redis({ port, host: '127.0.0.1' });
        keys.push(...(await r.keys('*svc:*')));
        await r.quit();
      }
      assert.ok(keys.length > 0, 'svc wrote its counters to the Cluster');
      assert.ok(keys.every((k) => k.startsWith('{svc:}')), keys.join(' '));
    } finally {
      await w.stop();
    }
  });

  test('on the Sentinel set: served through the master the sentinel names, and again after a failover', async () => {
    const w = await startChatWorld({ cache: { url: s.url, prefix: 'svc:' } });
    try {
      const ask = () => w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] });
      assert.ok((await ask()).choices[0]);
      const [primary, replica] = s.ports as [number, number];
      const old = new Redis({ port: primary, host: '127.0.0.1' });
      assert.ok((await old.keys('svc:*')).length > 0, 'svc wrote to the master');
      await old.quit();
      const sentinelClient = new Redis({ port: s.sentinelPort, host: '127.0.0.1' });
      await sentinelClient.call('SENTINEL', 'FAILOVER', 'svcmaster');
      const end = Date.now() + 20_000;
      let master: unknown;
      do {
        await new Promise((r) => setTimeout(r, 200));
        master = await sentinelClient.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'svcmaster');
      } while ((master as string[])[1] !== String(replica) && Date.now() < end);
      sentinelClient.disconnect(); // a sentinel does not take QUIT
      assert.is((master as string[])[1], String(replica), 'the sentinel promoted the replica');
      // Requests may be refused (503 budget_unavailable) while the client reconnects; then served by the new master.
      let served = false;
      for (let i = 0; i < 50 && !served; i++) {
        served = await ask().then(() => true, () => false);
        if (!served) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(served, 'served again after the failover');
      const promoted = new Redis({ port: replica, host: '127.0.0.1' });
      assert.match(await promoted.info('replication'), /role:master/);
      await promoted.quit();
    } finally {
      await w.stop();
    }
  });

  test.run();
}
