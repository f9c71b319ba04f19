import {
  GatewayError,
  type CatalogService,
  type ProviderAdapter,
  type ProviderFactory,
  type ProviderRegistry,
  type ProviderSettings,
  type UpstreamTimeouts,
} from '../../kernel/index.js';

/** What every adapter is built with besides its provider row. */
export interface RegistryOptions {
  timeouts: UpstreamTimeouts;
  /** Keep-alive connections per provider, passed to adapters that pool (openai-compatible does). */
  connections: number;
  /** Deadlines of one provider over `timeouts`. */
  perProvider?: Record<string, Partial<UpstreamTimeouts>>;
}

/**
 * Adapters by provider name (ARCHITECTURE.md §6). Rows and keys are read from the catalog at call
 * time — the catalog plugin starts after this one — and each provider keeps one adapter (one
 * connection pool) until the catalog reports a change to it.
 */
export class Registry implements ProviderRegistry {
  private readonly adapters = new Map<string, ProviderAdapter>();
  private subscribed?: CatalogService;
  private closed = false;

  constructor(
    private readonly factories: Map<string, ProviderFactory>,
    private readonly catalog: () => CatalogService | undefined,
    private readonly options: RegistryOptions,
  ) {}

  vendors(): string[] {
    return [...this.factories.keys()];
  }

  factory(vendor: string): ProviderFactory | undefined {
    return this.factories.get(vendor);
  }

  private build(vendor: string, settings: Omit<ProviderSettings, 'timeouts'>): ProviderAdapter {
    const factory = this.factories.get(vendor);
    if (!factory) throw new GatewayError('provider_not_configured', `No adapter is installed for provider vendor "${vendor}".`);
    const timeouts = { ...this.options.timeouts, ...this.options.perProvider?.[settings.name] };
    const full: ProviderSettings & { connections: number } = { ...settings, timeouts, connections: this.options.connections };
    return factory.create(full);
  }

  /** Drops a cached adapter when the catalog says its provider changed (on any replica); `undefined` means only models changed. */
  private watch(catalog: CatalogService): void {
    if (this.subscribed === catalog) return;
    this.subscribed = catalog;
    catalog.onChange((provider) => {
      if (provider !== undefined) this.invalidate(provider);
    });
  }

  adapter(providerName: string): ProviderAdapter {
    const cached = this.adapters.get(providerName);
    if (cached) return cached;
    const catalog = this.catalog();
    if (!catalog) throw new GatewayError('provider_not_configured', `Provider "${providerName}" is not configured.`);
    this.watch(catalog);
    const row = catalog.provider(providerName);
    if (!row) throw new GatewayError('provider_not_configured', `Provider "${providerName}" is not configured.`);
    const apiKey = catalog.providerKey(providerName);
    if (row.builtIn && !apiKey) throw new GatewayError('provider_not_configured', `Provider "${providerName}" has no key.`);
    const settings: Omit<ProviderSettings, 'timeouts'> = apiKey ? { name: row.name, address: row.address, apiKey } : { name: row.name, address: row.address };
    const adapter = this.build(row.vendor, settings);
    if (!this.closed) this.adapters.set(providerName, adapter);
    return adapter;
  }

  probe(vendor: string, settings: Omit<ProviderSettings, 'timeouts'>): ProviderAdapter {
    return this.build(vendor, settings);
  }

  invalidate(providerName: string): void {
    const adapter = this.adapters.get(providerName);
    if (!adapter) return;
    this.adapters.delete(providerName);
    // In-flight calls keep their pool until they finish; new calls get a fresh adapter.
    void adapter.close().catch(() => undefined);
  }

  /** Number of cached adapters (diagnostics and tests). */
  get size(): number {
    return this.adapters.size;
  }

  /** Closes every adapter (plugin stop). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.adapters.values()];
    this.adapters.clear();
    await Promise.all(all.map((a) => a.close().catch(() => undefined)));
  }
}
