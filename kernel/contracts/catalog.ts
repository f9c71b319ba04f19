import { defineToken } from '../container/tokens.js';

/** A model as the catalog holds it; prices are integer micro-USD per million tokens. */
export interface CatalogModel {
  /** `<provider>:<provider's own id>`. */
  name: string;
  provider: string;
  upstreamId: string;
  displayName: string;
  contextWindow: number;
  outputLimit: number;
  inputMicroUsdPerMTok: number | null;
  outputMicroUsdPerMTok: number | null;
  canReadImages: boolean;
  canReadPdf: boolean;
  canCallTools: boolean;
  createdAt: Date;
  /** Deadlines of this model's calls over its provider's (reasoning models need long first tokens); absent: the provider's. */
  deadlines?: Partial<import('./provider.js').UpstreamTimeouts>;
}

export type ProviderCheckStatus = 'connected' | 'could_not_connect' | 'key_refused' | 'unchecked';

export interface CatalogProvider {
  name: string;
  /** Adapter vendor: `openai-compatible` for every admin-added provider. */
  vendor: string;
  address: string;
  builtIn: boolean;
  hasKey: boolean;
  check: ProviderCheckStatus;
  checkedAt: Date | null;
}

/**
 * The in-memory snapshot of providers and models that the request path reads; refreshed on change.
 *
 * @example
 * const model = catalog.model('local:llama3:8b'); // undefined when unknown
 */
export interface CatalogService {
  model(name: string): CatalogModel | undefined;
  models(): CatalogModel[];
  provider(name: string): CatalogProvider | undefined;
  providers(): CatalogProvider[];
  /** The decrypted provider key; throws GatewayError credential_key_unavailable when its version is missing. */
  providerKey(name: string): string | undefined;
  /** Called after the snapshot changed (on any replica); `provider` names a changed provider. */
  onChange(listener: (provider?: string) => void): void;
}

export const CatalogToken = defineToken<CatalogService>('catalog.service');
