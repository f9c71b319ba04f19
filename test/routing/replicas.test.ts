import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, adminEnv } from '../support/provision.js';
import { eventually, fence, models } from './support.js';

const test = suite(`routing across replicas (${shape})`);
let backing: Backing;
let one: TestService;
let two: TestService;
let mock: MockUpstream;
let admin: Admin;
let workspaceId: string;
let key: string;

// Embedded replicas share a SQLite file but no cache, so only the safety reloads carry changes: make them short.
const embedded = shape === 'embedded';
const overrides = {
  plugins: {
    routing: { config: { classifier: { enabled: false }, ...(embedded ? { snapshotReloadMs: 200 } : {}) } },
    ...(embedded ? { identity: { config: { reloadIntervalMs: 1000 } }, catalog: { config: { reloadIntervalMs: 1000 } } } : {}),
  },
};

test.before(async () => {
  mock = await new MockUpstream().start();
  backing = await createBacking();
  one = await startService({ backing, overrides, env: adminEnv });
  two = await startService({ backing, overrides, env: adminEnv });
  admin = await Admin.signIn(one.url);
  await admin.provider('local', mock.url);
  for (const m of Object.values(models)) await admin.model(m);
  workspaceId = await admin.workspace();
  key = await admin.key(workspaceId);
});
test.after(async () => {
  await one?.stop();
  await two?.stop();
  await backing?.drop();
  await mock?.stop();
});

const client = (svc: TestService) => new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: key, maxRetries: 0 });

async function routeModel(svc: TestService, model: string, headers: Record<string, string> = {}, text = 'Write a function that sorts a list'): Promise<Headers> {
  const { response } = await client(svc).chat.completions.create({ model, messages: [{ role: 'user', content: text }] }, { headers }).withResponse();
  return response.headers;
}

test("an admin's route change on one replica reaches the other within 1 s (listing and selection)", async () => {
  // The other replica must see the catalog's new models before it can serve them.
  assert.ok((await eventually(async () => (await routeModel(two, models.general).catch(() => null)) !== null, 3000)) >= 0);
  await admin.ok('POST', `/workspaces/${workspaceId}/routes`, { name: 'code', model: models.coder, fallbacks: [models.coderBackup] });
  const listed = await eventually(async () => {
    const ids = [];
    for await (const m of client(two).models.list()) ids.push(m.id);
    return ids.includes('route/code');
  });
  assert.ok(listed >= 0, 'route/code not listed by the second replica within 1 s');
  assert.is((await routeModel(two, 'route/code')).get('x-svc-model'), models.coder);

  await admin.ok('PATCH', `/workspaces/${workspaceId}/routes/code`, { model: models.writer });
  const moved = await eventually(async () => (await routeModel(two, 'route/code')).get('x-svc-model') === models.writer);
  assert.ok(moved >= 0, 'the changed model did not serve route/code on the second replica within 1 s');
});

test('a conversation routed on one replica stays on its route on the other (rule sticky), the decision is stored', async () => {
  await admin.ok('PATCH', `/workspaces/${workspaceId}/routing`, { default_model: models.general, code_route: 'code' });
  const asKey = new Admin(one.url, key);
  const conv = await asKey.ok<{ id: string }>('POST', `/workspaces/${workspaceId}/conversations`, {});
  for (const svc of [one, two]) assert.ok((await eventually(async () => (await routeModel(svc, 'auto', {}, fence).catch(() => null))?.get('x-svc-routing-rule') === 'signal', 2000)) >= 0);
  const first = await routeModel(one, 'auto', { 'x-svc-conversation': conv.id }, fence);
  assert.equal([first.get('x-svc-routing-rule'), first.get('x-svc-route')], ['signal', 'code']);
  const next = await routeModel(two, 'auto', { 'x-svc-conversation': conv.id }, 'And now explain how it works, in plain words');
  assert.equal([next.get('x-svc-routing-rule'), next.get('x-svc-route'), next.get('x-svc-model'), next.get('x-svc-routing-reason')], ['sticky', 'code', models.writer, null]);
  // Without the header the same words route on their own.
  const alone = await routeModel(two, 'auto', {}, 'And now explain how it works, in plain words');
  assert.equal([alone.get('x-svc-routing-rule'), alone.get('x-svc-routing-reason')], ['default', 'classifier_unavailable']);
});

test.run();
