import { defineToken } from '../container/tokens.js';
import type { ChatRequest, RequestNeeds } from './chat.js';

/**
 * The tokenizer the budgets plugin bounds holds with, shared so that dispatch counts with the same
 * one: the context-window check before a call, and the output of a reply that broke off without a
 * usage report (never a character estimate). Counts carry no margin.
 *
 * @example
 * const counter = ctx.optional(TokenCounterToken);
 * counter?.text('Hello there'); // 2
 */
export interface TokenCounter {
  /** Tokens of a text, as the tokenizer counts them (a very long text: bounded by its size). */
  text(text: string): number;
  /** Tokens of a request's input: messages, tool definitions, attachments and framing (`measure().tokens`). */
  input(chat: Pick<ChatRequest, 'messages' | 'tools'>): number;
  /** Everything known of a request's input tokens, made once per message list in linear time. */
  measure(chat: Pick<ChatRequest, 'messages' | 'tools'>, needs?: RequestNeeds): InputMeasure;
}

/**
 * A request's input tokens as far as a bounded amount of tokenizer work can tell (budgets
 * README "Hold accuracy"): a long text may be bounded by its size rather than counted.
 */
export interface InputMeasure {
  /** The input certainly holds at least this many tokens: only above it is a request refused as too long. */
  lower: number;
  /** The count with framing, no margin: exact where tokenized, one token per UTF-8 byte where bounded by size. */
  tokens: number;
  /** The hold's upper bound: the count with the vendors' margin. */
  bound: number;
}

export const TokenCounterToken = defineToken<TokenCounter>('budgets.token-counter');

/**
 * What an adapter may tell the dispatcher about a failure, as properties on the GatewayError it
 * throws (never in `svc`). Without them the dispatcher treats `upstream_unavailable` as transient
 * and reads the wait from `svc.retry_after_seconds`.
 */
export interface UpstreamFailureHints {
  /** Worth another attempt on the same model (408, 409, 429, 5xx, refused or reset connection, deadline). */
  transient?: boolean;
  /** The vendor's requested wait before another attempt (Retry-After, retry-after-ms). */
  retryAfterMs?: number;
  /** A connect, first-byte, first-token, idle or total deadline passed (README "When the upstream fails"). */
  deadline?: boolean;
}

/**
 * Per-replica counts of upstream faults the dispatcher handled, for the diagnostics page. They
 * start at zero with the process.
 *
 * @example
 * ctx.optional(DispatchStatsToken)?.snapshot().overruns
 */
export interface DispatchStats {
  snapshot(): {
    /** Attempts repeated on the same model after a transient failure. */
    retries: number;
    /** Requests answered by a later candidate than the first. */
    fallbacks: number;
    /** Replies whose reported output exceeded what their hold covered (budget.overrun). */
    overruns: number;
    /** Output tokens reported beyond the holds, summed. */
    overrunTokens: number;
    /** Streams cut with finish_reason `length` once their output reached the hold. */
    cutAtHold: number;
    /** Unparsable stream events skipped. */
    malformedEvents: number;
    /** Streams that broke off after their first chunk. */
    interrupted: number;
  };
  /** Cool-downs begun since start, by provider (a model skipped after repeated transient failures). */
  cooldownsBegun(): ReadonlyMap<string, number>;
  /** The models cooling down now (skipped while another candidate remains). */
  coolingModels(): string[];
}

export const DispatchStatsToken = defineToken<DispatchStats>('chat-api.dispatch-stats');
