import { createHash } from 'node:crypto';
import type { UpstreamCall } from '../../kernel/index.js';
import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { toVendorRequest } from '../openai-compatible/transform.js';
import { mistralError } from './errors.js';

type Json = Record<string, unknown>;
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Mistral accepts only tool-call ids of exactly 9 letters and digits (its own, e.g. `gSIMJiOkT`);
 * a history with another vendor's ids (`call_abc…`) is refused. Other ids are mapped to 9
 * characters derived from a hash, so a call and its `tool` result still match each other.
 */
export function mistralToolCallId(id: string): string {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  return [...digest.subarray(0, 9)].map((b) => alphabet[b % alphabet.length]).join('');
}

/**
 * Mistral's request: no `stream_options` (422 extra_forbidden; it reports usage in the last chunk
 * unasked), no `name` on messages other than tool results (422 extra_forbidden on
 * `messages.N.user.name`), tool-call ids in its own 9-character form.
 */
export function toMistralRequest(call: Pick<UpstreamCall, 'model' | 'request'>): Json {
  const { stream_options: _unsupported, ...body } = toVendorRequest(call);
  body.messages = (body.messages as Json[]).map((m) => {
    const { name, ...rest } = m;
    const out: Json = m.role === 'tool' && name !== undefined ? { ...rest, name } : rest;
    if (typeof out.tool_call_id === 'string') out.tool_call_id = mistralToolCallId(out.tool_call_id);
    if (Array.isArray(out.tool_calls)) out.tool_calls = (out.tool_calls as Json[]).map((t) => ({ ...t, id: mistralToolCallId(String(t.id)) }));
    return out;
  });
  return body;
}

/** Streamed tool calls come whole, without `index` and `type` (fixture mistral-tool-call): add them as the wire format requires. */
export function fixMistralChunk(json: Json): Json {
  if (!Array.isArray(json.choices)) return json;
  const choices = (json.choices as Json[]).map((c) => {
    const delta = c.delta as Json | undefined;
    if (!delta || !Array.isArray(delta.tool_calls)) return c;
    const tool_calls = (delta.tool_calls as Json[]).map((t, i) => ({ ...t, index: typeof t.index === 'number' ? t.index : i, type: 'function' }));
    return { ...c, delta: { ...delta, tool_calls } };
  });
  return { ...json, choices };
}

export const mistralQuirks: VendorQuirks = { request: toMistralRequest, streamEvent: chunkFixer(fixMistralChunk), error: mistralError };
