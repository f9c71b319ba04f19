import type { ChatCompletion } from '../../kernel/index.js';
import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { fromVendorReply } from '../openai-compatible/transform.js';
import { deepseekError } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * DeepSeek counts cached input in `prompt_cache_hit_tokens` (fixture deepseek-tool-call.json);
 * `prompt_tokens` already includes it. Mapped to `prompt_tokens_details.cached_tokens` when the
 * standard field is missing. `reasoning_content` (messages and deltas) is not part of the Chat
 * Completions format and is dropped; its tokens are already inside `completion_tokens`.
 */
export function fixDeepSeekUsage(json: Json): Json {
  const u = json.usage;
  if (!isObject(u) || typeof u.prompt_cache_hit_tokens !== 'number') return json;
  if (isObject(u.prompt_tokens_details) && typeof u.prompt_tokens_details.cached_tokens === 'number') return json;
  return { ...json, usage: { ...u, prompt_tokens_details: { cached_tokens: u.prompt_cache_hit_tokens } } };
}

export function fromDeepSeekReply(json: unknown): ChatCompletion | undefined {
  return fromVendorReply(isObject(json) ? fixDeepSeekUsage(json) : json);
}

export const deepseekQuirks: VendorQuirks = { reply: fromDeepSeekReply, streamEvent: chunkFixer(fixDeepSeekUsage), error: deepseekError };
