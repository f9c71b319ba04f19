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
  /**
   * Most adapters kept for workspaces' own keys of built-in providers (each is a pool); the least
   * recently used is closed beyond it. Default 64.
   */
  workspaceAdapters?: number;
  /** Deadlines of one provider over `timeouts`. */
  perProvider?: Record<string, Partial<UpstreamTimeouts>>;
}

/** Cache id of a workspace's own-key adapter: never clashes with a provider name (no newline in names). */
const workspaceEntry = (provider: string, workspaceId: string): string => `${provider}\n${workspaceId}`;

/**
 * Adapters by provider name (ARCHITECTURE.md §6). Rows and keys are read from the catalog at call
 * time — the catalog plugin starts after this one — and each provider keeps one adapter (one
 * connection pool) until the catalog reports a change to it.
 */
export class Registry implements ProviderRegistry {
  private readonly adapters = new Map<string, ProviderAdapter>();
  /** Workspace own-key adapters in least-recently-used order (a Map keeps insertion order). */
  private readonly recent = new Map<string, ProviderAdapter>();
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

  adapter(providerName: string, workspaceId?: string): ProviderAdapter {
    // Once watched, the catalog is known: no container lookup on every request.
    const catalog = this.subscribed ?? this.catalog();
    const own = workspaceId !== undefined && catalog?.hasWorkspaceKey(providerName, workspaceId) === true;
    const entry = own ? workspaceEntry(providerName, workspaceId) : providerName;
    const cached = this.adapters.get(entry);
    if (cached) {
      if (own) this.touch(entry, cached);
      return cached;
    }
    if (!catalog) throw new GatewayError('provider_not_configured', `Provider "${providerName}" is not configured.`);
    this.watch(catalog);
    const row = catalog.provider(providerName);
    if (!row) throw new GatewayError('provider_not_configured', `Provider "${providerName}" is not configured.`);
    const apiKey = catalog.providerKey(providerName, own ? workspaceId : undefined);
    if (row.builtIn && !apiKey) throw new GatewayError('provider_not_configured', `Provider "${providerName}" has no key.`);
    const settings: Omit<ProviderSettings, 'timeouts'> = apiKey ? { name: row.name, address: row.address, apiKey } : { name: row.name, address: row.address };
    const adapter = this.build(row.vendor, settings);
    if (!this.closed) {
      this.adapters.set(entry, adapter);
      if (own) this.touch(entry, adapter);
    }
    return adapter;
  }

  /** Marks a workspace adapter as just used and closes the least recently used beyond the bound. */
  private touch(entry: string, adapter: ProviderAdapter): void {
    this.recent.delete(entry);
    this.recent.set(entry, adapter);
    const max = this.options.workspaceAdapters ?? 64;
    for (const [oldest, old] of this.recent) {
      if (this.recent.size <= max) break;
      this.recent.delete(oldest);
      this.adapters.delete(oldest);
      void old.close().catch(() => undefined);
    }
  }

  probe(vendor: string, settings: Omit<ProviderSettings, 'timeouts'>): ProviderAdapter {
    return this.build(vendor, settings);
  }

  invalidate(providerName: string): void {
    const prefix = workspaceEntry(providerName, '');
    for (const [entry, adapter] of this.adapters) {
      if (entry !== providerName && !entry.startsWith(prefix)) continue;
      this.adapters.delete(entry);
      this.recent.delete(entry);
      // In-flight calls keep their pool until they finish; new calls get a fresh adapter.
      void adapter.close().catch(() => undefined);
    }
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
    this.recent.clear();
    await Promise.all(all.map((a) => a.close().catch(() => undefined)));
  }
}
