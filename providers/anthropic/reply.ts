import { oneChoiceCompletion, vendorCount, usageOf, type ChatCompletion, type FinishReason, type ToolCall, type Usage } from '../../kernel/index.js';

/** Anthropic Messages reply → Chat Completions (pure). */

type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * stop_reason → finish_reason. `pause_turn` (a server tool paused the turn) ends this reply like
 * `end_turn`; `model_context_window_exceeded` ran out of room like `max_tokens`.
 */
export function finishOf(stop: unknown): FinishReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}

/**
 * Anthropic usage → Chat Completions usage. Input is split three ways (uncached, read from the
 * cache, written to it) and all of it is prompt; cache reads are the cached tokens (reported when there were any). Thinking is
 * already inside `output_tokens`; Anthropic does not report it apart.
 */
export function usageFrom(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  const cached = vendorCount(u.cache_read_input_tokens);
  return usageOf(vendorCount(u.input_tokens) + cached + vendorCount(u.cache_creation_input_tokens), vendorCount(u.output_tokens), cached > 0 ? cached : undefined);
}

/** Reads a `tool_use` block's input as the JSON `arguments` string. */
export const argumentsText = (input: unknown): string => JSON.stringify(isObject(input) ? input : {});

/**
 * A whole Messages reply as a ChatCompletion, or undefined when the JSON is not a message.
 * Text blocks are joined; thinking blocks are not content (their tokens are in usage).
 */
export function fromAnthropicReply(json: unknown): ChatCompletion | undefined {
  if (!isObject(json) || json.type !== 'message' || !Array.isArray(json.content)) return undefined;
  const blocks = json.content.filter(isObject);
  const text = blocks.filter((b) => b.type === 'text').map((b) => str(b.text) ?? '').join('');
  const calls: ToolCall[] = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: str(b.id) ?? '', type: 'function', function: { name: str(b.name) ?? '', arguments: argumentsText(b.input) } }));
  const head = { id: str(json.id) ?? '', model: str(json.model) ?? '', created: Math.floor(Date.now() / 1000) };
  return oneChoiceCompletion(head, text === '' && calls.length > 0 ? null : text, calls, finishOf(json.stop_reason), usageFrom(json.usage));
}
