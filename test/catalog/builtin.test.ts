import OpenAI from 'openai';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, startWorld, type World } from '../support/provision.js';
import { addMember, newPerson } from '../identity/support.js';

type Err = { error: { code: string; param: string | null; message: string } };
type ProviderBody = { name: string; vendor: string; address: string; has_key: boolean; built_in: boolean; check: string };

const test = suite(`catalog built-in providers and keys (${shape})`);
const mock = new MockUpstream();
let w: World;
let other: { workspaceId: string; apiKey: string };
const client = (apiKey: string) => new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey, maxRetries: 0 });
const enc = encodeURIComponent;

test.before(async () => {
  await mock.start();
  w = await startWorld({ plugins: { catalog: { config: { builtInAddresses: { openai: `${mock.url}/` } } } } });
  const workspaceId = await w.admin.workspace();
  other = { workspaceId, apiKey: await w.admin.key(workspaceId) };
});
test.after(async () => {
  await w.stop();
  await mock.stop();
});

const listed = async (apiKey: string) => (await client(apiKey).models.list()).data.map((m) => m.id);
const lastKey = () => mock.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)?.headers.authorization;
async function healthChecks(): Promise<string[]> {
  return Object.keys(((await (await fetch(`${w.svc.url}/healthz`)).json()) as { checks: Record<string, unknown> }).checks);
}
async function refusedWith(p: Promise<unknown>, status: number, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, OpenAI.APIError);
    assert.is((err as InstanceType<typeof OpenAI.APIError>).status, status);
    assert.is((err as InstanceType<typeof OpenAI.APIError>).code, code);
    return;
  }
  assert.unreachable(`expected ${status} ${code}`);
}
const ask = (apiKey: string, model = 'openai:gpt-4o') => client(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

test('a built-in provider is listed as built-in with its (overridden) address and no row to add; its name is taken', async () => {
  const list = await w.admin.ok<{ data: ProviderBody[] }>('GET', '/providers');
  const openai = list.data.find((p) => p.name === 'openai');
  assert.equal(
    { vendor: openai?.vendor, address: openai?.address, built_in: openai?.built_in, has_key: openai?.has_key, check: openai?.check },
    { vendor: 'openai', address: mock.url, built_in: true, has_key: false, check: 'unchecked' },
  );
  for (const name of ['openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek', 'xai', 'openrouter']) {
    const r = await w.admin.call<Err>('POST', '/providers', { name, address: mock.url });
    assert.is(r.status, 400, name);
    assert.is(r.body.error.code, 'invalid_request');
    assert.is(r.body.error.param, 'name');
    assert.match(r.body.error.message, 'built-in');
  }
  const removal = await w.admin.call<Err>('DELETE', '/providers/openai?confirm=openai');
  assert.is(removal.status, 400);
  assert.is(removal.body.error.param, 'name');
  const model = await w.admin.call<Err>('POST', '/models', { name: 'openai:my-model', context_window: 1000, output_limit: 100, input_price: 1, output_price: 1 });
  assert.is(model.status, 400);
  assert.match(model.body.error.message, 'built-in-models');
  // Its address may be changed by an instance admin (test/providers/builtin-address.test.ts), but only to a valid one.
  const moved = await w.admin.call<Err>('PATCH', '/providers/openai', { address: 'ftp://elsewhere.test/v1' });
  assert.is(moved.status, 400);
  assert.is(moved.body.error.param, 'address');
});

test('without a key: its models are not listed, answer 422 provider_not_configured, and /healthz does not show it', async () => {
  const check = await w.admin.call<Err>('POST', '/providers/openai/check');
  assert.is(check.status, 400);
  assert.is(check.body.error.param, 'api_key');
  assert.not.ok((await listed(w.apiKey)).some((id) => id.startsWith('openai:')));
  await refusedWith(ask(w.apiKey), 422, 'provider_not_configured');
  assert.not.ok((await healthChecks()).includes('provider:openai'));
  assert.is(mock.requests.filter((r) => r.path === '/v1/chat/completions').length, 0);
});

test('an instance-wide key: saved encrypted, checked, models listed with catalogue prices, requests carry it, /healthz shows it', async () => {
  const set = await w.admin.ok<ProviderBody>('PATCH', '/providers/openai', { api_key: 'sk-instance-key' });
  assert.is(set.has_key, true);
  assert.is(set.check, 'connected');
  assert.not.ok(JSON.stringify(set).includes('sk-instance-key'));
  assert.is(mock.requests.at(-1)?.headers.authorization, 'Bearer sk-instance-key');
  const models = await client(w.apiKey).models.list();
  const gpt = models.data.find((m) => m.id === 'openai:gpt-4o') as unknown as { svc: { prices: Record<string, number>; capabilities: Record<string, boolean>; context_window: number } };
  assert.equal(gpt.svc.prices, { input_micro_usd_per_mtok: 2_500_000, output_micro_usd_per_mtok: 10_000_000 });
  assert.equal(gpt.svc.capabilities, { images: true, pdf: true, tools: true });
  assert.is(gpt.svc.context_window, 128_000);
  const reply = await ask(w.apiKey);
  assert.is(reply.model, 'openai:gpt-4o');
  assert.is(reply.choices[0]?.message.content, 'Hello from the mock.');
  const sent = mock.requests.at(-1)!;
  assert.is(sent.headers.authorization, 'Bearer sk-instance-key');
  assert.is(sent.body.model, 'gpt-4o');
  assert.is(sent.body.max_completion_tokens, 16_384);
  assert.is(sent.body.max_tokens, undefined);
  // The admin's check counts as the health check: /healthz does not call the vendor again within the minute.
  const checks = () => mock.requests.filter((r) => r.path === '/v1/models').length;
  const before = checks();
  for (let i = 0; i < 3; i++) assert.ok((await healthChecks()).includes('provider:openai'));
  assert.is(checks(), before);
});

test('a workspace key overrides the instance key for that workspace only; /healthz still shows only the instance key', async () => {
  const put = await w.admin.ok<{ checked_at: string | null }>('PUT', `/workspaces/${other.workspaceId}/provider-keys/openai`, { api_key: 'sk-workspace-b' });
  assert.ok(put.checked_at && !Number.isNaN(Date.parse(put.checked_at)));
  assert.equal(put, { provider: 'openai', vendor: 'openai', has_workspace_key: true, has_instance_key: true, check: 'connected', checked_at: put.checked_at });
  assert.is(mock.requests.at(-1)?.headers.authorization, 'Bearer sk-workspace-b');
  await ask(other.apiKey);
  assert.is(lastKey(), 'Bearer sk-workspace-b');
  await ask(w.apiKey);
  assert.is(lastKey(), 'Bearer sk-instance-key');
  await ask(other.apiKey);
  assert.is(lastKey(), 'Bearer sk-workspace-b');
  assert.equal(w.svc.logs.events('catalog.builtin_key_changed').map((e) => [e.provider, e.workspace_id, e.action]), [['openai', null, 'set'], ['openai', other.workspaceId, 'set']]);
  assert.not.ok(w.svc.logs.text.includes('sk-workspace-b') || w.svc.logs.text.includes('sk-instance-key'));
  const listA = await w.admin.ok<{ data: Array<{ provider: string; has_workspace_key: boolean }> }>('GET', `/workspaces/${w.workspaceId}/provider-keys`);
  assert.is(listA.data.find((k) => k.provider === 'openai')?.has_workspace_key, false);
  assert.equal((await healthChecks()).filter((c) => c.startsWith('provider:')), ['provider:openai']);
});

test('workspace keys: a workspace admin (not an instance admin) sets them; a member may not; instance-wide routes stay instance-admin only', async () => {
  await newPerson(w.svc.url, w.admin.token, 'ws-admin@example.test', 'pw-ws-admin-long-enough');
  await newPerson(w.svc.url, w.admin.token, 'ws-member@example.test', 'pw-ws-member-long-enough');
  await addMember(w.svc.url, w.admin.token, w.workspaceId, 'ws-admin@example.test', 'admin');
  await addMember(w.svc.url, w.admin.token, w.workspaceId, 'ws-member@example.test', 'member');
  const wsAdmin = await Admin.signIn(w.svc.url, 'ws-admin@example.test', 'pw-ws-admin-long-enough');
  const member = await Admin.signIn(w.svc.url, 'ws-member@example.test', 'pw-ws-member-long-enough');
  const path = `/workspaces/${w.workspaceId}/provider-keys/openai`;
  const denied = await member.call<Err>('PUT', path, { api_key: 'sk-member' });
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'forbidden');
  assert.is((await wsAdmin.call<Err>('PATCH', '/providers/openai', { api_key: 'sk-nope' })).status, 403);
  const set = await wsAdmin.call<{ has_workspace_key: boolean }>('PUT', path, { api_key: 'sk-workspace-a' });
  assert.is(set.status, 200);
  assert.is(set.body.has_workspace_key, true);
  await ask(w.apiKey);
  assert.is(lastKey(), 'Bearer sk-workspace-a');
  assert.is((await wsAdmin.call('DELETE', path)).status, 200);
  await ask(w.apiKey);
  assert.is(lastKey(), 'Bearer sk-instance-key');
  assert.is((await wsAdmin.call<Err>('PUT', `/workspaces/${w.workspaceId}/provider-keys/local`, { api_key: 'x' })).status, 404);
});

