import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { groqError } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Groq reports a stream's usage in `x_groq.usage` on the finish chunk (older deployments only
 * there, newer ones also in `usage`, fixture groq-text.chunks.txt): take it from `x_groq` when the
 * standard field is missing. Groq's timing fields (`queue_time`, …) are dropped by the reader.
 */
export function fixGroqChunk(json: Json): Json {
  const extra = isObject(json.x_groq) ? json.x_groq : undefined;
  if (isObject(json.usage) || !isObject(extra?.usage)) return json;
  return { ...json, usage: extra.usage };
}

export const groqQuirks: VendorQuirks = { streamEvent: chunkFixer(fixGroqChunk), error: groqError };
