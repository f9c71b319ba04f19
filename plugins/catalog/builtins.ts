import type { CatalogModel, CatalogueEntry, CatalogueList, ProviderRegistry } from '../../kernel/index.js';
import catalogue from './catalogue/models.json' with { type: 'json' };
import { normalizeAddress } from './names.js';

/** A built-in provider as the catalog serves it: its vendor adapter, and the address in use. */
export interface BuiltInEntry {
  name: string;
  vendor: string;
  address: string;
}

const catalogueEntries = catalogue.providers as Record<string, CatalogueEntry[]>;

/** When the catalogue was built: the `created` time of its models on GET /v1/models. */
const builtAt = new Date(`${catalogue.built}T00:00:00Z`);

function catalogModel(provider: string, e: CatalogueEntry, createdAt = builtAt): CatalogModel {
  return Object.freeze({
    name: `${provider}:${e.id}`,
    provider,
    upstreamId: e.id,
    displayName: e.id,
    contextWindow: e.context_window,
    outputLimit: e.output_limit,
    inputMicroUsdPerMTok: e.input_micro_usd_per_mtok,
    outputMicroUsdPerMTok: e.output_micro_usd_per_mtok,
    canReadImages: e.images,
    canReadPdf: e.pdf,
    canCallTools: e.tools,
    createdAt,
  });
}

/**
 * The built-in hosted providers: every vendor factory found by the providers plugin that declares
 * `builtIn`, with its address (or the `builtInAddresses` override from config) and the catalogue's
 * priced models for its name. No hand-kept list: a new vendor folder with `builtIn` appears here.
 */
export class BuiltIns {
  readonly providers: ReadonlyMap<string, BuiltInEntry>;
  private modelsByProvider = new Map<string, readonly CatalogModel[]>();

  constructor(registry: ProviderRegistry | undefined, overrides: Record<string, string>) {
    const found = new Map<string, BuiltInEntry>();
    for (const vendor of registry?.vendors() ?? []) {
      const builtIn = registry!.factory(vendor)?.builtIn;
      if (!builtIn) continue;
      const override = overrides[builtIn.name];
      const address = override === undefined ? builtIn.address : normalizeAddress(override, `plugins.catalog.config.builtInAddresses.${builtIn.name}`);
      found.set(builtIn.name, { name: builtIn.name, vendor, address });
    }
    this.providers = found;
    this.useFeed(undefined);
  }

  /**
   * Puts a signed feed list (catalogue-feed plugin) over the committed catalogue: each provider it
   * names gets exactly the list's models; the others keep the committed ones. `undefined` returns
   * to the committed catalogue. Providers that are not installed built-ins are ignored.
   */
  useFeed(list: Pick<CatalogueList, 'providers' | 'issuedAt'> | undefined): void {
    const next = new Map<string, readonly CatalogModel[]>();
    const issued = list ? new Date(list.issuedAt) : builtAt;
    for (const name of this.providers.keys()) {
      const fromFeed = list && Object.hasOwn(list.providers, name) ? list.providers[name] : undefined;
      next.set(name, fromFeed ? fromFeed.map((e) => catalogModel(name, e, issued)) : (catalogueEntries[name] ?? []).map((e) => catalogModel(name, e)));
    }
    this.modelsByProvider = next;
  }

  has(name: string): boolean {
    return this.providers.has(name);
  }

  /** The catalogue's models of every installed built-in provider, before admin overrides. */
  models(): CatalogModel[] {
    return [...this.modelsByProvider.values()].flat();
  }

  model(name: string): CatalogModel | undefined {
    const provider = name.slice(0, Math.max(0, name.indexOf(':')));
    return this.modelsByProvider.get(provider)?.find((m) => m.name === name);
  }
}
