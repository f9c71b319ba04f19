import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { StoreToken } from '../../kernel/index.js';
import { vendorError } from '../support/mock-upstream.js';
import { Admin } from '../support/provision.js';
import { eventually, fence, member, models, noClassifier, startRoutingWorld, type RoutingWorld } from '../routing/support.js';

const test = suite(`conversations over HTTP (${shape})`);
let w: RoutingWorld;
let asKey: Admin;

const canary = 'conversation-canary-4b7e1d';
type Json = any;

test.before(async () => {
  w = await startRoutingWorld({ plugins: { ...noClassifier.plugins, conversations: { config: { flushIntervalMs: 20 } } } });
  asKey = new Admin(w.svc.url, w.apiKey);
  await w.ws('POST', '/routes', { name: 'code', model: models.coder });
  await w.ws('PATCH', '/routing', { default_model: models.general, code_route: 'code' });
});
test.after(async () => w?.stop());
test.before.each(() => w.mock.reset());

const path = (id = '') => `/workspaces/${w.workspaceId}/conversations${id ? `/${id}` : ''}`;
const start = async (title: string | null = null): Promise<string> => (await asKey.ok<{ id: string }>('POST', path(), { title })).id;
const history = async (id: string): Promise<Json[]> => (await asKey.ok<Json>('GET', path(id))).messages;

async function refusal(p: Promise<unknown>): Promise<[number, string, unknown]> {
  try {
    await p;
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return [e.status!, String(e.code), e.param];
  }
  throw new Error('expected a refusal');
}

test('admin API: a key creates, lists, reads and deletes its own conversations; the exact view', async () => {
  const created = await asKey.call<Json>('POST', path(), { title: 'Planning' });
  assert.is(created.status, 201);
  assert.match(created.body.id, /^conv_[0-9a-v]{9}[A-Za-z0-9_-]{12}$/);
  assert.equal({ ...created.body, id: 'x', created_at: typeof created.body.created_at, updated_at: typeof created.body.updated_at }, {
    id: 'x', title: 'Planning', routing: null, created_at: 'string', updated_at: 'string',
  });
  const read = await asKey.ok<Json>('GET', `/workspaces/${w.workspaceId}/conversations/${created.body.id}`);
  assert.equal(read, { ...created.body, messages: [] });
  // The key acts as its person: the person's session sees the same conversation.
  const viaSession = await w.admin.ok<Json>('GET', `/workspaces/${w.workspaceId}/conversations`);
  assert.ok(viaSession.data.some((c: Json) => c.id === created.body.id));
  assert.ok((await asKey.ok<Json>('GET', path())).data.some((c: Json) => c.id === created.body.id));
  assert.is((await asKey.call('DELETE', `/workspaces/${w.workspaceId}/conversations/${created.body.id}`)).status, 204);
  const gone = await asKey.call<Json>('GET', path(created.body.id));
  assert.equal([gone.status, gone.body.error.code], [404, 'not_found']);
});

test('rename: PATCH sets the title (trimmed; null or blank clears it); too long → 400 at title; not yours → 404', async () => {
  const id = await start('Draft');
  const renamed = await asKey.call<Json>('PATCH', path(id), { title: '  Trip to Lisbon ' });
  assert.is(renamed.status, 200);
  assert.equal({ ...renamed.body, created_at: 0, updated_at: 0 }, { id, title: 'Trip to Lisbon', routing: null, created_at: 0, updated_at: 0 });
  assert.is((await asKey.ok<Json>('GET', path(id))).title, 'Trip to Lisbon');
  assert.is((await asKey.ok<Json>('PATCH', path(id), { title: '   ' })).title, null);
  assert.is((await asKey.ok<Json>('PATCH', path(id), { title: null })).title, null);
  const tooLong = await asKey.call<Json>('PATCH', path(id), { title: 'x'.repeat(201) });
  assert.equal([tooLong.status, tooLong.body.error.code, tooLong.body.error.param], [400, 'invalid_request', 'title']);
  const missing = await asKey.call<Json>('PATCH', path(id), {});
  assert.equal([missing.status, missing.body.error.param], [400, 'title']);
  const other = await member(w, 'conv-renamer@example.test');
  const theirs = await other.admin.call<Json>('PATCH', path(id), { title: 'Mine now' });
  assert.equal([theirs.status, theirs.body.error.code], [404, 'not_found']);
  const doc = (await (await fetch(`${w.svc.url}/admin/v1/openapi.json`)).json()) as Json;
  assert.ok(doc.paths['/admin/v1/workspaces/{workspaceId}/conversations/{id}'].patch);
});

