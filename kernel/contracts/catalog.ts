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
  /** A key is stored (for a built-in provider: the instance-wide one; use `configured()` for a workspace's view). */
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
  /**
   * The decrypted provider key; throws GatewayError credential_key_unavailable when its version is
   * missing. For a built-in provider and a `workspaceId`, that workspace's own key wins over the
   * instance-wide one.
   */
  providerKey(name: string, workspaceId?: string): string | undefined;
  /**
   * Whether requests from this workspace can use the provider: it exists and, when built-in, has a
   * key (the workspace's own or the instance-wide one). SPEC.md: otherwise its models are not
   * listed and answer 422 provider_not_configured.
   */
  configured(name: string, workspaceId?: string): boolean;
  /** True when this workspace set its own key for a built-in provider (the registry keeps a separate adapter for it). */
  hasWorkspaceKey(name: string, workspaceId: string): boolean;
  /** Called after the snapshot changed (on any replica); `provider` names a changed provider. */
  onChange(listener: (provider?: string) => void): void;
}

export const CatalogToken = defineToken<CatalogService>('catalog.service');
