import { CatalogToken, definePlugin, ProviderRegistryToken, Type } from '../../kernel/index.js';
import { discoverVendors } from './discover.js';
import { Registry } from './registry.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'providers.loaded': { vendors: readonly string[] };
  }
}

const deadlineFields = {
  /** Connecting to a provider (TCP + TLS). */
  connectMs: Type.Integer({ minimum: 1, default: 5000 }),
  /** Stream request sent → response headers. */
  firstByteMs: Type.Integer({ minimum: 1, default: 10_000 }),
  /** Stream response headers → first chunk. */
  firstTokenMs: Type.Integer({ minimum: 1, default: 15_000 }),
  /** Longest gap between two stream chunks. */
  idleMs: Type.Integer({ minimum: 1, default: 15_000 }),
  /** A whole (non-stream) reply, request sent → end of its body. */
  totalMs: Type.Integer({ minimum: 1, default: 300_000 }),
};

/** Upstream deadlines and pool size; every field has a default, so `"providers": {}` is enough. */
export const providersConfig = Type.Object(
  {
    ...deadlineFields,
    /** Keep-alive connections per provider. */
    connections: Type.Integer({ minimum: 1, default: 128 }),
    /** Adapters (pools) kept for workspaces' own keys of built-in providers; least recently used closed beyond. */
    workspaceAdapters: Type.Integer({ minimum: 1, default: 64 }),
    /** Deadlines of one provider (by name) over the ones above. */
    perProvider: Type.Record(Type.String(), Type.Partial(Type.Object(deadlineFields, { additionalProperties: false })), { default: {} }),
  },
  { additionalProperties: false },
);

/** Per service (tests run several in one process): keyed by the plugin's own container. */
const registries = new WeakMap<object, Registry>();

/**
 * The provider registry (`ProviderRegistryToken`): vendor adapter factories found by folder under
 * providers/, and one cached adapter per provider built from the catalog's rows and keys.
 */
export const providersPlugin = definePlugin({
  name: 'providers',
  config: providersConfig,
  async register(ctx) {
    const factories = await discoverVendors();
    const { connectMs, firstByteMs, firstTokenMs, idleMs, totalMs, connections, perProvider, workspaceAdapters } = ctx.config;
    const timeouts = { connectMs, firstByteMs, firstTokenMs, idleMs, totalMs };
    const registry = new Registry(factories, () => ctx.optional(CatalogToken), { timeouts, connections, perProvider, workspaceAdapters });
    registries.set(ctx.container, registry);
    ctx.provide(ProviderRegistryToken, registry);
    ctx.log.info('providers.loaded', { vendors: registry.vendors() });
  },
  async stop(ctx) {
    await registries.get(ctx.container)?.close();
    registries.delete(ctx.container);
  },
});

export default providersPlugin;
