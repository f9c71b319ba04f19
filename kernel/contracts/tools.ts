import type { ProviderAdapter } from './provider.js';

/**
 * A server-side tool loop the `conversation` phase attached to a request (the tools plugin).
 * The dispatch phase hands every upstream adapter it is about to call to `wrap`; the wrapped
 * adapter runs the loop inside one `complete` or one `stream` call: it calls the model, runs
 * the workspace tools the model asked for, calls the model again, and returns the final reply
 * (whole), or yields one continuous stream. Retries and fallbacks of the attempt loop still apply
 * to the first model call of the loop (nothing reached the client before it).
 *
 * @example
 * // plugins/chat-api/attempts.ts
 * const base = env.registry.adapter(model.provider, workspaceId);
 * const adapter = ctx.state.toolLoop?.wrap(base) ?? base;
 */
export interface ToolLoop {
  wrap(adapter: ProviderAdapter): ProviderAdapter;
}

declare module './request-state.js' {
  interface RequestState {
    /** conversation: the workspace tool loop, when the request's conversation offers workspace tools. */
    toolLoop?: ToolLoop;
  }
}
