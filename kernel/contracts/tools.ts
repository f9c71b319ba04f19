import type { ProviderAdapter } from './provider.js';

/**
 * A server-side tool loop the `conversation` phase attached to a request (the tools plugin).
 * The dispatch phase hands every upstream adapter it is about to call to `wrap`; the wrapped
 * adapter runs the loop inside one `complete` or one `stream` call: it calls the model, runs
 * the workspace tools the model asked for, calls the model again, and returns the final reply
 * (whole), or yields one continuous stream. Retries and fallbacks of the attempt loop still apply
 * while nothing reached the client.
 *
 * The adapter given to `wrap` applies dispatch's per-call rules to each call made through it
 * (an attempt span, the stream cut at the call's max tokens with finish_reason `length`, the
 * call's usage added to `outcome.modelCalls`); the loop asks `state.hold.cover` before each call,
 * so every call is held against the budgets.
 *
 * @example
 * // plugins/chat-api/attempts.ts
 * const base = env.registry.adapter(model.provider, workspaceId);
 * const adapter = ctx.state.toolLoop?.wrap(base) ?? base;
 */
export interface ToolLoop {
  wrap(adapter: ProviderAdapter): ProviderAdapter;
}

/**
 * One workspace tool call of a request, for its trace: the tracing plugin writes one `tool.call`
 * span per entry (and exports it). Ids, names, sizes and times only: never the arguments or the
 * result.
 *
 * @example
 * (ctx.state.toolCalls ??= []).push({ serverId, tool: 'lookup', functionName: 'files__lookup', outcome: 'ok', argumentsBytes: 14, start, end, recordId });
 */
export interface ToolCallSpan {
  serverId: string;
  /** The tool's name on its server. */
  tool: string;
  /** The function name the model used for it in this request. */
  functionName: string;
  /** As in the tool call record: ok, error, denied (origin not allowed), pending, refused. */
  outcome: 'ok' | 'error' | 'denied' | 'pending' | 'approved' | 'refused';
  /** UTF-8 bytes of the arguments text. */
  argumentsBytes: number;
  /** ms since the request began. */
  start: number;
  end: number;
  /** The tool call record (`tc_…`), when one was written for it in this request. */
  recordId?: string;
  approvalId?: string | null;
}

declare module './request-state.js' {
  interface RequestState {
    /** conversation: the workspace tool loop, when the request's conversation offers workspace tools. */
    toolLoop?: ToolLoop;
    /** dispatch (the tools plugin): each workspace tool call the loop made, for the trace. */
    toolCalls?: ToolCallSpan[];
  }
}