test("another person's conversation is not found, through the admin API and through x-svc-conversation", async () => {
  const mine = await start();
  const other = await member(w, 'conv-member@example.test');
  const theirView = await other.admin.call<Json>('GET', path(mine));
  assert.equal([theirView.status, theirView.body.error.code], [404, 'not_found']);
  assert.equal((await other.admin.ok<Json>('GET', path())).data, []);
  assert.is((await other.admin.call('DELETE', path(mine))).status, 404);
  const theirClient = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: other.key, maxRetries: 0 });
  const r = theirClient.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hello there, how are you' }] }, { headers: { 'x-svc-conversation': mine } });
  assert.equal(await refusal(r), [404, 'not_found', 'x-svc-conversation']);
  assert.is(w.mock.requests.length, 0);
});

test('x-svc-conversation naming no conversation: 404 not_found, nothing sent', async () => {
  assert.equal(await refusal(w.ask('auto', 'Tell me something about the weather', { headers: { 'x-svc-conversation': 'conv_doesnotexist00000' } })), [404, 'not_found', 'x-svc-conversation']);
  assert.equal(await refusal(w.ask(models.general, 'Tell me something', { headers: { 'x-svc-conversation': 'x'.repeat(500) } })), [404, 'not_found', 'x-svc-conversation']);
  assert.is(w.mock.requests.length, 0);
});

test('the routing decision is made once (signal) and kept: later requests are sticky; the view shows it', async () => {
  const id = await start();
  const h = { 'x-svc-conversation': id };
  const first = await w.ask('auto', fence, { headers: h });
  assert.equal([first.headers.get('x-svc-routing-rule'), first.headers.get('x-svc-route'), first.headers.get('x-svc-model')], ['signal', 'code', models.coder]);
  const second = await w.ask('auto', 'Thanks! Now tell me a story about the sea', { headers: h, stream: true });
  assert.equal([second.headers.get('x-svc-routing-rule'), second.headers.get('x-svc-route'), second.headers.get('x-svc-model'), second.headers.get('x-svc-routing-reason')], ['sticky', 'code', models.coder, null]);
  assert.equal((await asKey.ok<Json>('GET', path(id))).routing, { rule: 'signal', route: 'code', model: null, reason: null, confidence: null });
  // An explicit model or route/<name> in the conversation is just that: explicit, and the kept decision stays.
  const explicit = await w.ask(models.writer, 'Tell me a story about the sea', { headers: h });
  assert.equal([explicit.headers.get('x-svc-routing-rule'), explicit.headers.get('x-svc-model')], ['explicit', models.writer]);
  assert.is((await w.ask('auto', 'One more', { headers: h })).headers.get('x-svc-routing-rule'), 'sticky');
});

test('two first requests of a conversation at once: one decision wins and both answer with it', async () => {
  const id = await start();
  const h = { 'x-svc-conversation': id };
  const replies = await Promise.all([w.ask('auto', fence, { headers: h }), w.ask('auto', 'hi', { headers: h })]);
  const kept = (await asKey.ok<Json>('GET', path(id))).routing;
  const keptModel = kept.route === 'code' ? models.coder : models.general;
  assert.equal(replies.map((r) => r.headers.get('x-svc-model')), [keptModel, keptModel]);
  assert.equal(replies.map((r) => r.headers.get('x-svc-routing-rule')).filter((rule) => rule !== 'sticky'), [kept.rule]);
});

test('a default decision is kept too: its model stays, with rule sticky and no reason', async () => {
  const id = await start();
  const h = { 'x-svc-conversation': id };
  const first = await w.ask('auto', 'hi', { headers: h });
  assert.equal([first.headers.get('x-svc-routing-rule'), first.headers.get('x-svc-routing-reason')], ['default', 'too_short']);
  const next = await w.ask('auto', fence, { headers: h });
  assert.equal([next.headers.get('x-svc-routing-rule'), next.headers.get('x-svc-route'), next.headers.get('x-svc-model'), next.headers.get('x-svc-routing-reason')], ['sticky', null, models.general, null]);
  assert.equal((await asKey.ok<Json>('GET', path(id))).routing, { rule: 'default', route: null, model: models.general, reason: 'too_short', confidence: null });
});

