import type { ChatCompletion } from '../../kernel/index.js';
import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { fromVendorReply } from '../openai-compatible/transform.js';
import { xaiCheckRefused, xaiError } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * xAI's `completion_tokens` excludes reasoning: `total_tokens` = prompt + completion + reasoning
 * (fixture xai-text.json: 165 + 2 + 125 = 292). Reasoning is charged as output (SPEC.md), so it is
 * added to `completion_tokens`. Only when the totals show it is missing, so a fixed API is not
 * counted twice.
 */
export function fixXaiUsage(json: Json): Json {
  const u = json.usage;
  if (!isObject(u) || !isObject(u.completion_tokens_details)) return json;
  const reasoning = u.completion_tokens_details.reasoning_tokens;
  const prompt = Number(u.prompt_tokens ?? 0);
  const completion = Number(u.completion_tokens ?? 0);
  if (typeof reasoning !== 'number' || reasoning <= 0 || Number(u.total_tokens ?? 0) < prompt + completion + reasoning) return json;
  return { ...json, usage: { ...u, completion_tokens: completion + reasoning } };
}

export function fromXaiReply(json: unknown): ChatCompletion | undefined {
  return fromVendorReply(isObject(json) ? fixXaiUsage(json) : json);
}

export const xaiQuirks: VendorQuirks = { reply: fromXaiReply, streamEvent: chunkFixer(fixXaiUsage), error: xaiError, check: { refused: xaiCheckRefused } };
