import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogToken } from '../../kernel/index.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { eventually, startCatalog, type CatalogService } from './support/setup.js';
import { ModelsUpstream } from './support/upstream.js';

const test = suite(`catalog across replicas (${shape})`);
let backing: Backing;
let one: CatalogService;
let two: CatalogService;
const upstream = new ModelsUpstream('sk-replica');

if (shape === 'scale-out') {
  test.before(async () => {
    await upstream.start();
    backing = await createBacking();
    // Built-in providers point at the local stand-in: tests never reach a real vendor.
    const local = { plugins: { catalog: { config: { builtInAddresses: { openai: upstream.address } } } } };
    one = await startCatalog(backing, {}, local);
    two = await startCatalog(backing, {}, local);
  });
  test.after(async () => {
    await one.stop();
    await two.stop();
    await backing.drop();
    await upstream.stop();
  });

  test('a provider and model added on one replica are in the other one\'s snapshot within 1 s; listeners hear it', async () => {
    const heard: Array<string | undefined> = [];
    const catalog = two.service.get(CatalogToken);
    catalog.onChange((p) => heard.push(p));
    await one.admin.ok('POST', '/providers', { name: 'shared', address: upstream.address, api_key: 'sk-replica' });
    await one.admin.ok('POST', '/models', { name: 'shared:org/model:v1', context_window: 4096, output_limit: 1024, input_price: '0.50', output_price: '1.50' });
    assert.ok(await eventually(() => catalog.model('shared:org/model:v1') !== undefined, 1000), 'model not visible on the other replica within 1 s');
    const m = catalog.model('shared:org/model:v1')!;
    assert.equal([m.provider, m.upstreamId, m.inputMicroUsdPerMTok, m.outputMicroUsdPerMTok], ['shared', 'org/model:v1', 500_000, 1_500_000]);
    assert.is(catalog.provider('shared')?.check, 'connected');
    assert.is(catalog.providerKey('shared'), 'sk-replica');
    assert.ok(heard.includes('shared') && heard.includes(undefined));
  });

  test('edits and removals reach the other replica too', async () => {
    const catalog = two.service.get(CatalogToken);
    await one.admin.ok('PATCH', `/models/${encodeURIComponent('shared:org/model:v1')}`, { output_price: 3 });
    assert.ok(await eventually(() => catalog.model('shared:org/model:v1')?.outputMicroUsdPerMTok === 3_000_000));
    await one.admin.ok('PATCH', '/providers/shared', { api_key: 'sk-replica-2' });
    assert.ok(await eventually(() => catalog.providerKey('shared') === 'sk-replica-2'));
    await two.admin.ok('DELETE', '/providers/shared?confirm=shared');
    const first = one.service.get(CatalogToken);
    assert.ok(await eventually(() => first.provider('shared') === undefined));
    assert.ok(first.model('shared:org/model:v1'), 'the model stays after its provider is removed');
  });

  test('built-in keys and model overrides set on one replica apply on the other (instance key, workspace key, hide)', async () => {
    const catalog = two.service.get(CatalogToken);
    assert.is(catalog.configured('openai', 'ws-1'), false);
    await one.admin.ok('PATCH', '/providers/openai', { api_key: 'sk-builtin-instance' });
    assert.ok(await eventually(() => catalog.providerKey('openai') === 'sk-builtin-instance'));
    const ws = await one.admin.workspace();
    await one.admin.ok('PUT', `/workspaces/${ws}/provider-keys/openai`, { api_key: 'sk-builtin-ws' });
    assert.ok(await eventually(() => catalog.hasWorkspaceKey('openai', ws)));
    assert.is(catalog.providerKey('openai', ws), 'sk-builtin-ws');
    assert.is(catalog.providerKey('openai', 'another'), 'sk-builtin-instance');
    await one.admin.ok('PATCH', `/built-in-models/${encodeURIComponent('openai:gpt-4o')}`, { hidden: true });
    assert.ok(await eventually(() => catalog.model('openai:gpt-4o') === undefined));
  });
} else {
  test('the safety reload picks up a change whose message never came (two processes, no shared cache)', async () => {
    await upstream.start();
    const b = await createBacking();
    const overrides = { plugins: { catalog: { config: { reloadIntervalMs: 1000 } } } };
    const a = await startCatalog(b, {}, overrides);
    const c = await startCatalog(b, {}, overrides);
    try {
      await a.admin.ok('POST', '/providers', { name: 'quiet', address: upstream.address });
      await a.admin.ok('POST', '/models', { name: 'quiet:m', context_window: 10, output_limit: 10, input_price: 0, output_price: 0 });
      const catalog = c.service.get(CatalogToken);
      assert.is(catalog.model('quiet:m'), undefined);
      assert.ok(await eventually(() => catalog.model('quiet:m') !== undefined, 2500));
    } finally {
      await a.stop();
      await c.stop();
      await b.drop();
      await upstream.stop();
    }
  });
}

test.run();
