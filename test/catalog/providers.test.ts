import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogToken } from '../../kernel/index.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { Admin } from '../support/provision.js';
import { startCatalog, type CatalogService } from './support/setup.js';
import { ModelsUpstream, closedAddress } from './support/upstream.js';

type Err = { error: { message: string; type: string; param: string | null; code: string } };
type ProviderBody = { name: string; vendor: string; address: string; has_key: boolean; built_in: boolean; check: string; checked_at: string | null };

const test = suite(`catalog providers (${shape})`);
let backing: Backing;
let svc: CatalogService;
let admin: Admin;
const upstream = new ModelsUpstream();
const keyed = new ModelsUpstream('sk-right-key');

test.before(async () => {
  await upstream.start();
  await keyed.start();
  backing = await createBacking();
  svc = await startCatalog(backing);
  admin = svc.admin;
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
  await upstream.stop();
  await keyed.stop();
});

function isError(r: { status: number; body: unknown }, status: number, code: string, param: string | null): void {
  assert.is(r.status, status, JSON.stringify(r.body));
  const e = (r.body as Err).error;
  assert.is(e.code, code);
  assert.is(e.param, param);
  assert.type(e.message, 'string');
}

test('add: 201, saved and checked (connected), trailing slash dropped, vendor openai-compatible, no key', async () => {
  const r = await admin.call<ProviderBody>('POST', '/providers', { name: 'local', address: `${upstream.address}/` });
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.is(r.body.name, 'local');
  assert.is(r.body.vendor, 'openai-compatible');
  assert.is(r.body.address, upstream.address);
  assert.is(r.body.has_key, false);
  assert.is(r.body.check, 'connected');
  assert.ok(r.body.checked_at && !Number.isNaN(Date.parse(r.body.checked_at)));
  assert.is(upstream.seen.at(-1)?.authorization, undefined);
  const got = await admin.call<ProviderBody>('GET', '/providers/local');
  assert.equal(got.body, r.body);
  const list = await admin.call<{ data: ProviderBody[] }>('GET', '/providers');
  // Built-in providers (the openai vendor folder) are listed too, marked built_in.
  assert.equal(list.body.data.filter((p) => !p.built_in).map((p) => p.name), ['local']);
  const p = svc.service.get(CatalogToken).provider('local');
  assert.equal({ name: p?.name, vendor: p?.vendor, address: p?.address, builtIn: p?.builtIn, hasKey: p?.hasKey, check: p?.check }, {
    name: 'local', vendor: 'openai-compatible', address: upstream.address, builtIn: false, hasKey: false, check: 'connected',
  });
  assert.is(svc.service.get(CatalogToken).providerKey('local'), undefined);
});

test('add with a key: key sent to the check, has_key true; a wrong key is key_refused; nothing answering is could_not_connect', async () => {
  const ok = await admin.call<ProviderBody>('POST', '/providers', { name: 'keyed', address: keyed.address, api_key: 'sk-right-key' });
  assert.is(ok.status, 201);
  assert.is(ok.body.has_key, true);
  assert.is(ok.body.check, 'connected');
  assert.is(keyed.seen.at(-1)?.authorization, 'Bearer sk-right-key');
  assert.not.ok('api_key' in ok.body);
  const refused = await admin.call<ProviderBody>('POST', '/providers', { name: 'keyed-wrong', address: keyed.address, api_key: 'sk-wrong' });
  assert.is(refused.status, 201);
  assert.is(refused.body.check, 'key_refused');
  const down = await admin.call<ProviderBody>('POST', '/providers', { name: 'nowhere', address: await closedAddress() });
  assert.is(down.status, 201);
  assert.is(down.body.check, 'could_not_connect');
});

