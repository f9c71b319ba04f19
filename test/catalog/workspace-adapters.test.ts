import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defineProvider, type CatalogProvider, type CatalogService, type ProviderAdapter, type ProviderSettings } from '../../kernel/index.js';
import { Registry } from '../../plugins/providers/registry.js';

/** The registry's per-(provider, key) adapters for built-in providers, against a scripted catalog. */
const test = suite('registry: adapters for workspace keys');

function fakeCatalog(keys: Record<string, string>, instanceKey?: string): CatalogService & { fire(p?: string): void } {
  const listeners: Array<(p?: string) => void> = [];
  const provider: CatalogProvider = { name: 'openai', vendor: 'fake', address: 'http://127.0.0.1:9/v1', builtIn: true, hasKey: instanceKey !== undefined, check: 'unchecked', checkedAt: null };
  return {
    model: () => undefined,
    models: () => [],
    provider: (n) => (n === 'openai' ? provider : undefined),
    providers: () => [provider],
    providerKey: (_n, ws) => (ws !== undefined && keys[ws]) || instanceKey,
    configured: (_n, ws) => instanceKey !== undefined || (ws !== undefined && ws in keys),
    hasWorkspaceKey: (_n, ws) => ws in keys,
    onChange: (l) => void listeners.push(l),
    fire: (p) => listeners.forEach((l) => l(p)),
  };
}

function setup(keys: Record<string, string>, instanceKey: string | undefined, workspaceAdapters: number) {
  const built: Array<{ key: string | undefined; closed: boolean }> = [];
  const factory = defineProvider({
    vendor: 'fake',
    create: (s: ProviderSettings) => {
      const record = { key: s.apiKey, closed: false };
      built.push(record);
      return { complete: async () => undefined as never, stream: async () => [] as never, check: async () => 'connected', close: async () => void (record.closed = true) } as ProviderAdapter;
    },
  });
  const catalog = fakeCatalog(keys, instanceKey);
  const timeouts = { connectMs: 1, firstByteMs: 1, idleMs: 1 };
  const registry = new Registry(new Map([['fake', factory]]), () => catalog, { timeouts, connections: 1, workspaceAdapters });
  return { registry, built, catalog };
}

test('a workspace with its own key gets its own adapter; others share the instance key\'s', () => {
  const { registry, built } = setup({ a: 'sk-a' }, 'sk-inst', 8);
  const a = registry.adapter('openai', 'a');
  const b = registry.adapter('openai', 'b');
  const plain = registry.adapter('openai');
  assert.is.not(a, b);
  assert.is(b, plain);
  assert.is(registry.adapter('openai', 'a'), a);
  assert.equal(built.map((x) => x.key), ['sk-a', 'sk-inst']);
});

test('no key for the workspace and none instance-wide: provider_not_configured', () => {
  const { registry } = setup({ a: 'sk-a' }, undefined, 8);
  assert.ok(registry.adapter('openai', 'a'));
  assert.throws(() => registry.adapter('openai', 'b'), (e: { code: string }) => e.code === 'provider_not_configured');
});

test('bounded: beyond workspaceAdapters the least recently used is closed and rebuilt on next use', () => {
  const { registry, built } = setup({ a: 'sk-a', b: 'sk-b', c: 'sk-c' }, 'sk-inst', 2);
  const a = registry.adapter('openai', 'a');
  registry.adapter('openai', 'b');
  registry.adapter('openai', 'a'); // a is now the most recent
  registry.adapter('openai', 'c'); // evicts b
  assert.is(built.find((x) => x.key === 'sk-b')?.closed, true);
  assert.is(built.find((x) => x.key === 'sk-a')?.closed, false);
  assert.is(registry.adapter('openai', 'a'), a);
  registry.adapter('openai', 'b');
  assert.is(built.filter((x) => x.key === 'sk-b').length, 2);
  assert.is(registry.size, 2);
});

test('a change to the provider drops its instance and workspace adapters', () => {
  const { registry, built, catalog } = setup({ a: 'sk-a' }, 'sk-inst', 8);
  registry.adapter('openai', 'a');
  registry.adapter('openai');
  catalog.fire('openai');
  assert.ok(built.every((x) => x.closed));
  assert.is(registry.size, 0);
});

test.run();
