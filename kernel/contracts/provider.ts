import { defineToken } from '../container/tokens.js';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from './chat.js';
import type { CatalogModel, ProviderCheckStatus } from './catalog.js';
import type { RequestSignal } from '../upstream/http.js';

/** Timeouts of upstream calls (config of the `providers` plugin). */
export interface UpstreamTimeouts {
  connectMs: number;
  /** From sending a stream request to the response headers. */
  firstByteMs: number;
  /** Longest gap between two stream chunks. */
  idleMs: number;
  /** From the response headers to the first stream chunk (reasoning models need longer); default firstByteMs. */
  firstTokenMs?: number;
  /** A whole (non-stream) reply, from sending the request to the end of its body; default firstByteMs. */
  totalMs?: number;
}

/** What an adapter is built from: one provider row (or a built-in's defaults). */
export interface ProviderSettings {
  name: string;
  /** API base including its path, no trailing slash, without /chat/completions. */
  address: string;
  apiKey?: string;
  timeouts: UpstreamTimeouts;
}

/** One upstream call. `request.maxTokens` is already resolved (the client's, or the model's output limit). */
export interface UpstreamCall {
  model: CatalogModel;
  request: ChatRequest & { maxTokens: number };
  /** The request's abort (the client left, a stop): `abortSignal` where an API needs an AbortSignal. */
  signal: RequestSignal;
  /** Deadlines for this call (the model's overrides over the provider's); unset fields use the adapter's own. */
  deadlines?: Partial<UpstreamTimeouts>;
  /** Called for each unparsable stream event the adapter skipped (counted in the trace, never logged with its text). */
  onMalformed?: () => void;
}

/**
 * A vendor adapter (ARCHITECTURE.md §6): turns the normalized request into the vendor's wire call,
 * and the vendor's reply, chunks and errors back into Chat Completions objects and GatewayErrors
 * with the spec's codes. Replies and chunks must validate against the wire schema (fill
 * `refusal: null` and `logprobs: null` where a server omits them); they carry the provider's own
 * model id, which the dispatcher rewrites.
 */
export interface ProviderAdapter {
  /** A whole reply. Throws a GatewayError (context_length_exceeded, provider_billing, …). */
  complete(call: UpstreamCall): Promise<ChatCompletion>;
  /**
   * A stream. Resolves once the first event arrived, so every error before it (a refusal status,
   * or an error event in place of the first chunk) is thrown as a GatewayError while the
   * dispatcher can still fall back; the iterator then yields chunks as they arrive and throws
   * GatewayError('stream_interrupted') if the stream breaks off or goes idle too long.
   * Usage is requested from the provider whenever it supports it, for accounting.
   */
  stream(call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>>;
  /** The free list-models check: Connected, Could not connect, Key refused. */
  check(signal: AbortSignal): Promise<Exclude<ProviderCheckStatus, 'unchecked'>>;
  /**
   * The model ids the provider's own list-models call answers with (for importing them); absent
   * where a vendor has no such list. Throws a GatewayError (provider_auth_failed, upstream_unavailable).
   */
  listModels?(signal: AbortSignal): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A built-in hosted provider: its fixed name and default address. The catalog lists it without a
 * row, takes its name, and owns its priced models (plugins/catalog/catalogue/); the address can be
 * overridden by the catalog's `builtInAddresses` config (tests, air-gapped proxies).
 */
export interface BuiltInProvider {
  name: string;
  address: string;
}

/**
 * A vendor adapter factory, default-exported from providers/<vendor>/index.ts. The providers
 * plugin finds them by folder; admin-added providers all use `openai-compatible`.
 *
 * @example
 * export default defineProvider({ vendor: 'openai-compatible', create: (s) => new OpenAICompatible(s) });
 */
export interface ProviderFactory {
  vendor: string;
  builtIn?: BuiltInProvider;
  create(settings: ProviderSettings): ProviderAdapter;
}

export function defineProvider(factory: ProviderFactory): ProviderFactory {
  return factory;
}

/** Adapters by provider name, built from the catalog's providers and kept warm (one pool each). */
export interface ProviderRegistry {
  vendors(): string[];
  factory(vendor: string): ProviderFactory | undefined;
  /**
   * The adapter for a provider (throws GatewayError provider_not_configured when it does not exist,
   * or is built-in and has no key for the workspace). With `workspaceId`, a built-in provider for
   * which that workspace set its own key gets an adapter built with that key.
   */
  adapter(providerName: string, workspaceId?: string): ProviderAdapter;
  /** Builds a throwaway adapter for a check before a provider is saved. */
  probe(vendor: string, settings: Omit<ProviderSettings, 'timeouts'>): ProviderAdapter;
  /** Drops a cached adapter after its provider changed or was removed. */
  invalidate(providerName: string): void;
}

export const ProviderRegistryToken = defineToken<ProviderRegistry>('providers.registry');