test('name rules: pattern, reserved built-in names, unique (400 invalid_request, param name)', async () => {
  for (const name of ['Local', 'my_server', '-x', 'x-', 'a--b', 'with space', '', 'ü']) {
    isError(await admin.call('POST', '/providers', { name, address: upstream.address }), 400, 'invalid_request', 'name');
  }
  for (const name of ['openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek', 'xai', 'openrouter']) {
    const r = await admin.call<Err>('POST', '/providers', { name, address: upstream.address });
    isError(r, 400, 'invalid_request', 'name');
    assert.match(r.body.error.message, /built-in/);
  }
  const dup = await admin.call<Err>('POST', '/providers', { name: 'local', address: upstream.address });
  isError(dup, 400, 'invalid_request', 'name');
  assert.match(dup.body.error.message, /exists/);
  isError(await admin.call('POST', '/providers', { address: upstream.address }), 400, 'invalid_request', 'name');
});

test('address rules: http(s) URL, not ending with /chat/completions, no credentials or query (400, param address)', async () => {
  const cases = ['not a url', 'ftp://host/v1', 'http://127.0.0.1:1/v1/chat/completions', 'http://127.0.0.1:1/v1/chat/completions/', 'http://user:pw@host/v1', 'http://host/v1?x=1'];
  for (const address of cases) {
    isError(await admin.call('POST', '/providers', { name: 'bad-address', address }), 400, 'invalid_request', 'address');
  }
  const why = await admin.call<Err>('POST', '/providers', { name: 'bad-address', address: 'http://host/v1/chat/completions' });
  assert.match(why.body.error.message, /without \/chat\/completions/);
  isError(await admin.call('POST', '/providers', { name: 'bad-address' }), 400, 'invalid_request', 'address');
  isError(await admin.call('POST', '/providers', { name: 'bad-address', address: `http://h/${'x'.repeat(2000)}` }), 400, 'invalid_request', 'address');
  assert.is((await admin.call('GET', '/providers/bad-address')).status, 404);
});

test('change address: empty or absent key keeps the saved key; a new key replaces it; saves and checks', async () => {
  await admin.ok('POST', '/providers', { name: 'change-me', address: await closedAddress(), api_key: 'sk-right-key' });
  const moved = await admin.call<ProviderBody>('PATCH', '/providers/change-me', { address: `${keyed.address}/`, api_key: '' });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is(moved.body.address, keyed.address);
  assert.is(moved.body.has_key, true);
  assert.is(moved.body.check, 'connected');
  assert.is(keyed.seen.at(-1)?.authorization, 'Bearer sk-right-key');
  assert.is(svc.service.get(CatalogToken).providerKey('change-me'), 'sk-right-key');
  const wrong = await admin.call<ProviderBody>('PATCH', '/providers/change-me', { api_key: 'sk-new-wrong' });
  assert.is(wrong.body.check, 'key_refused');
  assert.is(svc.service.get(CatalogToken).providerKey('change-me'), 'sk-new-wrong');
  const same = await admin.call<ProviderBody>('PATCH', '/providers/change-me', {});
  assert.is(same.body.check, 'key_refused');
  assert.is(keyed.seen.at(-1)?.authorization, 'Bearer sk-new-wrong');
});

test('change: renaming refused (param name), bad address refused, unknown provider 404', async () => {
  isError(await admin.call('PATCH', '/providers/local', { name: 'other' }), 400, 'invalid_request', 'name');
  assert.is((await admin.call('PATCH', '/providers/local', { name: 'local' })).status, 200);
  isError(await admin.call('PATCH', '/providers/local', { address: 'http://x/v1/chat/completions' }), 400, 'invalid_request', 'address');
  assert.is((await admin.ok<ProviderBody>('GET', '/providers/local')).address, upstream.address);
  isError(await admin.call('PATCH', '/providers/nope', { address: upstream.address }), 404, 'not_found', null);
  isError(await admin.call('GET', '/providers/nope'), 404, 'not_found', null);
  isError(await admin.call('POST', '/providers/nope/check'), 404, 'not_found', null);
  isError(await admin.call('DELETE', '/providers/nope?confirm=nope'), 404, 'not_found', null);
});

