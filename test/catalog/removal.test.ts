import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { catalogPlugins, startCatalog, type CatalogService } from './support/setup.js';
import { ModelsUpstream } from './support/upstream.js';

const test = suite(`catalog provider removal, end to end (${shape})`);
let backing: Backing;
let svc: CatalogService;
let apiKey: string;
const upstream = new ModelsUpstream('sk-e2e');
const model = 'e2e:org/model:8b';

test.before(async () => {
  await upstream.start();
  backing = await createBacking();
  svc = await startCatalog(backing, {}, { plugins: { ...catalogPlugins(), 'chat-api': {} } });
  apiKey = await svc.admin.key(await svc.admin.workspace());
  await svc.admin.ok('POST', '/providers', { name: 'e2e', address: upstream.address, api_key: 'sk-e2e' });
  await svc.admin.ok('POST', '/models', { name: model, context_window: 8192, output_limit: 512, input_price: '1', output_price: '2' });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
  await upstream.stop();
});

async function chat(): Promise<{ status: number; body: { error?: { code: string; param: string | null } } }> {
  const res = await fetch(`${svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; param: string | null } } };
}

test('requests to a removed provider\'s model are 422 provider_not_configured; adding it again makes them work', async () => {
  const before = await chat();
  assert.is(before.status, 200, JSON.stringify(before.body));
  assert.is(upstream.seen.at(-1)?.authorization, 'Bearer sk-e2e');
  await svc.admin.ok('DELETE', '/providers/e2e?confirm=e2e');
  const refused = await chat();
  assert.is(refused.status, 422);
  assert.is(refused.body.error?.code, 'provider_not_configured');
  const listed = await svc.admin.ok<{ provider_missing: boolean }>('GET', `/models/${encodeURIComponent(model)}`);
  assert.is(listed.provider_missing, true);
  await svc.admin.ok('POST', '/providers', { name: 'e2e', address: upstream.address, api_key: 'sk-e2e' });
  const again = await chat();
  assert.is(again.status, 200, JSON.stringify(again.body));
});

test.run();
