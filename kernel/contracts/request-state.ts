import type { Principal } from './identity.js';
import type { ChatRequest, RequestNeeds, Usage } from './chat.js';
import type { CatalogModel } from './catalog.js';
import type { ErrorCode } from '../errors/table.js';

export type RoutingRule = 'explicit' | 'sticky' | 'pinned' | 'signal' | 'classified' | 'default';

/** How the model was chosen; written to the x-svc-routing-* headers. */
export interface Selection {
  rule: RoutingRule;
  route?: string;
  reason?: string;
  confidence?: number;
}

/** The hold a request reserved (integer micro-USD); null when the model is free. */
export interface HoldRecord {
  id: string;
  amountMicroUsd: number;
  release(chargeMicroUsd: number, outcome: 'settled' | 'refused'): Promise<void>;
}

export interface Outcome {
  status: number;
  errorCode: ErrorCode | null;
  /** Upstream usage, or what was produced before a reply broke off. */
  usage: Usage | null;
  /** True once anything was sent to the provider. */
  sent: boolean;
  firstTokenMs: number | null;
  clientClosed: boolean;
}

/**
 * What the pipeline phases decide, carried in the RequestContext. Each field is written by the
 * phase named beside it and read by later ones.
 */
export interface RequestState {
  principal?: Principal; // authenticate
  chat?: ChatRequest; // validate
  needs?: RequestNeeds; // validate
  selection?: Selection; // select
  candidates: CatalogModel[]; // select, narrowed by capabilities and hold
  model?: CatalogModel; // hold (or select when no budget plugin runs)
  hold?: HoldRecord | null; // hold
  fallbackFrom?: { model: string; scope: string }; // hold
  outcome?: Outcome; // dispatch
}
