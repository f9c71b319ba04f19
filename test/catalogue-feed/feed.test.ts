import { suite } from 'uvu';
import OpenAI from 'openai';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { eventually, startCatalog, type CatalogService } from '../catalog/support/setup.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { FeedServer, closedPort, entry, listText, publisher, signed } from './support.js';

const test = suite(`catalogue feed: signed price updates on two replicas (${shape})`);
const trusted = publisher();
const stranger = publisher();
const host = new FeedServer();
const vendor = new MockUpstream({ apiKey: 'sk-feed-openai' });
let url = '';
let backing: Backing;
let one: CatalogService;
let two: CatalogService;
// Embedded replicas share no cache, so the second one sees a change through the catalog's safety reload.
const within = shape === 'scale-out' ? 1000 : 2500;

const gpt4o = encodeURIComponent('openai:gpt-4o');
const v5 = listText(5, { openai: [entry('gpt-4o', 1_234_567, 7_654_321), entry('gpt-feed-1', 100_000, 200_000)] });

type Status = { on: boolean; source: string | null; url: string | null; last_check: { outcome: string; error_code: string | null; sequence: number | null } | null; applied: { sequence: number } | null };
type Model = { input_micro_usd_per_mtok: number; catalogue_input_micro_usd_per_mtok: number; output_micro_usd_per_mtok: number };

const feedLines = (s: CatalogService) => s.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => String(e.event).startsWith('catalogue_feed.'));

test.before(async () => {
  url = await host.start();
  await vendor.start();
  backing = await createBacking();
  const overrides = {
    plugins: {
      catalog: { config: { reloadIntervalMs: 1000, builtInAddresses: { openai: vendor.url } } },
      'catalogue-feed': { config: { publicKeys: [trusted.publicKey], intervalMs: 3_600_000, fetchTimeoutMs: 2000, reloadIntervalMs: 1000 } },
    },
  };
  one = await startCatalog(backing, {}, overrides);
  two = await startCatalog(backing, {}, overrides);
});

test.after(async () => {
  await one?.stop();
  await two?.stop();
  await backing?.drop();
  await host.stop();
  await vendor.stop();
});

test('off by default: nothing fetched, nothing logged, a check is refused', async () => {
  host.body = signed(v5, trusted);
  await new Promise((r) => setTimeout(r, 300));
  assert.is(host.requests, 0);
  assert.equal([...feedLines(one), ...feedLines(two)], []);
  const status = await one.admin.ok<Status>('GET', '/catalogue-feed');
  assert.equal([status.on, status.source, status.url, status.last_check, status.applied], [false, null, null, null, null]);
  const refused = await one.admin.call<{ error: { code: string; param: string } }>('POST', '/catalogue-feed/check');
  assert.equal([refused.status, refused.body.error.code, refused.body.error.param], [400, 'invalid_request', 'url']);
  assert.is(host.requests, 0);
});

test('a good list turned on by an admin on one replica is applied on both', async () => {
  const status = await one.admin.ok<Status>('PUT', '/catalogue-feed', { url });
  assert.equal([status.on, status.source, status.url], [true, 'admin', url]);
  assert.equal(status.last_check && [status.last_check.outcome, status.last_check.error_code, status.last_check.sequence], ['applied', null, 5]);
  assert.is(status.applied?.sequence, 5);
  assert.is(host.requests, 1);
  const applied = one.logs.events('catalogue_feed.applied');
  assert.equal(applied.map((e) => [e.level, e.sequence, e.previous_sequence, e.models]), [['info', 5, null, 2]]);
  assert.not.ok(one.logs.text.includes(url), 'the feed URL is never logged');
  for (const replica of [one, two]) {
    const seen = await eventually(async () => (await replica.admin.call<Model>('GET', `/built-in-models/${gpt4o}`)).body.input_micro_usd_per_mtok === 1_234_567, within);
    assert.ok(seen, 'the list\'s price is not in force on a replica');
    const fresh = await replica.admin.call<Model>('GET', `/built-in-models/${encodeURIComponent('openai:gpt-feed-1')}`);
    assert.equal([fresh.status, fresh.body.output_micro_usd_per_mtok], [200, 200_000]);
    // openai is named by the list, so its models are the list's; mistral is not, so it keeps the shipped ones.
    assert.is((await replica.admin.call('GET', `/built-in-models/${encodeURIComponent('openai:gpt-3.5-turbo')}`)).status, 404);
    assert.is((await replica.admin.call('GET', `/built-in-models/${encodeURIComponent('mistral:codestral-2405')}`)).status, 200);
  }
  assert.ok(await eventually(async () => (await two.admin.ok<Status>('GET', '/catalogue-feed')).last_check?.outcome === 'applied', within));
  assert.is((await two.admin.ok<Status>('GET', '/catalogue-feed')).applied?.sequence, 5);
});

test('a model the list adds is served through the model API on the other replica; one it left out is gone', async () => {
  await one.admin.ok('PATCH', '/providers/openai', { api_key: 'sk-feed-openai' });
  const client = new OpenAI({ baseURL: `${two.url}/v1`, apiKey: await two.admin.key(await two.admin.workspace()), maxRetries: 0 });
  assert.ok(await eventually(async () => (await client.models.list()).data.some((m) => m.id === 'openai:gpt-feed-1'), within));
  const ids = (await client.models.list()).data.map((m) => m.id);
  assert.not.ok(ids.includes('openai:gpt-3.5-turbo'));
  const reply = await client.chat.completions.create({ model: 'openai:gpt-feed-1', messages: [{ role: 'user', content: 'Hi' }] });
  assert.is(reply.choices[0]?.message.content, 'Hello from the mock.');
  assert.is((vendor.requests.at(-1)?.body as { model?: string } | undefined)?.model, 'gpt-feed-1');
  const gone = await client.chat.completions.create({ model: 'openai:gpt-3.5-turbo', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: { status?: number; code?: string }) => e);
  assert.equal([(gone as { status?: number }).status, (gone as { code?: string }).code], [404, 'model_not_found']);
});

