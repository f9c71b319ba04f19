import type { Principal } from './identity.js';
import type { ChatRequest, RequestNeeds, Usage } from './chat.js';
import type { CatalogModel } from './catalog.js';
import type { ChargedCall } from './pricing.js';
import type { ErrorCode } from '../errors/table.js';
import type { ReserveLine } from '../cache/port.js';

export type RoutingRule = 'explicit' | 'sticky' | 'pinned' | 'signal' | 'classified' | 'default';

/** How the model was chosen; written to the x-svc-routing-* headers. */
export interface Selection {
  rule: RoutingRule;
  route?: string;
  reason?: string;
  confidence?: number;
  /** How long the classifier took, when this request asked it (metrics). */
  classifierMs?: number;
}

/** The hold a request reserved (integer micro-USD); null when the model is free. */
export interface HoldRecord {
  id: string;
  /** What is held now: the first call's hold, plus what `cover` added for later calls. */
  readonly amountMicroUsd: number;
  release(chargeMicroUsd: number, outcome: 'settled' | 'refused'): Promise<void>;
  /**
   * Before a further model call of the same request (the tools plugin's loop calls it before each
   * of its calls): makes sure the hold covers what the request was charged so far plus this
   * call's own hold (input bound of `call.request` and its max tokens, priced on `call.model`, as
   * the first hold was). When it does not, the difference is reserved against every cap the hold
   * is on, in one cache call; the grown hold is settled and released with the request's.
   * Throws GatewayError `budget_exceeded` (svc: the cap's scope, its room, the amount needed)
   * when a cap has no room, `budget_unavailable` when the budgets cannot be checked.
   *
   * @example
   * await ctx.state.hold?.cover({ model: call.model, request: call.request });
   */
  cover(call: { model: CatalogModel; request: ChatRequest & { maxTokens: number } }): Promise<void>;
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
  /** Upstream usage, or what was produced before a reply broke off: the sum over `modelCalls`. */
  usage: Usage | null;
  /**
   * Each model call that produced output, in order, with the usage it is charged for (dispatch
   * adds one as each call ends, whatever happens to the reply after it). What settle charges:
   * `requestChargeMicroUsd(modelCalls)`.
   */
  modelCalls?: ChargedCall[];
  /** True once anything was sent to the provider. */
  sent: boolean;
  firstTokenMs: number | null;
  clientClosed: boolean;
  /** Each upstream model call in order (dispatch); the trace writes one span per call. */
  attempts?: AttemptRecord[];
  /** Unparsable stream events the adapter skipped. */
  malformedEvents?: number;
  /** Output tokens the providers reported beyond what the holds covered (budget.overrun), summed over calls. */
  overrunTokens?: number;
  /** The model id the provider said answered, before the reply is relabelled (trace export). */
  responseModel?: string;
  /** finish_reason of each choice, in order (trace export). */
  finishReasons?: string[];
}

/**
 * One upstream model call of the dispatch phase (each attempt, and each call a tool loop makes
 * within one): which model, when, and how it ended.
 */
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
  runningSlot?: number; // validate (identity: the request's place among those running on this replica)
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
