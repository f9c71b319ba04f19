import type { CatalogModel, CatalogProvider, CatalogService } from '../../kernel/index.js';
import type { Credentials } from './credentials.js';
import type { CatalogRepo, ProviderRow } from './repo.js';

/** What a reload changed: providers whose adapter settings differ (added, removed, address, key), and whether any model did. */
export interface SnapshotDiff {
  providers: string[];
  models: boolean;
}

/** Associated data a provider's key is encrypted with: the ciphertext only opens on its own row. */
export const keyContext = (provider: string): string => `catalog.provider:${provider}`;

function providerView(r: ProviderRow): CatalogProvider {
  return Object.freeze({ name: r.name, vendor: r.vendor, address: r.address, builtIn: false, hasKey: r.apiKeyEnc !== null, check: r.check, checkedAt: r.checkedAt });
}

const adapterSettings = (r: ProviderRow | undefined): string => (r ? `${r.vendor}\n${r.address}\n${r.apiKeyEnc ?? ''}` : '');

/**
 * The CatalogService the request path reads: providers and models held in memory, swapped whole on
 * reload (no database round trip per request). Keys are decrypted on first use and the plain
 * values kept in this process's memory only.
 */
export class CatalogSnapshot implements CatalogService {
  private rows = new Map<string, ProviderRow>();
  private providerViews = new Map<string, CatalogProvider>();
  private modelMap = new Map<string, CatalogModel>();
  private modelList: CatalogModel[] = [];
  private modelStamps = '';
  private readonly plainKeys = new Map<string, { enc: string; plain: string }>();
  private readonly listeners: Array<(provider?: string) => void> = [];
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: CatalogRepo,
    private readonly credentials: Credentials,
  ) {}

  model(name: string): CatalogModel | undefined {
    return this.modelMap.get(name);
  }

  models(): CatalogModel[] {
    return this.modelList;
  }

  provider(name: string): CatalogProvider | undefined {
    return this.providerViews.get(name);
  }

  providers(): CatalogProvider[] {
    return [...this.providerViews.values()];
  }

  /** The stored row (encrypted key included), for the plugin's own admin and health code. */
  row(name: string): ProviderRow | undefined {
    return this.rows.get(name);
  }

  providerKey(name: string): string | undefined {
    const enc = this.rows.get(name)?.apiKeyEnc;
    if (!enc) return undefined;
    const cached = this.plainKeys.get(name);
    if (cached?.enc === enc) return cached.plain;
    const plain = this.credentials.decrypt(enc, keyContext(name));
    this.plainKeys.set(name, { enc, plain });
    return plain;
  }

  onChange(listener: (provider?: string) => void): void {
    this.listeners.push(listener);
  }

  /** Tells listeners what changed: each changed provider by name, then `undefined` when models changed. */
  notify(diff: SnapshotDiff): void {
    const calls: Array<string | undefined> = [...diff.providers];
    if (diff.models) calls.push(undefined);
    for (const provider of calls) {
      for (const listener of this.listeners) {
        try {
          listener(provider);
        } catch {
          // One listener failing must not keep the others from seeing the change.
        }
      }
    }
  }

  /** Reads both tables and swaps the snapshot; reloads run one after another, each seeing every earlier write. */
  reload(): Promise<SnapshotDiff> {
    const next = this.chain.then(() => this.load());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async load(): Promise<SnapshotDiff> {
    const [providers, models] = await Promise.all([this.repo.providers(), this.repo.models()]);
    const rows = new Map(providers.map((r) => [r.name, r]));
    const names = new Set([...rows.keys(), ...this.rows.keys()]);
    const changed = [...names].filter((n) => adapterSettings(rows.get(n)) !== adapterSettings(this.rows.get(n))).sort();
    const stamps = JSON.stringify(models);
    const diff: SnapshotDiff = { providers: changed, models: stamps !== this.modelStamps };
    this.rows = rows;
    this.providerViews = new Map(providers.map((r) => [r.name, providerView(r)]));
    if (diff.models) {
      const frozen = models.map(({ updatedAt: _updated, ...m }) => Object.freeze(m));
      this.modelMap = new Map(frozen.map((m) => [m.name, m]));
      this.modelList = Object.freeze(frozen) as CatalogModel[];
      this.modelStamps = stamps;
    }
    for (const [name, entry] of this.plainKeys) if (rows.get(name)?.apiKeyEnc !== entry.enc) this.plainKeys.delete(name);
    return diff;
  }
}