test('with only a workspace key, only that workspace can use the built-in; removing it refuses again', async () => {
  const removed = await w.admin.ok<{ removed: boolean }>('DELETE', '/providers/openai/key');
  assert.is(removed.removed, true);
  assert.not.ok((await healthChecks()).includes('provider:openai'));
  await refusedWith(ask(w.apiKey), 422, 'provider_not_configured');
  assert.not.ok((await listed(w.apiKey)).includes('openai:gpt-4o'));
  assert.ok((await listed(other.apiKey)).includes('openai:gpt-4o'));
  await ask(other.apiKey);
  assert.is(lastKey(), 'Bearer sk-workspace-b');
  await w.admin.ok('DELETE', `/workspaces/${other.workspaceId}/provider-keys/openai`);
  await refusedWith(ask(other.apiKey), 422, 'provider_not_configured');
  await w.admin.ok('PATCH', '/providers/openai', { api_key: 'sk-instance-key' });
});

test('admins hide or re-price a built-in model; a hidden one is neither listed nor called', async () => {
  const name = enc('openai:gpt-4o');
  const hidden = await w.admin.ok<{ hidden: boolean }>('PATCH', `/built-in-models/${name}`, { hidden: true });
  assert.is(hidden.hidden, true);
  assert.not.ok((await listed(w.apiKey)).includes('openai:gpt-4o'));
  await refusedWith(ask(w.apiKey), 404, 'model_not_found');
  const priced = await w.admin.ok<{ hidden: boolean; input_price: string; input_micro_usd_per_mtok: number; catalogue_input_micro_usd_per_mtok: number }>(
    'PATCH', `/built-in-models/${name}`, { hidden: false, input_price: '3.00' },
  );
  assert.equal([priced.hidden, priced.input_price, priced.input_micro_usd_per_mtok, priced.catalogue_input_micro_usd_per_mtok], [false, '3.00', 3_000_000, 2_500_000]);
  const entry = (await client(w.apiKey).models.list()).data.find((m) => m.id === 'openai:gpt-4o') as unknown as { svc: { prices: Record<string, number> } };
  assert.is(entry.svc.prices.input_micro_usd_per_mtok, 3_000_000);
  await w.admin.ok('PATCH', `/built-in-models/${name}`, { input_price: null });
  const back = await w.admin.ok<{ input_micro_usd_per_mtok: number }>('GET', `/built-in-models/${name}`);
  assert.is(back.input_micro_usd_per_mtok, 2_500_000);
  const list = await w.admin.ok<{ data: Array<{ provider: string }> }>('GET', '/built-in-models?provider=openai');
  assert.ok(list.data.length > 10 && list.data.every((m) => m.provider === 'openai'));
});