test('a kept decision whose route or model is gone no longer holds: each request decides afresh', async () => {
  await w.admin.model('local:short-lived');
  await w.ws('POST', '/routes', { name: 'temp', model: 'local:short-lived' });
  await w.ws('PATCH', '/routing', { code_route: 'temp' });
  const id = await start();
  const h = { 'x-svc-conversation': id };
  assert.is((await w.ask('auto', fence, { headers: h })).headers.get('x-svc-route'), 'temp');
  await w.ws('PATCH', '/routing', { code_route: 'code' });
  await w.ws('PATCH', '/routes/temp', { enabled: false });
  const afterDisable = await w.ask('auto', fence, { headers: h });
  assert.equal([afterDisable.headers.get('x-svc-routing-rule'), afterDisable.headers.get('x-svc-route')], ['signal', 'code']);
  await w.ws('PATCH', '/routes/temp', { enabled: true });
  assert.is((await w.ask('auto', 'And again', { headers: h })).headers.get('x-svc-routing-rule'), 'sticky');
  await w.admin.ok('DELETE', `/models/${encodeURIComponent('local:short-lived')}?confirm=local:short-lived`);
  const afterRemoval = await w.ask('auto', 'And again', { headers: h });
  assert.equal([afterRemoval.headers.get('x-svc-routing-rule'), afterRemoval.headers.get('x-svc-routing-reason')], ['default', 'classifier_unavailable']);
  await w.ws('DELETE', '/routes/temp');
});

test('history: each request\'s new messages and the reply (whole or streamed, tool calls too) are stored in order; failures add nothing', async () => {
  const id = await start('history');
  const h = { headers: { 'x-svc-conversation': id } };
  w.mock.enqueue({ reply: { content: `First answer ${canary}` } });
  const system = { role: 'system' as const, content: 'Be brief.' };
  const user1 = { role: 'user' as const, content: `First question ${canary}` };
  await w.client.chat.completions.create({ model: 'auto', messages: [system, user1] }, h);
  w.mock.enqueue({ chunks: ['Second ', 'answer'] });
  const user2 = { role: 'user' as const, content: 'Second question, please' };
  const stream = await w.client.chat.completions.create({ model: 'auto', messages: [system, user1, { role: 'assistant', content: `First answer ${canary}` }, user2], stream: true }, h);
  for await (const _ of stream) void _;
  const call = { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"tides"}' } };
  w.mock.enqueue({ reply: { content: null, tool_calls: [call], finish_reason: 'tool_calls' } });
  const user3 = { role: 'user' as const, content: 'Look up the tides' };
  await w.client.chat.completions.create({ model: 'auto', messages: [user3], tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] }, h);
  w.mock.enqueue({ error: vendorError('openai-model-not-found') });
  await refusal(w.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'This one fails upstream' }] }, h));

  const expected = [
    [system, null], [user1, null], [{ role: 'assistant', content: `First answer ${canary}` }, models.general],
    [user2, null], [{ role: 'assistant', content: 'Second answer' }, models.general],
    [user3, null], [{ role: 'assistant', content: null, tool_calls: [call] }, models.general],
  ];
  const stored = async () => (await history(id)).map((m: Json) => [m.message, m.model]);
  assert.ok((await eventually(async () => (await stored()).length >= expected.length, 3000)) >= 0, 'history not written');
  assert.equal(await stored(), expected);
  // History is data, never logged.
  assert.not.ok(w.svc.logs.text.includes(canary));
});

test('an exchange moves the conversation\'s last activity (retention counts from it)', async () => {
  const id = await start('old');
  await w.svc.service.get(StoreToken).execute('update conversations set updated_at = 1000 where id = ?', [id]);
  const before = Date.now();
  await w.client.chat.completions.create({ model: models.general, messages: [{ role: 'user', content: 'still here' }] }, { headers: { 'x-svc-conversation': id } });
  const moved = await eventually(async () => Date.parse((await asKey.ok<{ updated_at: string }>('GET', path(id))).updated_at) >= before, 3000);
  assert.ok(moved >= 0, 'updated_at did not move');
});

test('without the header nothing is stored and each request routes on its own', async () => {
  const id = await start();
  await w.ask('auto', fence);
  const r = await w.ask('auto', 'Tell me a story about the sea');
  assert.equal([r.headers.get('x-svc-routing-rule'), r.headers.get('x-svc-routing-reason')], ['default', 'classifier_unavailable']);
  await new Promise((done) => setTimeout(done, 100));
  assert.equal(await history(id), []);
  assert.is((await asKey.ok<Json>('GET', path(id))).routing, null);
});

test.run();
