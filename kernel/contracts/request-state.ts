import type { Principal } from './identity.js';
import type { ChatRequest, RequestNeeds, Usage } from './chat.js';
import type { CatalogModel } from './catalog.js';
import type { ErrorCode } from '../errors/table.js';
import type { ReserveLine } from '../cache/port.js';

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

/**
 * A counter line an `admit` hook asks to reserve together with the budget hold, so admission and
 * hold cost one cache round trip (ARCHITECTURE.md §8). Whoever reserves it (the budgets `hold`
 * hook, or the asking plugin's own fallback `hold` hook when budgets is off) removes it from
 * `RequestState.reservations`, undoes it if a later phase fails, and answers a refusal with
 * `refusal(…)`.
 *
 * @example
 * (ctx.state.reservations ??= []).push({ owner: 'rate-limit', line, refusal: (_c, ttlMs) => new GatewayError('rate_limited', '…') });
 */
export interface PendingReservation {
  /** The plugin that asked, for diagnostics. */
  owner: string;
  line: ReserveLine;
  /** The error to end the request with when this line does not fit; `ttlMs` is the counter's remaining expiry (-1 none). */
  refusal(current: number, ttlMs: number): Error;
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
  /** Each upstream attempt in order (dispatch); the trace writes one span per attempt. */
  attempts?: AttemptRecord[];
  /** Unparsable stream events the adapter skipped. */
  malformedEvents?: number;
  /** Output tokens the provider reported beyond what the hold covered (budget.overrun). */
  overrunTokens?: number;
  /** The model id the provider said answered, before the reply is relabelled (trace export). */
  responseModel?: string;
  /** finish_reason of each choice, in order (trace export). */
  finishReasons?: string[];
}

/** One upstream attempt of the dispatch phase: which model, when, and how it ended. */
export interface AttemptRecord {
  model: string;
  provider: string;
  /** ms since the request began. */
  start: number;
  end: number;
  /** `ok`, or the error code the attempt ended with (`skipped_context`, `skipped_cooldown` for candidates not called). */
  outcome: string;
  /** True when the attempt was a retry of the same model. */
  retry: boolean;
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
  reservations?: PendingReservation[]; // admit, taken by hold
  outcome?: Outcome; // dispatch
  /**
   * Set before dispatch by the recording plugin for a workspace that turned recording on; only
   * then does dispatch keep the reply's text in `reply` (stored apart from spans, never logged).
   */
  recordReply?: boolean;
  reply?: string; // dispatch, when recordReply
}