test('admins lower a built-in model\'s output limit: sent when a request sets none, refused above it, never above the catalogue\'s', async () => {
  type View = { output_limit: number; catalogue_output_limit: number };
  const name = enc('openai:gpt-4o');
  const before = await w.admin.ok<View>('GET', `/built-in-models/${name}`);
  assert.is(before.output_limit, before.catalogue_output_limit);
  for (const output_limit of [before.catalogue_output_limit + 1, 0, 2.5]) {
    const r = await w.admin.call<Err>('PATCH', `/built-in-models/${name}`, { output_limit });
    assert.equal([r.status, r.body.error.code, r.body.error.param], [400, 'invalid_request', 'output_limit'], String(output_limit));
  }
  const lowered = await w.admin.ok<View>('PATCH', `/built-in-models/${name}`, { output_limit: 1000 });
  assert.equal([lowered.output_limit, lowered.catalogue_output_limit], [1000, before.catalogue_output_limit]);
  await ask(w.apiKey);
  const sent = mock.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)?.body;
  assert.is(sent.max_completion_tokens ?? sent.max_tokens, 1000, 'the lowered limit is sent when the request sets none');
  await refusedWith(client(w.apiKey).chat.completions.create({ model: 'openai:gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1001 }), 400, 'output_too_long');
  const back = await w.admin.ok<View>('PATCH', `/built-in-models/${name}`, { output_limit: null });
  assert.is(back.output_limit, before.catalogue_output_limit);
});

test('the key and model routes are in the admin OpenAPI document', async () => {
  const doc = (await (await fetch(`${w.svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const path of ['/providers/{name}/key', '/workspaces/{workspaceId}/provider-keys', '/workspaces/{workspaceId}/provider-keys/{name}', '/built-in-models', '/built-in-models/{name}']) {
    assert.ok(doc.paths[`/admin/v1${path}`], path);
  }
});

test.run();
