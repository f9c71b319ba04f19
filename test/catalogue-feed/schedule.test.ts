import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { eventually, startCatalog, type CatalogService } from '../catalog/support/setup.js';
import { FeedServer, entry, listText, publisher, signed } from './support.js';

const test = suite(`catalogue feed: schedule, one fetch per interval, config vs admin (${shape})`);
const trusted = publisher();
const host = new FeedServer();
const intervalMs = 800;
let backing: Backing;
const replicas: CatalogService[] = [];

const config = (url: string, keys = [trusted.publicKey]) => ({
  plugins: { 'catalogue-feed': { config: { url, publicKeys: keys, intervalMs, reloadIntervalMs: 500, fetchTimeoutMs: 2000 } }, catalog: { config: { reloadIntervalMs: 1000 } } },
});
type Status = { on: boolean; source: string | null; last_check: { outcome: string } | null; applied: { sequence: number } | null };

test.before(async () => {
  const url = await host.start();
  host.body = signed(listText(3, { groq: [entry('llama-feed', 10_000, 20_000)] }), trusted);
  backing = await createBacking();
  // Embedded replicas share no cache, hence no lease: the single-node shape runs one.
  const count = shape === 'scale-out' ? 2 : 1;
  for (let i = 0; i < count; i++) replicas.push(await startCatalog(backing, {}, config(url)));
});

test.after(async () => {
  for (const r of replicas) await r.stop();
  await backing?.drop();
  await host.stop();
});

test('a URL in config is checked on schedule, by one replica per interval', async () => {
  const [one] = replicas;
  assert.ok(await eventually(async () => (await one!.admin.ok<Status>('GET', '/catalogue-feed')).applied?.sequence === 3, 2000), 'the config\'s list was not applied');
  const status = await one!.admin.ok<Status>('GET', '/catalogue-feed');
  assert.equal([status.on, status.source], [true, 'config']);
  const [before, started] = [host.requests, Date.now()];
  await new Promise((r) => setTimeout(r, 4 * intervalMs));
  const [fetched, elapsed] = [host.requests - before, Date.now() - started];
  // The lease lets one check start per interval whatever the number of replicas.
  assert.ok(fetched >= 2, `checks kept running on schedule (${fetched})`);
  assert.ok(fetched <= Math.ceil(elapsed / intervalMs) + 1, `${fetched} fetches in ${elapsed} ms by ${replicas.length} replica(s)`);
  const applied = replicas.flatMap((r) => r.logs.events('catalogue_feed.applied'));
  assert.is(applied.length, 1, 'the list is applied once');
  assert.ok(replicas.some((r) => r.logs.events('catalogue_feed.unchanged').length > 0));
  for (const r of replicas) {
    const m = await r.admin.call<{ input_micro_usd_per_mtok: number }>('GET', `/built-in-models/${encodeURIComponent('groq:llama-feed')}`);
    assert.equal([m.status, m.body.input_micro_usd_per_mtok], [200, 10_000]);
  }
});

test('an admin\'s "off" wins over the config\'s URL; null returns to the config', async () => {
  const [one] = replicas;
  const off = await one!.admin.ok<Status>('PUT', '/catalogue-feed', { url: '' });
  assert.equal([off.on, off.source], [false, null]);
  for (const r of replicas) assert.ok(await eventually(async () => (await r.admin.ok<Status>('GET', '/catalogue-feed')).on === false, 1500));
  await new Promise((r) => setTimeout(r, intervalMs / 2));
  const fetched = host.requests;
  await new Promise((r) => setTimeout(r, 2 * intervalMs));
  assert.is(host.requests, fetched, 'nothing is fetched while an admin has it off');
  const back = await one!.admin.ok<Status>('PUT', '/catalogue-feed', { url: null });
  assert.equal([back.on, back.source, back.last_check?.outcome], [true, 'config', 'unchanged']);
  // The admin's check ran at once (a replica's scheduled tick may also have won the lease meanwhile).
  assert.ok(host.requests >= fetched + 1 && host.requests <= fetched + 2, `${host.requests - fetched} fetches`);
});

test('start-up refuses a config URL without a pinned key, and a key that is not Ed25519', async () => {
  const b = await createBacking();
  try {
    const noKey = await startCatalog(b, {}, config('https://feed.example.test/list.json', [])).catch((e: Error) => e);
    assert.instance(noKey, Error);
    assert.match((noKey as Error).message, /catalogue-feed.*url is set but publicKeys is empty/);
    const badKey = await startCatalog(b, {}, config('', ['bm90IGEga2V5'])).catch((e: Error) => e);
    assert.instance(badKey, Error);
    assert.match((badKey as Error).message, /publicKeys\[0\]: an Ed25519 public key is 32 bytes/);
  } finally {
    await b.drop();
  }
});

test.run();