test('check on demand: stores the new result and time', async () => {
  const before = await admin.ok<ProviderBody>('GET', '/providers/keyed-wrong');
  keyed.requiredKey = undefined;
  const hits = keyed.hits();
  const r = await admin.call<ProviderBody>('POST', '/providers/keyed-wrong/check');
  keyed.requiredKey = 'sk-right-key';
  assert.is(r.status, 200);
  assert.is(r.body.check, 'connected');
  assert.is(keyed.hits(), hits + 1);
  assert.ok(Date.parse(r.body.checked_at!) >= Date.parse(before.checked_at!));
  assert.is(svc.service.get(CatalogToken).provider('keyed-wrong')?.check, 'connected');
});

test('remove: needs ?confirm=<name> (400 param confirm); models stay (provider_missing); re-adding makes them work again', async () => {
  await admin.ok('POST', '/providers', { name: 'gone', address: upstream.address });
  await admin.model('gone:meta-llama/Llama-3.1-8B-Instruct');
  isError(await admin.call('DELETE', '/providers/gone'), 400, 'invalid_request', 'confirm');
  isError(await admin.call('DELETE', '/providers/gone?confirm=other'), 400, 'invalid_request', 'confirm');
  const r = await admin.call('DELETE', '/providers/gone?confirm=gone');
  assert.is(r.status, 200);
  assert.equal(r.body, { name: 'gone', removed: true, models_kept: ['gone:meta-llama/Llama-3.1-8B-Instruct'] });
  assert.is((await admin.call('GET', '/providers/gone')).status, 404);
  const catalog = svc.service.get(CatalogToken);
  assert.is(catalog.provider('gone'), undefined);
  assert.is(catalog.model('gone:meta-llama/Llama-3.1-8B-Instruct')?.upstreamId, 'meta-llama/Llama-3.1-8B-Instruct');
  const listed = await admin.ok<{ data: Array<{ name: string; provider_missing: boolean }> }>('GET', '/models?provider=gone');
  assert.equal(listed.data.map((m) => [m.name, m.provider_missing]), [['gone:meta-llama/Llama-3.1-8B-Instruct', true]]);
  await admin.ok('POST', '/providers', { name: 'gone', address: upstream.address });
  assert.is(catalog.provider('gone')?.name, 'gone');
  const again = await admin.ok<{ provider_missing: boolean }>('GET', `/models/${encodeURIComponent('gone:meta-llama/Llama-3.1-8B-Instruct')}`);
  assert.is(again.provider_missing, false);
});

test('access: no sign-in 401 invalid_api_key; a person who is not an instance admin 403 forbidden', async () => {
  const anon = await fetch(`${svc.url}/admin/v1/providers`);
  assert.is(anon.status, 401);
  assert.is(((await anon.json()) as Err).error.code, 'invalid_api_key');
  await admin.ok('POST', '/persons', { email: 'member@example.test', password: 'member password 1' });
  const member = await Admin.signIn(svc.url, 'member@example.test', 'member password 1');
  for (const [method, path] of [['GET', '/providers'], ['POST', '/providers'], ['DELETE', '/providers/local?confirm=local'], ['GET', '/models']] as const) {
    isError(await member.call(method, path, method === 'POST' ? { name: 'x', address: upstream.address } : undefined), 403, 'forbidden', null);
  }
});

test('the OpenAPI document lists the catalog endpoints', async () => {
  const doc = (await (await fetch(`${svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  for (const path of ['/admin/v1/providers', '/admin/v1/providers/{name}', '/admin/v1/providers/{name}/check', '/admin/v1/models', '/admin/v1/models/{name}']) {
    assert.ok(doc.paths[path], path);
  }
  assert.equal(Object.keys(doc.paths['/admin/v1/providers/{name}']!).sort(), ['delete', 'get', 'patch']);
});

test.run();
