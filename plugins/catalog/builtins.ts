import type { CatalogModel, ProviderRegistry } from '../../kernel/index.js';
import catalogue from './catalogue/models.json' with { type: 'json' };
import { normalizeAddress } from './names.js';

/** One priced model of the committed catalogue (scripts/build-price-catalogue.mjs writes it). */
export interface CatalogueEntry {
  id: string;
  context_window: number;
  output_limit: number;
  input_micro_usd_per_mtok: number | null;
  output_micro_usd_per_mtok: number | null;
  images: boolean;
  pdf: boolean;
  tools: boolean;
}

/** A built-in provider as the catalog serves it: its vendor adapter, and the address in use. */
export interface BuiltInEntry {
  name: string;
  vendor: string;
  address: string;
}

const catalogueEntries = catalogue.providers as Record<string, CatalogueEntry[]>;

/** When the catalogue was built: the `created` time of its models on GET /v1/models. */
const builtAt = new Date(`${catalogue.built}T00:00:00Z`);

function catalogModel(provider: string, e: CatalogueEntry): CatalogModel {
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
    createdAt: builtAt,
  });
}

/**
 * The built-in hosted providers: every vendor factory found by the providers plugin that declares
 * `builtIn`, with its address (or the `builtInAddresses` override from config) and the catalogue's
 * priced models for its name. No hand-kept list: a new vendor folder with `builtIn` appears here.
 */
export class BuiltIns {
  readonly providers: ReadonlyMap<string, BuiltInEntry>;
  private readonly modelsByProvider = new Map<string, readonly CatalogModel[]>();

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
    for (const name of found.keys()) this.modelsByProvider.set(name, (catalogueEntries[name] ?? []).map((e) => catalogModel(name, e)));
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