test('the same list again is unchanged; an admin\'s re-price stays over a newer list', async () => {
  const again = await two.admin.ok<Status>('POST', '/catalogue-feed/check');
  assert.equal(again.last_check && [again.last_check.outcome, again.last_check.sequence], ['unchanged', 5]);
  assert.equal(two.logs.events('catalogue_feed.unchanged').map((e) => [e.level, e.sequence]), [['info', 5]]);
  await one.admin.ok('PATCH', `/built-in-models/${gpt4o}`, { input_price: '3.00' });
  host.body = signed(listText(6, { openai: [entry('gpt-4o', 2_000_000, 8_000_000)] }), trusted);
  const next = await one.admin.ok<Status>('POST', '/catalogue-feed/check');
  assert.is(next.applied?.sequence, 6);
  for (const replica of [one, two]) {
    assert.ok(await eventually(async () => (await replica.admin.ok<Model>('GET', `/built-in-models/${gpt4o}`)).catalogue_input_micro_usd_per_mtok === 2_000_000, within));
    const m = await replica.admin.ok<Model>('GET', `/built-in-models/${gpt4o}`);
    assert.equal([m.input_micro_usd_per_mtok, m.output_micro_usd_per_mtok], [3_000_000, 8_000_000]);
  }
});

async function failedCheck(replica: CatalogService, code: string, level: string): Promise<void> {
  const before = replica.logs.events('catalogue_feed.check_failed').length;
  const s = await replica.admin.ok<Status>('POST', '/catalogue-feed/check');
  assert.equal(s.last_check && [s.last_check.outcome, s.last_check.error_code], ['failed', code]);
  assert.is(s.applied?.sequence, 6, 'the list in force stays');
  const lines = replica.logs.events('catalogue_feed.check_failed').slice(before);
  assert.equal(lines.map((e) => [e.level, e.error_code, e.applied_sequence]), [[level, code, 6]]);
}

test('a bad signature is rejected and logged at error level (another key, a tampered list)', async () => {
  host.body = signed(listText(7, { openai: [entry('gpt-4o', 1, 1)] }), stranger);
  await failedCheck(one, 'bad_signature', 'error');
  const good = JSON.parse(signed(listText(7, { openai: [entry('gpt-4o', 5, 5)] }), trusted)) as { list: string };
  good.list = good.list.replace('"input_micro_usd_per_mtok":5', '"input_micro_usd_per_mtok":1');
  host.body = JSON.stringify(good);
  await failedCheck(two, 'bad_signature', 'error');
  assert.is((await two.admin.ok<Model>('GET', `/built-in-models/${gpt4o}`)).catalogue_input_micro_usd_per_mtok, 2_000_000);
});

test('a replayed older list, or another list with the applied sequence, is rejected at error level', async () => {
  host.body = signed(v5, trusted);
  await failedCheck(one, 'older_list', 'error');
  host.body = signed(listText(6, { openai: [entry('gpt-4o', 1, 1)] }), trusted);
  await failedCheck(two, 'sequence_conflict', 'error');
});

test('unreachable URL, an HTTP error and a document that is not a feed fail with their error_code', async () => {
  host.body = 'not json';
  await failedCheck(one, 'malformed', 'warn');
  host.status = 503;
  await failedCheck(one, 'http_error', 'warn');
  assert.is(one.logs.events('catalogue_feed.check_failed').at(-1)?.http_status, 503);
  host.status = 200;
  const status = await one.admin.ok<Status>('PUT', '/catalogue-feed', { url: `http://127.0.0.1:${await closedPort()}/feed.json` });
  assert.equal(status.last_check && [status.last_check.outcome, status.last_check.error_code], ['failed', 'unreachable']);
  assert.is(one.logs.events('catalogue_feed.check_failed').at(-1)?.error_code, 'unreachable');
  assert.is(one.logs.events('catalogue_feed.check_failed').at(-1)?.level, 'warn');
});

test('an admin URL is checked; turned off again, nothing is fetched or logged', async () => {
  const bad = await one.admin.call<{ error: { code: string; param: string } }>('PUT', '/catalogue-feed', { url: 'ftp://example.test/feed' });
  assert.equal([bad.status, bad.body.error.code, bad.body.error.param], [400, 'invalid_request', 'url']);
  const off = await one.admin.ok<Status>('PUT', '/catalogue-feed', { url: '' });
  assert.equal([off.on, off.source], [false, null]);
  assert.ok(await eventually(async () => (await two.admin.ok<Status>('GET', '/catalogue-feed')).on === false, within));
  const requests = host.requests;
  const lines = feedLines(one).length + feedLines(two).length;
  assert.is((await two.admin.call('POST', '/catalogue-feed/check')).status, 400);
  await new Promise((r) => setTimeout(r, 300));
  assert.is(host.requests, requests);
  assert.is(feedLines(one).length + feedLines(two).length, lines);
});

test.run();
