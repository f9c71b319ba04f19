import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MockAnthropic } from '../support/mock-anthropic.js';
import { shape } from '../support/harness.js';
import { expectSdk } from '../chat/support.js';
import { nativeWorld, type NativeWorld } from './native-e2e.js';

/**
 * Issue 27 item 8: an instance admin sets and clears a built-in provider's address (a regional
 * endpoint, an egress proxy) through the admin API; it is normalised like any provider's, shown
 * on its row, checked after saving, and requests go there — through the official `openai` client.
 */
const test = suite(`built-in provider address set by an instance admin (${shape})`);
const key = 'sk-ant-address-7e21';
const model = 'anthropic:claude-sonnet-4-5-20250929';
const home = new MockAnthropic({ apiKey: key });
const regional = new MockAnthropic({ apiKey: key });
let n: NativeWorld;
type Row = { name: string; address: string; default_address: string | null; built_in: boolean; has_key: boolean; check: string; checked_at: string | null };
type Err = { error: { code: string; param: string | null; message: string } };
const hello = [{ role: 'user' as const, content: 'Say hello.' }];
const chats = (m: MockAnthropic) => m.requests.filter((r) => r.path === '/v1/messages').length;
const checks = (m: MockAnthropic) => m.requests.filter((r) => r.path === '/v1/models').length;

test.before(async () => {
  await home.start();
  await regional.start();
  n = await nativeWorld('anthropic', home.url, key);
});
test.after(async () => {
  await n.stop();
  await home.stop();
  await regional.stop();
});

test('set: normalised (trailing slash dropped), saved, then checked there; shown on the row; requests go to it', async () => {
  const row = await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: `${regional.url}//` });
  assert.equal([row.address, row.default_address, row.built_in, row.has_key, row.check], [regional.url, home.url, true, true, 'connected']);
  assert.is(checks(regional), 1, 'checked at the new address after saving');
  assert.is(regional.requests.at(-1)!.headers['x-api-key'], key);
  const listed = (await n.w.admin.ok<{ data: Row[] }>('GET', '/providers')).data.find((p) => p.name === 'anthropic');
  assert.equal([listed?.address, listed?.default_address, listed?.check], [regional.url, home.url, 'connected']);
  const before = chats(home);
  const reply = await n.client.chat.completions.create({ model, messages: hello });
  assert.is(reply.choices[0]?.message.content, 'Hello from the mock.');
  assert.is(chats(regional), 1);
  assert.is(chats(home), before);
});

test('an address where nothing answers is saved and checked like any provider: could_not_connect, and requests fail upstream_unavailable', async () => {
  const row = await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: 'http://127.0.0.1:9/v1' });
  assert.equal([row.address, row.check], ['http://127.0.0.1:9/v1', 'could_not_connect']);
  await expectSdk(n.client.chat.completions.create({ model, messages: hello }), { status: 502, code: 'upstream_unavailable', svc: { provider: 'anthropic' } });
});

test('refused like any provider address: not a URL, a query, credentials, /chat/completions; nothing changes', async () => {
  for (const address of ['not a url', 'ftp://proxy.example/v1', 'https://proxy.example/v1?x=1', 'https://user:pw@proxy.example/v1', 'https://proxy.example/v1/chat/completions']) {
    const r = await n.w.admin.call<Err>('PATCH', '/providers/anthropic', { address });
    assert.is(r.status, 400, address);
    assert.equal([r.body.error.code, r.body.error.param], ['invalid_request', 'address'], address);
  }
  assert.is((await n.w.admin.ok<Row>('GET', '/providers/anthropic')).address, 'http://127.0.0.1:9/v1');
});

test('cleared with null: the default address again, checked there; requests go home', async () => {
  const homeChecks = checks(home);
  const row = await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: null });
  assert.equal([row.address, row.default_address, row.check], [home.url, home.url, 'connected']);
  assert.is(checks(home), homeChecks + 1);
  const before = chats(home);
  await n.client.chat.completions.create({ model, messages: hello });
  assert.is(chats(home), before + 1);
  // An empty address clears too; a key change alone keeps the address.
  await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: regional.url });
  assert.is((await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: '' })).address, home.url);
  await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: regional.url });
  assert.is((await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { api_key: key })).address, regional.url);
  await n.w.admin.ok<Row>('PATCH', '/providers/anthropic', { address: null });
});

test('added providers: address null is refused (they have no other)', async () => {
  await n.w.admin.ok('POST', '/providers', { name: 'local-box', address: regional.url });
  const r = await n.w.admin.call<Err>('PATCH', '/providers/local-box', { address: null });
  assert.equal([r.status, r.body.error.param], [400, 'address']);
  const added = await n.w.admin.ok<Row>('GET', '/providers/local-box');
  assert.equal([added.built_in, added.default_address], [false, null]);
});

test.run();
